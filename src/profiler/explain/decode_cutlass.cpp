// CUTLASS kernels: the CUTLASS 2 library names ("cutlass_tensorop_s1688gemm_...",
// also shipped inside cuBLAS as "cutlass_80_..." and cuDNN as
// "cutlass_5x_cudnn::Kernel<...>"), the CUTLASS 3 names ("cutlass3x_sm90_..."),
// and plain template instantiations (cutlass::Kernel<cutlass::gemm::kernel::...>).
#include <regex>

#include "src/profiler/explain/decoder.hpp"
#include "roofline/core/strings.hpp"
#include "src/profiler/explain/tokens.hpp"

namespace roofline::prof::detail {

namespace {

KernelOp op_from_word(const std::string& w) {
  if (w == "gemm" || w == "spgemm" || w == "gemm_grouped") return KernelOp::Gemm;
  if (w == "fprop") return KernelOp::ConvFprop;
  if (w == "dgrad") return KernelOp::ConvDgrad;
  if (w == "wgrad") return KernelOp::ConvWgrad;
  if (w == "gemv") return KernelOp::Gemv;
  return KernelOp::Unknown;
}

// CUTLASS 2: cutlass[_NN]_<opclass>_[C_]<acc><mma><op>[_relu][_<variant>][_A]_<MxN>_<K>x<stages>_<layout>[...]_align<N>
bool decode_cutlass2(const std::string& name, Builder& b) {
  auto tok = split(name, '_', true);
  if (tok.size() < 4 || tok[0] != "cutlass") return false;
  size_t i = 1;
  if (is_number(tok[i])) {
    b.arch(to_int(tok[i]), "cutlass_" + tok[i]);
    ++i;
  }
  // Opcode class.
  std::string opclass;
  if (tok[i] == "simt" || tok[i] == "tensorop")
    opclass = tok[i++];
  else if (tok[i] == "wmma" && i + 1 < tok.size() && tok[i + 1] == "tensorop") {
    opclass = "wmma_tensorop";
    i += 2;
  } else {
    return false;
  }
  // Optional C type, then the core.
  std::string c_type, c_tok;
  if (i < tok.size() && !type_from_token(tok[i]).empty()) {
    c_type = type_from_token(tok[i]);
    c_tok = tok[i++];
  }
  static const std::regex core_re("^([a-z]?)(\\d*)(gemm|fprop|dgrad|wgrad|spgemm|gemv)$");
  std::smatch m;
  if (i >= tok.size() || !std::regex_match(tok[i], m, core_re)) return false;
  const std::string core = tok[i++];
  const std::string letter = m[1], digits = m[2], word = m[3];
  KernelOp op = op_from_word(word);
  std::string accum = type_from_blas_letter(letter.empty() ? 's' : letter[0]);

  std::string a_type, a_tok, iter;
  std::vector<int> tile, kst;
  std::vector<std::string> rest, variants, variant_ev;
  for (; i < tok.size(); ++i) {
    const std::string& t = tok[i];
    if (t.empty()) continue;
    if (tile.empty() && a_type.empty() && !type_from_token(t).empty()) {
      a_type = type_from_token(t);
      a_tok = t;
      continue;
    }
    if (auto d = parse_dims(t); d.size() == 2) {
      if (tile.empty()) {
        tile = d;
        b.field("tile", "Tile (M×N)", dims_text(d), t, dims_text(d) + " tiles");
      } else if (kst.empty()) {
        kst = d;
        b.field("k_tile", "K tile", std::to_string(d[0]), t);
        b.field("stages", "Pipeline stages", std::to_string(d[1]), t,
                "K tiles of " + std::to_string(d[0]) + " in a " + std::to_string(d[1]) + "-stage pipeline");
      } else {
        rest.push_back(t);
      }
      continue;
    }
    if (t == "relu" || t == "gelu" || t == "bias") {
      b.field("epilogue", "Epilogue", upper(t) + " fused into the output", t, "with a fused " + upper(t) + " epilogue");
      continue;
    }
    if (t == "optimized" || t == "analytic") {
      iter = t;
      b.field(
          "iterator", "Iterator algorithm",
          t == "optimized" ? "optimized (precomputed address increments)" : "analytic (addresses computed each step)",
          t);
      continue;
    }
    if (is_blas_layout(t) && t.size() == 2) {
      b.field("layout", "Layouts (A, B)", blas_layout_phrase(t), t, blas_layout_phrase(t));
      continue;
    }
    if (t == "nhwc" || t == "nchw" || t == "ndhwc") {
      b.field("layout", "Tensor layout", upper(t), t, upper(t) + " tensors");
      continue;
    }
    if (t == "unity" && i + 1 < tok.size() && tok[i + 1] == "stride") {
      variants.push_back("specialised for stride 1");
      variant_ev.push_back("unity_stride");
      ++i;
      continue;
    }
    static const std::regex align_re("^align(\\d+)$");
    std::smatch am;
    if (std::regex_match(t, am, align_re)) {
      b.field("alignment", "Alignment", am[1].str() + " elements per access", t);
      continue;
    }
    if (t == "few" || t == "fixed" || t == "channels" || t == "strided") {
      variants.push_back(t);
      variant_ev.push_back(t);
      continue;
    }
    rest.push_back(t);
  }
  if (!variants.empty()) b.field("variant", "Variant", join(variants, ", "), join(variant_ev, "_"));

  // CUTLASS's naming: a type before the core is C's, one after it A's, and
  // either is left out when it equals the accumulator's.
  std::string input = a_type.empty() ? accum : a_type;
  std::string output = c_type.empty() ? accum : c_type;
  std::vector<int> shape = digits.empty() ? std::vector<int>{} : mma_shape(digits);
  std::string math;
  if (opclass != "simt" && input == "fp32" && shape == std::vector<int>{16, 8, 8}) math = "tf32";
  std::string ev = (c_tok.empty() ? "" : c_tok + "_") + core + (a_tok.empty() ? "" : "_" + a_tok);
  b.types(input, math, accum, output, ev);
  if (!shape.empty()) b.field("instruction", "MMA instruction", dims_text(shape) + " (M×N×K per instruction)", digits);
  if (opclass == "simt")
    b.tensor_cores(TensorCores::No, "simt", "SIMT kernels use the CUDA cores");
  else
    b.tensor_cores(TensorCores::Yes, opclass == "wmma_tensorop" ? "wmma_tensorop" : "tensorop",
                   opclass == "wmma_tensorop" ? "WMMA tensor-core API" : "tensor-op kernel");
  b.op(op, core, op == KernelOp::Gemm ? "GEMM" : "");
  b.undecoded(rest);
  return true;
}

// CUTLASS 3:
// cutlass3x_smNN_<opclass>_[<i><MxNxK>]<gemm|implicit_gemm_<pass>>_<A>_<B>_<Acc>_<C>_<D>_<tile>_<cluster>_<stages>_<layouts>_align<N>[_schedule...]
bool decode_cutlass3(const std::string& name, Builder& b) {
  auto tok = split(name, '_', true);
  if (tok.size() < 4 || tok[0] != "cutlass3x") return false;
  int sm = sm_from_token(tok[1]);
  if (!sm) return false;
  b.arch(sm, tok[1]);
  size_t i = 2;
  std::string opclass = tok[i++];
  if (opclass != "tensorop" && opclass != "simt") return false;
  static const std::regex core_re("^(?:([a-z])(\\d+x\\d+x\\d+))?(gemm|implicit)$");
  std::smatch m;
  if (i >= tok.size() || !std::regex_match(tok[i], m, core_re)) return false;
  std::string core = tok[i++];
  KernelOp op = KernelOp::Gemm;
  std::string algo;
  if (m[3] == "implicit") {
    if (i + 1 >= tok.size() || tok[i] != "gemm") return false;
    op = op_from_word(tok[i + 1]);
    if (op == KernelOp::Unknown) op = KernelOp::Conv;
    core += "_gemm_" + tok[i + 1];
    algo = "implicit GEMM";
    i += 2;
  }
  if (m[2].matched) {
    auto d = parse_dims(m[2].str());
    b.field("instruction", "MMA instruction",
            dims_text(d) + " (M×N×K per instruction, " + m[1].str() + " = accumulator letter)",
            m[1].str() + m[2].str());
  }
  // Up to five types: A, B, accumulator, C, D.
  std::vector<std::string> types, type_toks;
  while (i < tok.size() && types.size() < 5 && !type_from_token(tok[i]).empty()) {
    types.push_back(type_from_token(tok[i]));
    type_toks.push_back(tok[i]);
    ++i;
  }
  std::string input = types.size() > 0 ? types[0] : "";
  std::string accum = types.size() > 2 ? types[2] : "";
  std::string output = types.size() > 4 ? types[4] : (types.size() > 3 ? types[3] : "");
  b.types(input, input == "fp32" && opclass == "tensorop" ? "tf32" : "", accum, output, join(type_toks, "_"));
  if (types.size() > 1 && types[1] != types[0])
    b.note("A is " + display_type(types[0]) + ", B is " + display_type(types[1]));
  if (types.size() > 3 && types[3] == "none")
    b.field("c_source", "C input", "none (void: C is not read, beta = 0)", "void");

  int dims_seen = 0;
  std::vector<std::string> sched, rest;
  for (; i < tok.size(); ++i) {
    const std::string& t = tok[i];
    if (t.empty()) continue;
    if (auto d = parse_dims(t); d.size() == 3) {
      if (dims_seen == 0)
        b.field("tile", "Tile (M×N×K)", dims_text(d), t, dims_text(d) + " tiles");
      else
        b.field("cluster", "Cluster", dims_text(d) + " thread blocks", t, dims_text(d) + " cluster");
      ++dims_seen;
      continue;
    }
    if (is_number(t) && dims_seen == 2) {
      b.field("stages", "Pipeline stages", t == "0" ? "0 = chosen automatically from shared memory" : t, t,
              t == "0" ? "" : t + "-stage pipeline");
      continue;
    }
    if (is_blas_layout(t)) {
      b.field("layout", "Layouts (A, B, C)", blas_layout_phrase(t), t, blas_layout_phrase(t));
      continue;
    }
    static const std::regex align_re("^align(\\d+)$"), sm2_re("^(\\d)sm$");
    std::smatch am;
    if (std::regex_match(t, am, align_re)) {
      b.field("alignment", "Alignment", am[1].str() + " elements per access", t);
      continue;
    }
    if (std::regex_match(t, am, sm2_re)) {
      b.field("cta_pairs", "SMs per MMA", am[1].str() + " (Blackwell " + t + " MMA)", t);
      continue;
    }
    if (t == "warpspecialized" || t == "cooperative" || t == "pingpong" || t == "persistent" || t == "stream" ||
        t == "k" || t == "epi" || t == "tma" || t == "nosmem" || t == "fp8" || t == "fast" || t == "accum" ||
        t == "bias" || t == "relu" || t == "gelu" || t == "silu" || t == "f32" || t == "bf16" || t == "f16") {
      sched.push_back(t);
      continue;
    }
    rest.push_back(t);
  }
  if (!sched.empty()) {
    std::string s = join(sched, "_");
    std::vector<std::string> words;
    if (contains(s, "warpspecialized"))
      words.push_back("warp-specialized (producer warps load with TMA, consumer warps compute)");
    if (contains(s, "cooperative")) words.push_back("cooperative (consumer warp groups share one tile)");
    if (contains(s, "pingpong")) words.push_back("ping-pong (consumer warp groups alternate tiles)");
    if (contains(s, "stream_k")) words.push_back("stream-K");
    if (contains(s, "epi_tma")) words.push_back("TMA epilogue");
    if (contains(s, "fp8_fast_accum")) words.push_back("fast FP8 accumulation");
    for (const char* e : {"bias", "relu", "gelu", "silu"})
      if (contains(s, e)) words.push_back(std::string("fused ") + e);
    b.field("schedule", "Schedule", words.empty() ? s : join(words, ", "), s, words.empty() ? "" : join(words, ", "));
  }
  if (opclass == "simt")
    b.tensor_cores(TensorCores::No, "simt", "SIMT kernels use the CUDA cores");
  else
    b.tensor_cores(TensorCores::Yes, "tensorop", sm >= 90 ? "tensor-op kernel (wgmma on Hopper)" : "tensor-op kernel");
  b.op(op, core, op == KernelOp::Gemm ? "GEMM" : algo);
  b.undecoded(rest);
  return true;
}

// cutlass::Kernel<cutlass::gemm::kernel::GemmUniversal<...>> and friends: what the C++ types say.
bool decode_cutlass_template(const Signature& s, Builder& b) {
  const std::string& t = s.text;
  b.library("CUTLASS", "cutlass::" + s.base);
  b.family("CUTLASS template instantiation", "cutlass::" + s.base);
  std::smatch m;
  static const std::regex sm_re("cutlass::arch::Sm(\\d+)");
  if (std::regex_search(t, m, sm_re)) b.arch(to_int(m[1].str()), m[0].str());
  if (contains(t, "OpClassTensorOp") || contains(t, "OpClassWmmaTensorOp"))
    b.tensor_cores(TensorCores::Yes, contains(t, "OpClassWmmaTensorOp") ? "OpClassWmmaTensorOp" : "OpClassTensorOp",
                   "tensor-op kernel");
  else if (contains(t, "OpClassSimt"))
    b.tensor_cores(TensorCores::No, "OpClassSimt", "SIMT kernels use the CUDA cores");
  static const std::regex shape_re("GemmShape<(\\d+), (\\d+), (\\d+)>");
  if (std::regex_search(t, m, shape_re))
    b.field("tile", "Tile (M×N×K)", m[1].str() + "×" + m[2].str() + "×" + m[3].str(), m[0].str(),
            m[1].str() + "×" + m[2].str() + "×" + m[3].str() + " tiles");
  // The first element type among the template arguments is A's.
  static const std::regex type_re(
      "(cutlass::half_t|cutlass::bfloat16_t|cutlass::tfloat32_t|cutlass::float_e4m3_t|cutlass::float_e5m2_t|"
      "\\bfloat\\b|\\bdouble\\b)");
  if (std::regex_search(t, m, type_re)) b.types(type_from_cpp(m[1].str()), "", "", "", m[1].str());
  if (contains(t, "conv::kernel") || contains(t, "ImplicitGemmConvolution")) {
    KernelOp op = KernelOp::Conv;
    if (contains(t, "Operator)0") || contains(t, "kFprop"))
      op = KernelOp::ConvFprop;
    else if (contains(t, "Operator)1") || contains(t, "kDgrad"))
      op = KernelOp::ConvDgrad;
    else if (contains(t, "Operator)2") || contains(t, "kWgrad"))
      op = KernelOp::ConvWgrad;
    b.op(op, "conv::kernel", "implicit GEMM");
  } else if (contains(t, "gemm::kernel") || contains(t, "Gemm")) {
    b.op(KernelOp::Gemm, "gemm::kernel", "GEMM");
  } else {
    b.op(KernelOp::Unknown, s.base);
  }
  return true;
}

}  // namespace

bool decode_cutlass(const Signature& s, Builder& b) {
  // A flat CUTLASS name on its own (the CUTLASS profiler, PyTorch Inductor).
  if (s.scopes.empty() && s.template_args.empty()) {
    if (starts_with(s.base, "cutlass3x_")) {
      b.library("CUTLASS", "cutlass3x");
      b.family("CUTLASS 3 kernel", "cutlass3x");
      return decode_cutlass3(s.base, b);
    }
    if (starts_with(s.base, "cutlass_")) {
      bool in_cublas = s.base.size() > 10 && is_number(s.base.substr(8, 2));
      b.library(in_cublas ? "cuBLAS" : "CUTLASS", in_cublas ? "cutlass_" + s.base.substr(8, 2) : "cutlass_");
      b.family(in_cublas ? "CUTLASS 2 kernel shipped inside cuBLAS" : "CUTLASS 2 kernel",
               s.base.substr(0, s.base.find('_', 8)));
      return decode_cutlass2(s.base, b);
    }
    return false;
  }
  // Wrapped: cutlass::Kernel<cutlass_80_...>, cutlass_5x_cudnn::Kernel<cutlass_tensorop_...>.
  if ((s.base == "Kernel" || s.base == "Kernel2") && !s.template_args.empty()) {
    const std::string& inner = s.template_args[0];
    bool flat_inner = inner.find("::") == std::string::npos && inner.find('<') == std::string::npos;
    std::string scope = join(s.scopes, "::");
    if (flat_inner && (starts_with(inner, "cutlass_") || starts_with(inner, "cutlass3x_"))) {
      bool cudnn = contains(scope, "cudnn");
      bool numbered = inner.size() > 10 && starts_with(inner, "cutlass_") && is_number(inner.substr(8, 2));
      if (cudnn)
        b.library("cuDNN", scope + "::" + s.base);
      else if (numbered)
        b.library("cuBLAS", "cutlass_" + inner.substr(8, 2));
      else
        b.library("CUTLASS", scope + "::" + s.base);
      b.family(cudnn      ? "CUTLASS kernel inside cuDNN"
               : numbered ? "CUTLASS 2 kernel shipped inside cuBLAS"
                          : "CUTLASS kernel",
               scope + "::" + s.base + "<" + inner.substr(0, inner.find('_', 8)) + "…>");
      return starts_with(inner, "cutlass3x_") ? decode_cutlass3(inner, b) : decode_cutlass2(inner, b);
    }
  }
  if (!s.scopes.empty() && s.scopes[0] == "cutlass" &&
      (s.base == "Kernel" || s.base == "Kernel2" || s.base == "device_kernel"))
    return decode_cutlass_template(s, b);
  return false;
}

}  // namespace roofline::prof::detail
