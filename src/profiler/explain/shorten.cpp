// shorten_kernel_name(): the short names the profiler's tables show.
#include <regex>

#include "roofline/core/strings.hpp"
#include "roofline/profiler/explain.hpp"
#include "src/profiler/explain/signature.hpp"
#include "src/profiler/explain/tokens.hpp"

namespace roofline::prof {

namespace {

using detail::arg_value;
using detail::identifiers;

std::string strip_qualifiers(const std::string& s) {
  static const std::regex q("(\\(anonymous namespace\\)|[A-Za-z_][A-Za-z_0-9]*)::");
  return std::regex_replace(s, q, "");
}

bool is_number(const std::string& s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (!(s[i] >= '0' && s[i] <= '9') && !(i == 0 && s[i] == '-')) return false;
  return true;
}

// Identifiers that name what an argument does (a functor, or the function
// whose lambda it is), in the order the PyTorch decoder also uses.
std::string informative(const std::string& arg) {
  for (const auto& id : identifiers(arg)) {
    if (detail::generic_pytorch_identifier(id)) continue;
    if (ends_with(id, "Functor") || ends_with(id, "_functor") || ends_with(id, "_kernel_cuda") ||
        ends_with(id, "_kernel_impl") || ends_with(id, "Ops") || ends_with(id, "Epilogue") ||
        ends_with(id, "CUDAKernelImpl") || starts_with(id, "CUDAFunctor") || starts_with(id, "launch_"))
      return id;
  }
  // Otherwise the argument's own outermost name.
  std::string outer = arg.substr(0, std::min(arg.find('<'), arg.find('(')));
  auto parts = identifiers(outer);
  return parts.empty() ? "" : parts.back();
}

std::string summarize_arg(const std::string& a) {
  std::string v = arg_value(a);
  if (is_number(v) || v == "true" || v == "false") return v;
  if (identifiers(v).size() == 1 && identifiers(v)[0] == v) return v;  // a flat name: cutlass_80_simt_sgemm_...
  std::string t = strip_qualifiers(v);
  static const char* drop[] = {"Array<",           "array<",          "TrivialOffsetCalculator",
                               "OffsetCalculator", "LoadWithoutCast", "StoreWithoutCast",
                               "LoadWithCast",     "StoreWithCast",   "char*"};
  for (const char* d : drop)
    if (starts_with(t, d)) return "";
  if (display_width(t) <= 32 && t.find('(') == std::string::npos && t.find('{') == std::string::npos) return t;
  std::string id = informative(v);
  return id.empty() ? "" : id + "\xE2\x80\xA6";
}

// A flat name (no C++ structure) too long for `width`: boilerplate tokens go
// first, then tokens from the middle, so that the kind (head) and the
// configuration (tail) both stay visible.
std::string elide_flat(const std::string& name, size_t width) {
  std::string n = name;
  for (const char* boring :
       {"_kernel__5x_cublas", "_kernel__5x_cudnn", "__5x_cublas", "__5x_cudnn", "_execute_segment_k_off", "_kernel"}) {
    if (display_width(n) <= width) break;
    size_t p = n.find(boring);
    if (p != std::string::npos) n.erase(p, std::string(boring).size());
  }
  if (display_width(n) <= width) return n;
  // xmma's long words, abbreviated (docs/explain.md lists them).
  for (auto [from, to] :
       {std::pair<const char*, const char*>{"_tilesize", "_t"}, {"_warpgroupsize", "_wg"}, {"_warpsize", "_w"}}) {
    for (size_t p = n.find(from); p != std::string::npos; p = n.find(from)) n.replace(p, std::string(from).size(), to);
  }
  if (display_width(n) <= width) return n;
  auto tok = split(n, '_', true);
  if (tok.size() < 3 || width < 12) return shorten(n, width);
  size_t budget = width - 1;  // one column for "…"
  std::string head = tok[0];
  size_t i = 1;
  while (i < tok.size() && head.size() + 1 + tok[i].size() <= budget / 2) head += "_" + tok[i++];
  std::string tail;
  size_t j = tok.size();
  while (j > i && head.size() + tail.size() + 1 + tok[j - 1].size() <= budget) tail = "_" + tok[--j] + tail;
  if (tail.empty()) return shorten(n, width);
  return head + "\xE2\x80\xA6" + tail;
}

}  // namespace

std::string shorten_kernel_name(std::string_view name, size_t width) {
  std::string d = demangle_kernel_name(name);
  detail::Signature s = detail::parse_signature(d);
  if (s.function.empty()) return width ? shorten(d, width) : d;
  bool flat = s.scopes.empty() && s.template_args.empty();
  if (flat) return width ? elide_flat(s.base, width) : s.base;

  std::string out = s.scopes.empty() ? s.base : s.scopes.front() + "::" + s.base;
  std::vector<std::string> parts;
  for (const auto& a : s.template_args)
    if (std::string p = summarize_arg(a); !p.empty()) parts.push_back(p);
  if (width == 0) return parts.empty() ? out : out + "<" + join(parts, ", ") + ">";
  // Drop arguments from the end (marking the cut with "…") until it fits.
  for (size_t keep = parts.size();; --keep) {
    std::vector<std::string> p(parts.begin(), parts.begin() + static_cast<long>(keep));
    if (keep < parts.size()) p.push_back("\xE2\x80\xA6");
    std::string r = p.empty() ? out : out + "<" + join(p, ", ") + ">";
    if (display_width(r) <= width) return r;
    // A single flat argument (cutlass::Kernel2<cutlass_80_...>) loses tokens from its middle instead.
    if (keep == 1 && parts.size() == 1 && identifiers(parts[0]).size() == 1 && display_width(out) + 14 < width)
      return out + "<" + elide_flat(parts[0], width - display_width(out) - 2) + ">";
    if (keep == 0) return shorten(out, width);
  }
}

}  // namespace roofline::prof
