// explain_kernel(): demangle, split the C++ name, let each family decoder try,
// and put the decoded fields into one sentence.
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>

#include "src/profiler/explain/decoder.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/profiler/explain.hpp"
#include "src/profiler/explain/tokens.hpp"

namespace roofline::prof {

const char* to_string(KernelOp op) {
  switch (op) {
    case KernelOp::Unknown:
      return "unknown";
    case KernelOp::Gemm:
      return "GEMM";
    case KernelOp::Gemv:
      return "GEMV / small-N GEMM";
    case KernelOp::ConvFprop:
      return "convolution forward (fprop)";
    case KernelOp::ConvDgrad:
      return "convolution backward data (dgrad)";
    case KernelOp::ConvWgrad:
      return "convolution backward weights (wgrad)";
    case KernelOp::Conv:
      return "convolution";
    case KernelOp::SplitKReduce:
      return "split-K reduction";
    case KernelOp::Elementwise:
      return "elementwise";
    case KernelOp::Reduction:
      return "reduction";
    case KernelOp::Softmax:
      return "softmax";
    case KernelOp::Loss:
      return "loss";
    case KernelOp::Normalization:
      return "normalization";
    case KernelOp::Pooling:
      return "pooling";
    case KernelOp::Optimizer:
      return "optimizer / multi-tensor apply";
    case KernelOp::Attention:
      return "fused attention";
    case KernelOp::Copy:
      return "copy";
    case KernelOp::Layout:
      return "layout transform";
    case KernelOp::Fft:
      return "FFT";
    case KernelOp::Random:
      return "random numbers";
    case KernelOp::Indexing:
      return "indexing";
    case KernelOp::Sort:
      return "sort / scan";
    case KernelOp::Communication:
      return "communication";
    case KernelOp::Helper:
      return "library helper";
    case KernelOp::Benchmark:
      return "benchmark";
  }
  return "unknown";
}

const char* to_string(TensorCores t) {
  switch (t) {
    case TensorCores::Yes:
      return "yes";
    case TensorCores::No:
      return "no";
    default:
      return "unknown";
  }
}

const KernelField* KernelInfo::field(std::string_view key) const {
  for (const auto& f : fields)
    if (f.key == key) return &f;
  return nullptr;
}

bool KernelInfo::is_conv() const {
  return op == KernelOp::ConvFprop || op == KernelOp::ConvDgrad || op == KernelOp::ConvWgrad || op == KernelOp::Conv;
}

bool KernelInfo::is_matmul_like() const { return op == KernelOp::Gemm || op == KernelOp::Gemv || is_conv(); }

bool KernelInfo::fp32_on_cuda_cores() const {
  if (!is_matmul_like() || tensor_cores != TensorCores::No) return false;
  const std::string& t = math_type.empty() ? input_type : math_type;
  return t == "fp32" || t == "complex fp32";
}

bool KernelInfo::is_elementwise_like() const {
  return op == KernelOp::Elementwise || op == KernelOp::Copy || op == KernelOp::Layout;
}

nlohmann::json KernelInfo::to_json() const {
  nlohmann::json f = nlohmann::json::array();
  for (const auto& x : fields)
    f.push_back({{"key", x.key}, {"label", x.label}, {"value", x.value}, {"evidence", x.evidence}});
  return {{"name", name},
          {"demangled", demangled},
          {"function", function},
          {"template_args", template_args},
          {"truncated", truncated},
          {"recognised", recognised},
          {"library", library},
          {"operation", to_string(op)},
          {"op_detail", op_detail},
          {"sm", sm},
          {"arch", arch},
          {"input_type", input_type},
          {"math_type", math_type},
          {"accum_type", accum_type},
          {"output_type", output_type},
          {"tensor_cores", to_string(tensor_cores)},
          {"fields", f},
          {"sentence", sentence},
          {"notes", notes}};
}

std::string demangle_kernel_name(std::string_view name) {
  std::string n = trim(name);
  if (!starts_with(n, "_Z")) return n;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(n.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return n;
  return out.get();
}

namespace detail {

void Builder::field(std::string key, std::string label, std::string value, std::string evidence, std::string phrase) {
  for (auto& f : k_.fields) {
    if (f.key == key) {  // a later, more specific reading replaces an earlier one
      f = {std::move(key), std::move(label), std::move(value), std::move(evidence)};
      if (!phrase.empty()) phrases_.push_back(std::move(phrase));
      return;
    }
  }
  k_.fields.push_back({std::move(key), std::move(label), std::move(value), std::move(evidence)});
  if (!phrase.empty()) phrases_.push_back(std::move(phrase));
}

void Builder::library(std::string lib, std::string evidence) {
  k_.library = lib;
  lib_evidence_ = evidence;
  field("library", "Library", std::move(lib), std::move(evidence));
}

void Builder::family(std::string kind, std::string evidence) {
  field("family", "Kind", std::move(kind), std::move(evidence));
}

namespace {

std::string op_phrase(KernelOp op, const std::string& detail) {
  switch (op) {
    case KernelOp::Gemm:
      return detail.empty() ? "GEMM" : detail;
    case KernelOp::Elementwise:
      return detail.empty() ? "elementwise kernel" : "elementwise " + detail;
    case KernelOp::Reduction:
      return detail.empty() ? "reduction" : detail + " reduction";
    case KernelOp::Softmax:
    case KernelOp::Loss:
    case KernelOp::Normalization:
    case KernelOp::Pooling:
    case KernelOp::Copy:
    case KernelOp::Layout:
    case KernelOp::Random:
    case KernelOp::Indexing:
    case KernelOp::Sort:
    case KernelOp::Helper:
    case KernelOp::Benchmark:
    case KernelOp::Communication:
    case KernelOp::Optimizer:
    case KernelOp::Attention:
      return detail.empty() ? to_string(op) : detail;
    default:
      if (detail.empty() || to_lower(detail) == to_lower(to_string(op))) return to_string(op);
      return std::string(to_string(op)) + " via " + detail;
  }
}

}  // namespace

void Builder::op(KernelOp op, std::string evidence, std::string detail) {
  k_.op = op;
  k_.op_detail = detail;
  op_phrase_ = op_phrase(op, detail);
  std::string value = to_string(op);
  if (!detail.empty() && to_lower(detail) != to_lower(value) && detail != "GEMM") value += ": " + detail;
  field("operation", "Operation", std::move(value), std::move(evidence));
}

void Builder::arch(int sm, std::string evidence) {
  if (sm <= 0) return;
  k_.sm = sm;
  k_.arch = arch_name(sm);
  field("arch", "Architecture", k_.arch + " (sm_" + std::to_string(sm) + ")", std::move(evidence));
}

void Builder::types(std::string input, std::string math, std::string accum, std::string output, std::string evidence) {
  if (!input.empty()) k_.input_type = input;
  if (!math.empty()) k_.math_type = math;
  if (!accum.empty()) k_.accum_type = accum;
  if (!output.empty()) k_.output_type = output;
  std::vector<std::string> parts;
  if (!k_.input_type.empty()) parts.push_back(display_type(k_.input_type) + " in");
  if (!k_.math_type.empty() && k_.math_type != k_.input_type) parts.push_back(display_type(k_.math_type) + " math");
  if (!k_.accum_type.empty()) parts.push_back(display_type(k_.accum_type) + " accumulate");
  if (!k_.output_type.empty()) parts.push_back(display_type(k_.output_type) + " out");
  field("types", "Data types", join(parts, ", "), std::move(evidence));
}

void Builder::tensor_cores(TensorCores t, std::string evidence, std::string why) {
  k_.tensor_cores = t;
  std::string value = to_string(t);
  if (!why.empty()) value += " (" + why + ")";
  field("tensor_cores", "Tensor cores", std::move(value), std::move(evidence));
}

void Builder::undecoded(const std::vector<std::string>& tokens) {
  if (tokens.empty()) return;
  std::string t = join(tokens, ", ");
  field("undecoded", "Not decoded", t, t);
  note("tokens not decoded (no documented meaning known to roofline): " + t);
}

void Builder::finish() {
  // Fields in a fixed order of importance, whatever order the decoder found them in.
  static constexpr std::string_view order[] = {"library", "family",        "operation",     "algorithm",   "pass",
                                               "arch",    "types",         "tensor_cores",  "instruction", "tile",
                                               "k_tile",  "stages",        "k_stages",      "cluster",     "warps",
                                               "layout",  "tensor_layout", "output_layout", "split_k"};
  auto rank = [](const KernelField& f) {
    for (size_t i = 0; i < std::size(order); ++i)
      if (f.key == order[i]) return i;
    return std::size(order);
  };
  std::stable_sort(k_.fields.begin(), k_.fields.end(),
                   [&](const KernelField& a, const KernelField& b) { return rank(a) < rank(b); });
  std::string head;
  if (!k_.recognised) {
    head = "Not recognised: " + (k_.function.empty() ? k_.demangled : k_.function);
    k_.sentence = head + " (no decoding rule matches this name; shown as written, nothing guessed).";
    return;
  }
  head = k_.library.empty() ? op_phrase_ : k_.library + " " + op_phrase_;
  if (!k_.arch.empty()) head += " for " + k_.arch + " (sm_" + std::to_string(k_.sm) + ")";
  std::vector<std::string> parts{head};

  // Data types and where the multiply runs, as one phrase.
  std::string in = k_.input_type.empty() ? "" : display_type(k_.input_type);
  std::string math = k_.math_type.empty() ? in : display_type(k_.math_type);
  std::string tp;
  if (k_.tensor_cores == TensorCores::Yes) {
    tp = (math.empty() ? std::string("") : math + " ") + "on tensor cores";
    if (!in.empty() && in != math) tp += " from " + in + " data";
  } else if (k_.tensor_cores == TensorCores::No) {
    tp = (math.empty() ? std::string("") : math + " ") + "on CUDA cores (no tensor cores)";
  } else if (!in.empty()) {
    tp = in + (k_.is_matmul_like() ? " data (tensor-core use not visible in the name)" : " data");
  }
  if (!tp.empty()) {
    if (!k_.accum_type.empty() && k_.accum_type != k_.math_type && k_.accum_type != k_.input_type)
      tp += ", " + display_type(k_.accum_type) + " accumulate";
    if (!k_.output_type.empty() && k_.output_type != k_.input_type && k_.output_type != "none")
      tp += ", " + display_type(k_.output_type) + " output";
    parts.push_back(tp);
  }
  for (auto& p : phrases_) parts.push_back(p);
  k_.sentence = join(parts, ", ") + ".";
}

std::vector<std::string> flat_tokens(std::string_view name, std::string* prefix) {
  std::string n(name);
  std::string removed;
  // Wrapper prefixes libraries put before the kernel's own name.
  static constexpr std::string_view prefixes[] = {"_5x_cudnn_", "cudnn_infer_", "cudnn_train_", "cudnn_"};
  for (auto p : prefixes) {
    if (!starts_with(n, p)) continue;
    std::string rest = n.substr(p.size());
    if (sm_from_token(rest.substr(0, rest.find('_'))) == 0) continue;  // only before an architecture
    removed = std::string(p);
    n = rest;
    break;
  }
  if (prefix) *prefix = removed;
  return split(n, '_', /*keep_empty=*/true);
}

}  // namespace detail

KernelInfo explain_kernel(std::string_view name) {
  using namespace detail;
  KernelInfo base;
  base.name = trim(name);
  base.demangled = demangle_kernel_name(base.name);
  Signature sig = parse_signature(base.demangled);
  base.function = sig.function;
  base.template_args = sig.template_args;
  base.truncated = sig.truncated;

  using Decoder = bool (*)(const Signature&, Builder&);
  static constexpr Decoder decoders[] = {decode_roofline_own, decode_roofline, decode_nccl,  decode_triton, decode_attention,
                                         decode_cutlass,      decode_xmma,  decode_nvjet,  decode_blas_legacy,
                                         decode_blas_helpers, decode_cudnn, decode_cub,    decode_pytorch};
  if (!sig.function.empty()) {
    for (Decoder d : decoders) {
      KernelInfo k = base;  // a decoder that gives up leaves nothing behind
      Builder b(k);
      if (!d(sig, b)) continue;
      k.recognised = true;
      if (k.truncated)
        b.note("the name was cut short by the profiler that printed it; pass the full name for every field");
      b.finish();
      return k;
    }
  }

  // Not recognised: say what the C++ name itself shows, nothing more.
  KernelInfo k = base;
  Builder b(k);
  if (!sig.function.empty()) b.field("function", "Function", sig.function, sig.function);
  if (!sig.scopes.empty()) b.field("scope", "Namespace", join(sig.scopes, "::"), join(sig.scopes, "::"));
  if (!sig.template_args.empty()) {
    b.field("template_args", "Template arguments",
            std::to_string(sig.template_args.size()) + ": " + join(sig.template_args, ", "), "<...>");
    std::vector<std::string> types;
    for (const auto& a : sig.template_args) {
      std::string t = type_from_cpp(arg_value(a));
      if (!t.empty() && t != "int32" && t != "int64" && t != "bool") {
        bool seen = false;
        for (auto& x : types) seen |= x == display_type(t);
        if (!seen) types.push_back(display_type(t));
      }
    }
    if (!types.empty()) b.field("template_types", "Types among the template arguments", join(types, ", "), "<...>");
  }
  if (sig.has_params && !sig.params.empty()) b.field("params", "Parameters", sig.params, "(...)");
  if (k.truncated) b.note("the name was cut short by the profiler that printed it");
  b.finish();
  return k;
}

}  // namespace roofline::prof
