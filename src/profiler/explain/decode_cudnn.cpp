// cuDNN's C++-named kernels (cudnn::detail::..., cudnn::ops::..., cudnn::cnn::...)
// and its unscoped helpers (fft2d_r2c_32x32, op_generic_tensor_kernel, ...).
// The flat "<arch>_scudnn_..." and xmma names are decoded in decode_blas.cpp.
#include <regex>

#include "src/profiler/explain/decoder.hpp"
#include "roofline/core/strings.hpp"
#include "src/profiler/explain/tokens.hpp"

namespace roofline::prof::detail {

namespace {

std::string first_type(const Signature& s) {
  for (const auto& a : s.template_args) {
    std::string t = type_from_cpp(arg_value(a));
    if (!t.empty() && t != "int32" && t != "int64" && t != "bool") return t;
  }
  return "";
}

void conv_engine(Builder& b, const Signature& s, KernelOp op, const std::string& algo) {
  b.op(op, s.base, algo);
  std::string t = first_type(s);
  if (!t.empty()) {
    b.types(t, "", "", "", "<" + s.template_args[0] + ", …>");
    if (t == "fp32" || t == "fp64")
      b.tensor_cores(
          TensorCores::No, s.base,
          "cuDNN's own C++ engines run FFMA on CUDA cores; its tensor-core kernels are xmma or CUTLASS kernels");
  }
}

}  // namespace

bool decode_cudnn(const Signature& s, Builder& b) {
  const std::string& n = s.base;
  bool scoped = !s.scopes.empty() && s.scopes[0] == "cudnn";
  std::smatch m;

  // Unscoped helpers that only cuDNN ships.
  static const std::regex fft_re("^fft(\\d)d_(r2c|c2r|c2c)_(\\d+x\\d+)$");
  if (std::regex_match(n, m, fft_re)) {
    b.library("cuDNN", n);
    b.op(KernelOp::Fft, n,
         std::string(m[2] == "r2c"   ? "forward"
                     : m[2] == "c2r" ? "inverse"
                                     : "complex") +
             " " + m[1].str() + "-D FFT (FFT-based convolution)");
    b.field("tile", "FFT tile", m[3].str(), m[3].str());
    if (std::string t = first_type(s); !t.empty()) b.types(t, "", "", "", "template arguments");
    return true;
  }
  if (n == "flip_filter") {
    b.library("cuDNN", n);
    b.op(KernelOp::Layout, n, "filter flip (FFT / Winograd convolution setup)");
    return true;
  }
  if (n == "op_generic_tensor_kernel") {
    b.library("cuDNN", n);
    std::string code;
    for (const auto& a : s.template_args)
      if (contains(a, "cudnnGenericOp_t")) code = arg_value(a);
    b.op(KernelOp::Elementwise, n,
         "generic tensor op" + (code.empty() ? std::string() : " (cudnnGenericOp_t " + code + ")"));
    if (std::string t = first_type(s); !t.empty()) b.types(t, "", "", "", "template arguments");
    b.note(
        "cuDNN's generic tensor kernel implements cudnnOpTensor/cudnnAddTensor-style operations; the opcode's meaning "
        "is internal");
    return true;
  }
  if ((n == "nchwToNhwcKernel" || n == "nhwcToNchwKernel") && (scoped || s.scopes.empty())) {
    b.library("cuDNN", scoped ? "cudnn::" : n);
    b.op(KernelOp::Layout, n, n == "nchwToNhwcKernel" ? "NCHW → NHWC conversion" : "NHWC → NCHW conversion");
    if (std::string t = first_type(s); !t.empty()) b.types(t, "", "", "", "template arguments");
    return true;
  }
  if (!scoped) return false;

  b.library("cuDNN", "cudnn::");
  if (n == "implicit_convolve_sgemm" || n == "implicit_convolveNd_sgemm" || n == "implicit_convolve_hhgemm" ||
      n == "implicit_convolve_dgemm") {
    conv_engine(b, s, KernelOp::ConvFprop, "implicit GEMM");
    if (!first_type(s).size()) {
      std::string letter = n.substr(n.rfind('_') + 1, 1);
      b.types(type_from_blas_letter(letter[0]), "", "", "", n.substr(n.rfind('_') + 1));
      b.tensor_cores(TensorCores::No, n.substr(n.rfind('_') + 1), "cuDNN's own C++ engines run on CUDA cores");
    }
    return true;
  }
  if (n == "explicit_convolve_sgemm") {
    conv_engine(b, s, KernelOp::ConvFprop, "explicit GEMM (im2col then GEMM)");
    return true;
  }
  static const std::regex dgrad_re("^dgrad(2d|3d)?_(alg\\d+)(_\\d+)?(_engine)?$|^dgrad_engine$");
  static const std::regex wgrad_re("^wgrad(2d|3d)?_(alg\\d+)(_\\d+)?(_engine)?$|^wgrad_engine$");
  if (std::regex_match(n, m, dgrad_re)) {
    conv_engine(b, s, KernelOp::ConvDgrad, m[2].matched ? "cuDNN " + m[2].str() : "");
    return true;
  }
  if (std::regex_match(n, m, wgrad_re)) {
    conv_engine(b, s, KernelOp::ConvWgrad, m[2].matched ? "cuDNN " + m[2].str() : "");
    return true;
  }
  if (contains(n, "winograd") || contains(s.function, "winograd")) {
    b.op(n == "generateWinogradTilesKernel" ? KernelOp::Helper : KernelOp::Conv,
         contains(n, "winograd") ? n : "winograd", "Winograd transform");
    if (std::string t = first_type(s); !t.empty()) b.types(t, "", "", "", "template arguments");
    return true;
  }
  static const std::regex bn_re("^bn_(fw|bw)_(tr|inf)?_?1C11_.*$");
  if (std::regex_match(n, m, bn_re)) {
    std::string what = m[1] == "bw"    ? "batch norm backward"
                       : m[2] == "inf" ? "batch norm forward (inference)"
                                       : "batch norm forward (training)";
    b.op(KernelOp::Normalization, n, what);
    if (contains(n, "NHWC")) b.field("layout", "Tensor layout", "NHWC", "NHWC");
    if (contains(n, "NCHW")) b.field("layout", "Tensor layout", "NCHW", "NCHW");
    if (std::string t = first_type(s); !t.empty()) b.types(t, "", "", "", "template arguments");
    return true;
  }
  if (contains(n, "pooling")) {
    std::string kind = contains(s.text, "maxpooling") ? "max " : contains(s.text, "averpooling") ? "average " : "";
    b.op(KernelOp::Pooling, n, kind + (contains(n, "_bw") ? "pooling backward" : "pooling forward"));
    if (std::string t = first_type(s); !t.empty()) b.types(t, "", "", "", "template arguments");
    return true;
  }
  if (starts_with(n, "activation_")) {
    b.op(KernelOp::Elementwise, n, contains(n, "_bw") ? "activation backward" : "activation forward");
    return true;
  }
  if (starts_with(n, "softmax_")) {
    b.op(KernelOp::Softmax, n, "softmax");
    return true;
  }
  if (starts_with(n, "compute") && contains(n, "Offsets")) {
    b.op(KernelOp::Helper, n, "implicit-GEMM offset table");
    return true;
  }
  if (n == "scalePackedTensor_kernel" || n == "setOutputKernel" || n == "setTensor4d_kernel") {
    b.op(KernelOp::Elementwise, n, n);
    return true;
  }
  b.op(KernelOp::Unknown, n, n);
  b.note("a cuDNN kernel that roofline does not decode further");
  return true;
}

}  // namespace roofline::prof::detail
