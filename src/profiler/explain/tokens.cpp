#include "src/profiler/explain/tokens.hpp"

#include <algorithm>
#include <charconv>
#include <span>

#include "roofline/core/strings.hpp"

namespace roofline::prof::detail {

int sm_from_token(std::string_view tok) {
  std::string t = to_lower(tok);
  static const struct {
    const char* name;
    int sm;
  } names[] = {{"kepler", 35}, {"maxwell", 50}, {"pascal", 60}, {"volta", 70},     {"turing", 75},
               {"ampere", 80}, {"ada", 89},     {"hopper", 90}, {"blackwell", 100}};
  for (const auto& n : names)
    if (t == n.name) return n.sm;
  std::string_view v = t;
  if (starts_with(v, "sm_"))
    v.remove_prefix(3);
  else if (starts_with(v, "sm"))
    v.remove_prefix(2);
  else
    return 0;
  if (!v.empty() && (v.back() == 'a' || v.back() == 'f')) v.remove_suffix(1);  // sm90a, sm100f
  if (v.size() < 2 || v.size() > 3 || !is_number(v)) return 0;
  int sm = to_int(v);
  return sm >= 30 && sm <= 130 ? sm : 0;
}

std::string arch_name(int sm) {
  if (sm >= 120) return "Blackwell (consumer)";
  if (sm >= 100) return "Blackwell";
  if (sm >= 90) return "Hopper";
  if (sm == 89) return "Ada Lovelace";
  if (sm >= 80) return "Ampere";
  if (sm == 75) return "Turing";
  if (sm >= 70) return "Volta";
  if (sm >= 60) return "Pascal";
  if (sm >= 50) return "Maxwell";
  if (sm >= 30) return "Kepler";
  return "";
}

std::string type_from_token(std::string_view tok) {
  std::string t = to_lower(tok);
  static const struct {
    const char* spelling;
    const char* canonical;
  } table[] = {{"f32", "fp32"},     {"fp32", "fp32"},    {"tf32", "tf32"}, {"f16", "fp16"},  {"fp16", "fp16"},
               {"half", "fp16"},    {"bf16", "bf16"},    {"f64", "fp64"},  {"fp64", "fp64"}, {"e4m3", "fp8e4m3"},
               {"e5m2", "fp8e5m2"}, {"fp8", "fp8"},      {"s8", "int8"},   {"i8", "int8"},   {"int8", "int8"},
               {"u8", "uint8"},     {"s4", "int4"},      {"int4", "int4"}, {"s32", "int32"}, {"i32", "int32"},
               {"int32", "int32"},  {"e2m1", "fp4e2m1"}, {"void", "none"}};
  for (const auto& e : table)
    if (t == e.spelling) return e.canonical;
  return "";
}

namespace {

// The `parts` (views of them, not of `tok`) that make up `tok` end to end, the
// first that fits taken at each step; empty unless they make up all of it.
std::vector<std::string_view> split_run(std::string_view tok, std::span<const std::string_view> parts) {
  std::vector<std::string_view> out;
  while (!tok.empty()) {
    auto fit = std::find_if(parts.begin(), parts.end(), [&](std::string_view p) { return starts_with(tok, p); });
    if (fit == parts.end()) return {};
    out.push_back(*fit);
    tok.remove_prefix(fit->size());
  }
  return out;
}

}  // namespace

std::vector<std::string> split_type_run(std::string_view tok) {
  static constexpr std::string_view spellings[] = {"bf16", "tf32", "e4m3", "e5m2", "f16", "f32",
                                                   "f64",  "s8",   "s32",  "u8",   "i8",  "i32"};
  std::vector<std::string> out;
  for (std::string_view s : split_run(to_lower(tok), spellings)) out.push_back(type_from_token(s));
  return out;
}

std::vector<int> mma_shape(std::string_view digits) {
  static constexpr std::string_view parts[] = {"16", "32", "64", "8", "4"};
  std::vector<std::string_view> run = split_run(digits, parts);
  if (run.size() != 3) return {};
  return {to_int(run[0]), to_int(run[1]), to_int(run[2])};
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

std::string type_from_blas_letter(char c) {
  switch (c) {
    case 's':
      return "fp32";
    case 'd':
      return "fp64";
    case 'h':
      return "fp16";
    case 'c':
      return "complex fp32";
    case 'z':
      return "complex fp64";
    case 't':
      return "bf16";
    case 'i':
      return "int32";
    default:
      return "";
  }
}

std::string type_from_cpp(std::string_view t) {
  std::string s = trim(t);
  if (starts_with(s, "const ")) s = s.substr(6);
  static const struct {
    const char* spelling;
    const char* canonical;
  } table[] = {{"float", "fp32"},
               {"double", "fp64"},
               {"c10::Half", "fp16"},
               {"at::Half", "fp16"},
               {"__half", "fp16"},
               {"half", "fp16"},
               {"cutlass::half_t", "fp16"},
               {"c10::BFloat16", "bf16"},
               {"at::BFloat16", "bf16"},
               {"__nv_bfloat16", "bf16"},
               {"cutlass::bfloat16_t", "bf16"},
               {"cutlass::tfloat32_t", "tf32"},
               {"c10::Float8_e4m3fn", "fp8e4m3"},
               {"__nv_fp8_e4m3", "fp8e4m3"},
               {"cutlass::float_e4m3_t", "fp8e4m3"},
               {"c10::Float8_e5m2", "fp8e5m2"},
               {"__nv_fp8_e5m2", "fp8e5m2"},
               {"cutlass::float_e5m2_t", "fp8e5m2"},
               {"signed char", "int8"},
               {"int8_t", "int8"},
               {"unsigned char", "uint8"},
               {"uint8_t", "uint8"},
               {"int", "int32"},
               {"long", "int64"},
               {"bool", "bool"},
               {"c10::complex<float>", "complex fp32"},
               {"c10::complex<double>", "complex fp64"}};
  for (const auto& e : table)
    if (s == e.spelling) return e.canonical;
  return "";
}

std::string display_type(std::string_view c) {
  if (c == "fp8e4m3") return "FP8 E4M3";
  if (c == "fp8e5m2") return "FP8 E5M2";
  if (c == "fp4e2m1") return "FP4 E2M1";
  if (c == "complex fp32") return "complex FP32";
  if (c == "complex fp64") return "complex FP64";
  if (c == "none") return "none";
  std::string u;
  for (char ch : c) u += static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);
  return u;
}

bool tensor_core_type(std::string_view c) {
  return c == "tf32" || c == "fp16" || c == "bf16" || c == "fp8e4m3" || c == "fp8e5m2" || c == "fp8" || c == "int8" ||
         c == "uint8" || c == "int4" || c == "fp4e2m1";
}

bool generic_pytorch_identifier(std::string_view id) {
  static constexpr std::string_view generic[] = {"gpu_kernel_impl",
                                                 "gpu_kernel_impl_nocast",
                                                 "gpu_kernel_with_scalars",
                                                 "opmath_gpu_kernel_with_scalars",
                                                 "opmath_symmetric_gpu_kernel_with_scalars",
                                                 "launch_vectorized_kernel",
                                                 "launch_legacy_kernel",
                                                 "launch_unrolled_kernel",
                                                 "elementwise_kernel_helper",
                                                 "func_wrapper_t",
                                                 "BinaryFunctor",
                                                 "AUnaryFunctor",
                                                 "BUnaryFunctor",
                                                 "ReduceOp",
                                                 "TensorListMetadata",
                                                 "TensorListScalarListMetadata",
                                                 "FusedOptimizerTensorListMetadata",
                                                 "TrivialOffsetCalculator",
                                                 "OffsetCalculator",
                                                 "gpu_reduce_kernel"};
  return std::find(std::begin(generic), std::end(generic), id) != std::end(generic);
}

bool is_number(std::string_view tok) {
  if (tok.empty()) return false;
  for (char c : tok)
    if (c < '0' || c > '9') return false;
  return true;
}

int to_int(std::string_view tok) {
  int v = 0;
  std::from_chars(tok.data(), tok.data() + tok.size(), v);
  return v;
}

std::vector<int> parse_dims(std::string_view tok) {
  std::vector<int> out;
  size_t start = 0;
  for (size_t i = 0; i <= tok.size(); ++i) {
    if (i == tok.size() || tok[i] == 'x') {
      std::string_view part = tok.substr(start, i - start);
      if (!is_number(part) || part.size() > 5) return {};
      out.push_back(to_int(part));
      start = i + 1;
    }
  }
  if (out.size() < 2) return {};
  return out;
}

std::string dims_text(const std::vector<int>& d, std::string_view sep) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += sep;
    s += std::to_string(d[i]);
  }
  return s;
}

bool is_blas_layout(std::string_view tok) {
  if (tok.size() != 2 && tok.size() != 3) return false;
  for (char c : tok)
    if (c != 't' && c != 'n' && c != 'T' && c != 'N') return false;
  return true;
}

std::string blas_layout_phrase(std::string_view tok) {
  std::string t = to_lower(tok);
  auto op = [](char c) { return c == 't' ? "transposed" : "not transposed"; };
  std::string s;
  if (t[0] == t[1])
    s = t[0] == 't' ? "A and B transposed" : "neither A nor B transposed";
  else
    s = std::string("A ") + op(t[0]) + ", B " + (t[1] == 't' ? "transposed" : "not");
  if (t.size() == 3) s += std::string(", C ") + (t[2] == 't' ? "transposed" : "not transposed");
  return s + " (" + std::string(tok) + ")";
}

}  // namespace roofline::prof::detail
