#include "roofline/profiler/short_names.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <vector>

#include "roofline/core/strings.hpp"

namespace roofline::prof {

std::string demangle(std::string_view name) {
  if (!starts_with(name, "_Z")) return std::string(name);
  std::string mangled(name);
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !out) {
    std::free(out);
    return mangled;
  }
  std::string r(out);
  std::free(out);
  return r;
}

namespace {

void erase_all(std::string& s, std::string_view what) {
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p)) s.erase(p, what.size());
}

// Removes every parenthesised group (parameter lists inside lambda names).
std::string drop_parens(std::string_view s) {
  std::string out;
  int depth = 0;
  for (char c : s) {
    if (c == '(')
      ++depth;
    else if (c == ')')
      depth = depth > 0 ? depth - 1 : 0;
    else if (depth == 0)
      out += c;
  }
  return out;
}

// "a::b::c<x>" -> "c<x>": the last component before any template argument list.
std::string unqualified(std::string_view s) {
  size_t lt = s.find('<');
  std::string_view head = s.substr(0, lt);
  size_t colon = head.rfind("::");
  if (colon == std::string_view::npos) return std::string(s);
  return std::string(s.substr(colon + 2));
}

// "Array<char*, 2>" -> "Array<…>"
std::string collapse_nested(std::string_view s) {
  size_t lt = s.find('<');
  if (lt == std::string_view::npos) return std::string(s);
  size_t gt = s.rfind('>');
  if (gt == std::string_view::npos || gt < lt) return std::string(s);
  return std::string(s.substr(0, lt)) + "<\xE2\x80\xA6>" + std::string(s.substr(gt + 1));
}

std::string simplify_argument(std::string_view raw) {
  std::string a = trim(raw);
  erase_all(a, "(anonymous namespace)::");
  size_t lambda = a.find("::{lambda");
  if (lambda != std::string::npos) {
    // PyTorch's functors are lambdas: name them by the function defining them.
    std::string owner = drop_parens(std::string_view(a).substr(0, lambda));
    return unqualified(trim(owner)) + "::lambda";
  }
  a = drop_parens(a);
  erase_all(a, " const");
  return unqualified(collapse_nested(trim(a)));
}

// Splits "x, y<a, b>, z" at the commas outside brackets.
std::vector<std::string> split_arguments(std::string_view s) {
  std::vector<std::string> out;
  int angle = 0, paren = 0, brace = 0;
  size_t begin = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '<')
      ++angle;
    else if (c == '>')
      --angle;
    else if (c == '(')
      ++paren;
    else if (c == ')')
      --paren;
    else if (c == '{')
      ++brace;
    else if (c == '}')
      --brace;
    else if (c == ',' && angle == 0 && paren == 0 && brace == 0) {
      out.emplace_back(s.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  out.emplace_back(s.substr(begin));
  return out;
}

}  // namespace

std::string short_kernel_name(std::string_view name, size_t width) {
  std::string s = demangle(name);
  if (starts_with(s, "void ")) s.erase(0, 5);
  // Drop the parameter list: the parenthesised group that ends the name.
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')')
        ++depth;
      else if (s[i] == '(' && --depth == 0) {
        s.erase(i);
        break;
      }
    }
  }
  erase_all(s, "(anonymous namespace)::");
  std::string result = s;
  // Template arguments of the kernel itself (the first '<' outside parentheses).
  size_t lt = std::string::npos;
  int paren = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(')
      ++paren;
    else if (s[i] == ')')
      --paren;
    else if (s[i] == '<' && paren == 0) {
      lt = i;
      break;
    }
  }
  size_t gt = s.rfind('>');
  if (lt != std::string::npos && gt != std::string::npos && gt > lt) {
    std::vector<std::string> args = split_arguments(std::string_view(s).substr(lt + 1, gt - lt - 1));
    std::vector<std::string> simple;
    for (const auto& a : args) simple.push_back(simplify_argument(a));
    result = s.substr(0, lt) + "<" + join(simple, ", ") + ">";
  }
  result = trim(result);
  return width > 0 ? shorten(result, width) : result;
}

std::string base_kernel_name(std::string_view name, size_t width) {
  std::string s = unqualified(short_kernel_name(name));
  return width > 0 ? shorten(s, width) : s;
}

std::string kernel_library(std::string_view name) {
  std::string d = demangle(name);
  std::string_view s = d;
  if (starts_with(s, "void ")) s.remove_prefix(5);
  auto has = [&](std::string_view p) { return s.find(p) != std::string_view::npos; };
  if (has("cutlass")) return "CUTLASS";
  // cuDNN before cuBLAS: its implicit-GEMM convolutions have "gemm" in their names.
  if (has("cudnn") || has("implicit_convolve") || has("implicit_gemm") || has("fft2d_") || has("winograd"))
    return "cuDNN";
  if (has("cublas") || has("gemv") || has("gemmk") || has("gemmSN") || has("splitKreduce") ||
      ((has("sgemm") || has("hgemm") || has("dgemm") || has("_gemm_")) && !has("::")))
    return "cuBLAS";
  if (has("nccl")) return "NCCL";
  if (starts_with(s, "at::") || starts_with(s, "c10::") || has("at::native") || has("softmax_warp") ||
      has("multi_tensor_apply") || has("nll_loss"))
    return "PyTorch";
  if (starts_with(s, "triton")) return "Triton";
  if (starts_with(s, "roofline::")) return "roofline";
  return "";
}

}  // namespace roofline::prof
