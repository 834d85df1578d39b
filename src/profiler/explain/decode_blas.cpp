// cuBLAS and cuDNN's flat kernel names: the legacy "<arch>_<type><gemm|cudnn>_..."
// family, NVIDIA's xmma kernels ("sm80_xmma_gemm_...", "sm90_xmma_fprop_...")
// and the nvjet kernels of cuBLAS 12+ ("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT").
#include <regex>

#include "src/profiler/explain/decoder.hpp"
#include "roofline/core/strings.hpp"
#include "src/profiler/explain/tokens.hpp"

namespace roofline::prof::detail {

namespace {

bool flat(const Signature& s) { return s.scopes.empty() && s.template_args.empty() && !s.base.empty(); }

}  // namespace

// ---------------------------------------------------------------- legacy

bool decode_blas_legacy(const Signature& s, Builder& b) {
  if (!flat(s)) return false;
  std::string prefix;
  auto tok = flat_tokens(s.base, &prefix);
  if (tok.size() < 2) return false;
  int sm = sm_from_token(tok[0]);
  if (sm == 0 || starts_with(tok[0], "sm") || tok[1] == "xmma") return false;

  // The core token: [letters][MMA digits](gemm|cudnn).
  static const std::regex core_re("^([a-z]*?)(\\d*)(gemm|cudnn)$");
  size_t core = 0;
  std::smatch m;
  for (size_t i = 1; i < tok.size(); ++i) {
    if (std::regex_match(tok[i], m, core_re)) {
      std::string l = m[1];
      if (l == "s" || l == "d" || l == "h" || l == "c" || l == "z" || l == "i" || l == "gc") {
        core = i;
        break;
      }
    }
    if (type_from_token(tok[i]).empty()) return false;  // only type tokens may precede the core
  }
  if (core == 0) return false;
  std::regex_match(tok[core], m, core_re);
  const std::string letters = m[1], digits = m[2], kind = m[3];
  const bool conv = kind == "cudnn";
  const bool complex_fft = letters == "gc";

  if (conv || complex_fft)
    b.library("cuDNN", prefix.empty() ? tok[core] : prefix + " + " + tok[core]);
  else
    b.library("cuBLAS", tok[0] + "_" + tok[core]);
  b.family(conv          ? "cuDNN convolution kernel (pre-xmma naming)"
           : complex_fft ? "complex GEMM of cuDNN's FFT convolution"
                         : "cuBLAS GEMM kernel (architecture-prefixed naming)",
           tok[0] + "_…_" + tok[core]);
  b.arch(sm, tok[0]);

  std::string pre_type, post_type, post_tok;
  for (size_t i = 1; i < core; ++i) pre_type = type_from_token(tok[i]);
  std::vector<int> shape = digits.empty() ? std::vector<int>{} : mma_shape(digits);
  std::string accum = type_from_blas_letter(letters.empty() ? 's' : letters.back());

  // Remaining tokens after the core.
  std::vector<std::string> variants, variant_ev, rest;
  bool winograd = false;
  std::vector<int> tile;
  for (size_t i = core + 1; i < tok.size(); ++i) {
    const std::string& t = tok[i];
    std::smatch mm;
    if (t.empty()) continue;
    if (post_type.empty() && tile.empty() && !type_from_token(t).empty()) {
      post_type = type_from_token(t);
      post_tok = t;
      continue;
    }
    if (auto d = parse_dims(t); d.size() == 2 && tile.empty()) {
      tile = d;
      b.field("tile", "Tile (M×N)", dims_text(d), t, dims_text(d) + " tiles (M×N per thread block)");
      continue;
    }
    static const std::regex sliced_re("^sliced(\\d+)x(\\d+)$");
    if (std::regex_match(t, mm, sliced_re)) {
      int k = to_int(mm[2].str());
      b.field("split_k", "Split-K",
              "sliced-K " + mm[1].str() + "x" + mm[2].str() + ": each tile's K loop split across " + mm[2].str() +
                  " warps whose partial sums are combined within the block",
              t, "K loop of each tile split across " + std::to_string(k) + " warps (" + t + ")");
      continue;
    }
    if (t == "splitK" || t == "splitk") {
      b.field("split_k", "Split-K", "split-K across thread blocks (partial results summed afterwards)", t,
              "K split across thread blocks (" + t + ")");
      continue;
    }
    if (t == "stages" && i + 1 < tok.size()) {
      if (auto d = parse_dims(tok[i + 1]); d.size() == 2) {
        b.field("k_tile", "K tile", std::to_string(d[0]), "stages_" + tok[i + 1]);
        b.field("stages", "Pipeline stages", std::to_string(d[1]), "stages_" + tok[i + 1],
                std::to_string(d[1]) + "-stage pipeline with K tiles of " + std::to_string(d[0]));
        ++i;
        continue;
      }
    }
    static const std::regex ldg_re("^ldg(\\d+)$");
    if (std::regex_match(t, mm, ldg_re)) {
      variants.push_back(mm[1].str() + "-element global loads");
      variant_ev.push_back(t);
      continue;
    }
    if (t == "relu") {
      b.field("epilogue", "Epilogue", "ReLU can be fused into the output", t, "with a fusable ReLU epilogue");
      continue;
    }
    if (t == "winograd") {
      winograd = true;
      continue;
    }
    if (t == "interior" || t == "small" || t == "medium" || t == "large" || t == "xregs" || t == "mobile" ||
        t == "exp") {
      variants.push_back(t == "xregs" ? "xregs (extra registers)" : t + " (size class)");
      variant_ev.push_back(t);
      continue;
    }
    if (t == "stridedB" || t == "raggedMn") {
      variants.push_back(t);
      variant_ev.push_back(t);
      continue;
    }
    if (is_blas_layout(t) && t.size() == 2) {
      b.field("layout", "Layouts (op(A), op(B))", blas_layout_phrase(t), t, blas_layout_phrase(t));
      continue;
    }
    if (t == "nhwc" || t == "nchw") {
      b.field("tensor_layout", "Tensor layout", upper(t), t, upper(t) + " activations");
      continue;
    }
    static const std::regex ver_re("^v(\\d+)$");
    if (std::regex_match(t, mm, ver_re)) {
      b.field("version", "Kernel version", t, t);
      continue;
    }
    rest.push_back(t);
  }
  if (!variants.empty()) b.field("variant", "Variant", join(variants, ", "), join(variant_ev, "_"));

  // Types. CUTLASS's convention, which these names follow: a type before the
  // core names C (the output), one after it names A/B (the inputs); the
  // core's letter is the accumulator (and the data type when neither is given).
  std::string input = post_type.empty() ? (pre_type.empty() ? accum : pre_type) : post_type;
  std::string output = pre_type.empty() ? accum : pre_type;  // C not named: C is the accumulator type
  if (complex_fft) input = output = accum = "complex fp32";
  std::string ev =
      (pre_type.empty() ? "" : tok[core - 1] + "_") + tok[core] + (post_type.empty() ? "" : "_" + post_tok);
  std::string math;
  if (!shape.empty() && input == "fp32" && shape == std::vector<int>{16, 8, 8}) math = "tf32";
  b.types(input, math, accum, output, ev);

  if (!shape.empty()) {
    b.field("instruction", "MMA instruction", dims_text(shape) + " (M×N×K per tensor-core instruction)", digits);
    b.tensor_cores(TensorCores::Yes, tok[core], digits + " is a tensor-core MMA instruction shape");
  } else if (letters == "s" || letters == "c" || letters == "gc" || letters == "h") {
    b.tensor_cores(TensorCores::No, tok[core],
                   "no MMA instruction shape in \"" + tok[core] + "\"; tensor-core kernels carry one, as in s1688gemm");
  } else if (letters == "d" && sm < 80) {
    b.tensor_cores(TensorCores::No, tok[0], "no FP64 tensor cores before Ampere");
  }

  if (conv) {
    b.op(KernelOp::Conv, winograd ? "winograd" : tok[core], winograd ? "Winograd" : "implicit GEMM");
    b.note("cuDNN does not put the pass (forward, data or weight gradient) in these names");
  } else if (complex_fft) {
    b.op(KernelOp::Gemm, tok[core], "complex GEMM");
    b.note(
        "\"gcgemm\" kernels ship with cuDNN's FFT convolution (next to fft2d_r2c/c2r kernels); the prefix is not "
        "documented");
  } else {
    b.op(KernelOp::Gemm, tok[core], shape.empty() ? upper(letters) + "GEMM" : "GEMM");
  }
  b.undecoded(rest);
  return true;
}

// ------------------------------------------------------------------- xmma

namespace {

std::string conv_layout_phrase(const std::string& t, std::string* filter) {
  static const char* acts[] = {"ndhwc", "ncdhw", "nhwc", "nchw", "nwc", "ncw"};
  for (const char* a : acts) {
    if (starts_with(t, a)) {
      std::string f = t.substr(std::string(a).size());
      if (!f.empty() && f != "krsc" && f != "kcrs" && f != "ktrsc" && f != "kctrs" && f != "ksc") return "";
      if (filter) *filter = f;
      std::string up;
      for (char c : std::string(a)) up += static_cast<char>(c - 'a' + 'A');
      return up;
    }
  }
  return "";
}

}  // namespace

bool decode_xmma(const Signature& s, Builder& b) {
  if (!flat(s)) return false;
  auto tok = split(s.base, '_', true);
  if (tok.size() < 3 || tok[1] != "xmma") return false;
  int sm = sm_from_token(tok[0]);
  if (sm == 0) return false;
  const std::string& opk = tok[2];
  KernelOp op;
  if (opk == "gemm")
    op = KernelOp::Gemm;
  else if (opk == "fprop")
    op = KernelOp::ConvFprop;
  else if (opk == "dgrad")
    op = KernelOp::ConvDgrad;
  else if (opk == "wgrad")
    op = KernelOp::ConvWgrad;
  else
    return false;

  bool cublas = false, cudnn = false;
  for (const auto& t : tok) {
    cublas |= t == "cublas";
    cudnn |= t == "cudnn";
  }
  if (cublas)
    b.library("cuBLAS", "_cublas");
  else if (cudnn)
    b.library("cuDNN", "_cudnn");
  else if (op == KernelOp::Gemm)
    b.library("cuBLAS", "xmma_gemm (library inferred: GEMM)");
  else
    b.library("cuDNN", "xmma_" + opk + " (library inferred: convolution)");
  b.family("xmma (NVIDIA's tensor-core kernel templates used inside cuBLAS and cuDNN)", tok[1]);
  b.arch(sm, tok[0]);

  std::vector<std::vector<std::string>> groups;
  std::vector<std::string> group_tokens, variants, rest;
  std::string algo;
  bool tc_token = false;
  std::string tc_ev, tc_why;
  std::string layout;
  for (size_t i = 3; i < tok.size(); ++i) {
    const std::string& t = tok[i];
    std::smatch m;
    if (t.empty() || t == "kernel" || t == "5x" || t == "cublas" || t == "cudnn") continue;
    if (t == "implicit" && i + 1 < tok.size() && tok[i + 1] == "gemm") {
      algo = "implicit GEMM";
      b.field("algorithm", "Algorithm",
              "implicit GEMM (the convolution is computed as a GEMM without materialising im2col)", "implicit_gemm");
      ++i;
      continue;
    }
    if (auto types = split_type_run(t); !types.empty()) {
      groups.push_back(types);
      group_tokens.push_back(t);
      continue;
    }
    if (op == KernelOp::Gemm && is_blas_layout(t) && t.size() == 2) {
      layout = t;
      std::string ev = t;
      std::string phrase = blas_layout_phrase(t);
      if (i + 1 < tok.size() && (tok[i + 1] == "n" || tok[i + 1] == "t")) {
        ev += "_" + tok[i + 1];
        phrase +=
            ", output " + std::string(tok[i + 1] == "t" ? "transposed" : "not transposed") + " (" + tok[i + 1] + ")";
        ++i;
      }
      b.field("layout", "Layouts", phrase, ev, phrase);
      continue;
    }
    std::string filter;
    if (std::string act = conv_layout_phrase(t, &filter); !act.empty()) {
      if (!filter.empty()) {
        std::string f;
        for (char c : filter) f += static_cast<char>(c - 'a' + 'A');
        b.field("layout", "Layouts", act + " activations, " + f + " filters", t, act + " input with " + f + " filters");
      } else {
        b.field("output_layout", "Output layout", act, t, act + " output");
      }
      continue;
    }
    static const std::regex tile_re("^tilesize(\\d+x\\d+x\\d+)$"), stage_re("^stage(\\d+)$"),
        warp_re("^warpsize(\\d+x\\d+x\\d+)$"), wg_re("^warpgroupsize(\\d+x\\d+x\\d+)$"),
        tensor_re("^tensor(\\d+x\\d+x\\d+)$");
    // A token of the shape with a dimension parse_dims refuses (over five
    // digits) is left undecoded rather than read as three numbers.
    auto dims3 = [&](const std::regex& re) {
      std::vector<int> d;
      if (std::regex_match(t, m, re)) d = parse_dims(m[1].str());
      return d.size() == 3 ? d : std::vector<int>{};
    };
    if (auto d = dims3(tile_re); !d.empty()) {
      b.field("tile", "Tile (M×N×K)", dims_text(d), t, dims_text(d) + " tiles");
      continue;
    }
    if (std::regex_match(t, m, stage_re)) {
      b.field("stages", "Pipeline stages", m[1].str(), t, m[1].str() + "-stage pipeline");
      continue;
    }
    if (auto d = dims3(warp_re); !d.empty()) {
      const long long n = 1LL * d[0] * d[1] * d[2];  // up to 99999 each: beyond int
      b.field("warps", "Warps per block",
              dims_text(d) + " = " + std::to_string(n) + " warps (" + std::to_string(32 * n) + " threads)", t,
              dims_text(d) + " warps");
      continue;
    }
    if (auto d = dims3(wg_re); !d.empty()) {
      b.field("warps", "Warp groups", dims_text(d) + " warp groups of 4 warps (wgmma)", t,
              dims_text(d) + " warp groups");
      tc_token = true;
      tc_ev = t;
      tc_why = "warp groups issue Hopper's wgmma tensor-core instructions";
      continue;
    }
    if (auto d = dims3(tensor_re); !d.empty()) {
      b.field("instruction", "MMA instruction", dims_text(d) + " (M×N×K per tensor-core instruction)", t);
      tc_token = true;
      tc_ev = t;
      tc_why = t + " names the tensor-core MMA instruction shape";
      continue;
    }
    if (t == "execute" && i + 3 < tok.size() && tok[i + 1] == "segment" && tok[i + 2] == "k") {
      std::string state = tok[i + 3];
      b.field("split_k", "Split-K", "segment-K " + state + " (K not split across blocks)",
              "execute_segment_k_" + state);
      if (state != "off")
        b.field("split_k", "Split-K", "segment-K " + state + " (K split into segments across blocks)",
                "execute_segment_k_" + state, "K split into segments across blocks");
      i += 3;
      continue;
    }
    if (t == "indexed" || t == "wo" || t == "smem" || t == "strided" || t == "unit" || t == "stride") {
      variants.push_back(t);
      continue;
    }
    rest.push_back(t);
  }
  if (!variants.empty()) {
    b.field("variant", "Variant", join(variants, "_") + " (meaning not documented)", join(variants, "_"));
  }

  // Type groups: A·B _ math·accumulator _ epilogue (NVIDIA does not document
  // this; it is the reading consistent with every name seen, e.g.
  // f32f32_tf32f32_f32 = FP32 data, TF32 math, FP32 accumulate).
  std::string input, math, accum;
  if (!groups.empty()) input = groups[0][0];
  if (groups.size() >= 2) {
    math = groups[1][0];
    if (groups[1].size() >= 2) accum = groups[1][1];
  }
  b.types(input, math, accum, "", join(group_tokens, "_"));
  if (groups.size() >= 3)
    b.field("epilogue_type", "Epilogue (alpha/beta) type", display_type(groups[2][0]), group_tokens[2]);
  if (!groups.empty() && groups[0].size() == 2 && groups[0][0] != groups[0][1])
    b.note("the first type group names A and B differently (" + group_tokens[0] + "); shown is A");
  b.note("xmma type groups read as A·B _ math·accumulator _ epilogue; NVIDIA does not document this naming");

  if (tc_token)
    b.tensor_cores(TensorCores::Yes, tc_ev, tc_why);
  else if (!math.empty() && tensor_core_type(math))
    b.tensor_cores(TensorCores::Yes, group_tokens.size() > 1 ? group_tokens[1] : group_tokens[0],
                   display_type(math) + " math runs on tensor cores");
  b.op(op, opk, op == KernelOp::Gemm ? "" : algo);
  b.undecoded(rest);
  return true;
}

// ------------------------------------------------------------------ nvjet

bool decode_nvjet(const Signature& s, Builder& b) {
  if (!flat(s)) return false;
  auto tok = split(s.base, '_', true);
  if (tok.size() < 2 || tok[0] != "nvjet") return false;
  size_t i = 1;
  int sm = sm_from_token(tok[i]);
  if (sm) ++i;
  if (i >= tok.size()) return false;
  b.library("cuBLAS", "nvjet");
  b.family("nvjet (cuBLAS 12+/cuBLASLt GEMM kernels; the naming is not documented)", "nvjet");
  if (sm) b.arch(sm, tok[1]);

  // Three letters: A/B type, compute (accumulator) type, C/D type.
  const std::string& tl = tok[i];
  std::string input, accum, output, math;
  bool letters_ok = tl.size() == 3;
  if (letters_ok) {
    input = type_from_blas_letter(tl[0]);
    accum = type_from_blas_letter(tl[1]);
    output = type_from_blas_letter(tl[2]);
    letters_ok = !input.empty() && !accum.empty() && !output.empty();
  }
  std::string type_ev = tl;
  if (letters_ok) ++i;
  if (i < tok.size() && tok[i] == "tf32") {
    math = "tf32";
    type_ev += "_tf32";
    ++i;
  }
  if (letters_ok) {
    b.types(input, math, accum, output, type_ev);
    b.note("nvjet type letters read as A/B, compute, C/D with s=FP32, h=FP16, t=BF16 (as in cuBLAS's own naming)");
  } else if (!tl.empty()) {
    b.undecoded({tl});
  }

  std::vector<std::vector<int>> dims;
  std::vector<std::string> dims_tok, rest;
  std::vector<std::string> sched;
  for (; i < tok.size(); ++i) {
    const std::string& t = tok[i];
    if (t.empty()) continue;
    if (auto d = parse_dims(t); d.size() == 2) {
      dims.push_back(d);
      dims_tok.push_back(t);
      continue;
    }
    if (t.size() == 3 && is_blas_layout(t) && i + 1 == tok.size()) {
      std::string ab = blas_layout_phrase(to_lower(t.substr(0, 2)));
      b.field("layout", "Layouts", ab + "; third letter " + t.substr(2) + " (probably C/D's layout)", t, ab);
      continue;
    }
    if (t == "splitK" || t == "streamK") {
      b.field("split_k", "Split-K", t == "splitK" ? "split-K across thread blocks" : "stream-K", t,
              t == "splitK" ? "K split across thread blocks (partials summed by a separate kernel)"
                            : "stream-K scheduling");
      continue;
    }
    if (t == "coopA" || t == "coopB") {
      sched.push_back(t);
      continue;
    }
    if (t == "2cta" || t == "1cta") {
      b.field("cta_pairs", "CTA pairs", t == "2cta" ? "2-CTA MMA (two SMs share one MMA, Blackwell)" : "1 CTA per MMA",
              t);
      continue;
    }
    if (t == "bz" || t == "badd" || t == "bias" || t == "relu" || t == "gelu" || t == "h" || t == "v") {
      sched.push_back(t);
      continue;
    }
    rest.push_back(t);
  }
  if (!dims.empty()) b.field("tile", "Tile (M×N)", dims_text(dims[0]), dims_tok[0], dims_text(dims[0]) + " tiles");
  if (dims.size() >= 2) {
    b.field("k_stages", "K tile × stages",
            dims_text(dims[1]) + " (probably K tile " + std::to_string(dims[1][0]) + ", " + std::to_string(dims[1][1]) +
                " stages)",
            dims_tok[1]);
  }
  if (dims.size() >= 3)
    b.field("cluster", "Cluster", dims_text(dims[2]) + " (probably the thread-block cluster shape)", dims_tok[2]);
  if (!sched.empty())
    b.field("variant", "Variant",
            join(sched, ", ") +
                " (undocumented; bz/badd likely beta zero / C added, h/v raster order, coopA/B cooperative schedule)",
            join(sched, "_"));
  if (!math.empty() || (!input.empty() && tensor_core_type(input)))
    b.tensor_cores(TensorCores::Yes, type_ev,
                   (math.empty() ? display_type(input) : display_type(math)) + " operands run on tensor cores");
  b.op(KernelOp::Gemm, "nvjet", "GEMM");
  b.undecoded(rest);
  return true;
}

// ---------------------------------------------------------- cuBLAS helpers

namespace {

// First template argument that is a floating type, as canonical; `ev`
// receives the arguments up to it.
std::string first_cpp_type(const Signature& s, std::string* ev) {
  std::vector<std::string> seen;
  for (const auto& a : s.template_args) {
    seen.push_back(arg_value(a));
    std::string t = type_from_cpp(arg_value(a));
    if (!t.empty() && t != "int32" && t != "int64" && t != "bool") {
      *ev = "<" + join(seen, ", ") + ", …>";
      return t;
    }
  }
  return "";
}

}  // namespace

bool decode_blas_helpers(const Signature& s, Builder& b) {
  const std::string& n = s.base;
  bool lt = s.in_scope("cublasLt");
  if (n == "splitKreduce_kernel") {
    b.library("cuBLASLt", lt ? "cublasLt::" : "splitKreduce_kernel");
    b.op(KernelOp::SplitKReduce, n, "split-K reduction");
    b.family(
        "split-K reduction: sums the partial products of a GEMM whose K dimension was split across thread blocks, "
        "then applies alpha/beta",
        n);
    std::string ev;
    if (std::string t = first_cpp_type(s, &ev); !t.empty()) b.types(t, "", "", "", ev);
    return true;
  }
  if (lt) {
    b.library("cuBLASLt", "cublasLt::");
    if (s.in_scope("epilogue"))
      b.op(KernelOp::Elementwise, "epilogue", "GEMM epilogue (bias/activation)");
    else
      b.op(KernelOp::Helper, n, n);
    return true;
  }
  static const std::regex gemv_re("^gemv(2T|2N|NSP|x|T|N)?_kernel(_val)?$"), sn_re("^gemmSN_([TN]{2})_kernel$");
  std::smatch m;
  if (std::regex_match(n, m, gemv_re)) {
    b.library("cuBLAS", n);
    std::string v = m[1];
    b.op(KernelOp::Gemv, n,
         "matrix-vector product" + std::string(v.find('T') != std::string::npos ? " (A transposed)" : ""));
    std::string ev;
    if (std::string t = first_cpp_type(s, &ev); !t.empty()) b.types(t, "", "", "", ev);
    return true;
  }
  if (std::regex_match(n, m, sn_re)) {
    b.library("cuBLAS", n);
    b.op(KernelOp::Gemv, "gemmSN", "GEMM for small N (gemmSN)");
    std::string l = to_lower(m[1].str());
    b.field("layout", "Layouts (op(A), op(B))", blas_layout_phrase(l), m[1].str(), blas_layout_phrase(l));
    std::string ev;
    if (std::string t = first_cpp_type(s, &ev); !t.empty()) b.types(t, "", "", "", ev);
    return true;
  }
  if (n == "gemmk1_kernel") {
    b.library("cuBLAS", n);
    b.op(KernelOp::Gemm, n, "GEMM with K = 1 (outer product)");
    return true;
  }
  static const char* level1[] = {"dot_kernel",  "asum_kernel",          "nrm2_kernel", "scal_kernel", "axpy_kernel_val",
                                 "axpy_kernel", "reduce_1Block_kernel", "copy_kernel", "swap_kernel"};
  if (s.scopes.empty())
    for (const char* l1 : level1)
      if (n == l1) {
        b.library("cuBLAS", n);
        bool red = n == "dot_kernel" || n == "asum_kernel" || n == "nrm2_kernel" || n == "reduce_1Block_kernel";
        b.op(red ? KernelOp::Reduction : KernelOp::Elementwise, n, "BLAS level 1 " + n.substr(0, n.find('_')));
        return true;
      }
  return false;
}

}  // namespace roofline::prof::detail
