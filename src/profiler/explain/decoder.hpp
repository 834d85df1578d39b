// What each family decoder gets and fills (private to explain/).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "roofline/profiler/explain.hpp"
#include "src/profiler/explain/signature.hpp"

namespace roofline::prof::detail {

// Records decoded fields into a KernelInfo, each with its evidence, and
// collects the phrases the summary sentence is made of.
class Builder {
 public:
  explicit Builder(KernelInfo& k) : k_(k) {}
  KernelInfo& info() { return k_; }

  // A field; `phrase` (optional) is what it contributes to the sentence.
  void field(std::string key, std::string label, std::string value, std::string evidence, std::string phrase = {});
  void library(std::string lib, std::string evidence);
  void family(std::string kind, std::string evidence);
  void op(KernelOp op, std::string evidence, std::string detail = {});
  void arch(int sm, std::string evidence);
  // Sets the type members; an empty string leaves one unknown. `evidence`
  // names the tokens they came from.
  void types(std::string input, std::string math, std::string accum, std::string output, std::string evidence);
  void tensor_cores(TensorCores t, std::string evidence, std::string why);
  void note(std::string text) { k_.notes.push_back(std::move(text)); }
  // Tokens no rule decoded: shown, never interpreted.
  void undecoded(const std::vector<std::string>& tokens);

  // Builds the sentence; called once by explain_kernel().
  void finish();

 private:
  KernelInfo& k_;
  std::vector<std::string> phrases_;
  std::string lib_evidence_, op_phrase_;
};

// Each decoder returns true when it recognised the name (and filled `b`).
bool decode_blas_legacy(const Signature& s,
                        Builder& b);                // ampere_sgemm_..., volta_scudnn_..., turing_fp16_s1688gemm_...
bool decode_xmma(const Signature& s, Builder& b);   // sm80_xmma_gemm_..., sm90_xmma_fprop_implicit_gemm_...
bool decode_nvjet(const Signature& s, Builder& b);  // nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT
bool decode_blas_helpers(const Signature& s,
                         Builder& b);  // cublasLt::splitKreduce_kernel, gemv2T_kernel_val, gemmSN_TN_kernel
bool decode_cutlass(const Signature& s,
                    Builder& b);                    // cutlass_80_tensorop_..., cutlass3x_sm90_..., cutlass::Kernel<...>
bool decode_cudnn(const Signature& s, Builder& b);  // cudnn::..., fft2d_r2c_..., op_generic_tensor_kernel
bool decode_pytorch(const Signature& s,
                    Builder& b);  // at::native::..., softmax_warp_forward, multi_tensor_apply_kernel
bool decode_nccl(const Signature& s, Builder& b);
bool decode_triton(const Signature& s, Builder& b);
bool decode_attention(const Signature& s, Builder& b);  // flash_fwd_kernel, fmha_cutlassF_..., cudnn sdpa
bool decode_cub(const Signature& s, Builder& b);
bool decode_roofline(const Signature& s, Builder& b);      // roofline_<op>_<pass>[_<variant>] (the convention)
bool decode_roofline_own(const Signature& s, Builder& b);  // roofline's kernels by name: roofline::kernels::conv2d_regtile<…>

// The flat library name (e.g. "cudnn_infer_ampere_scudnn_...") with wrapper
// prefixes removed and split at '_'; `prefix` receives what was removed.
std::vector<std::string> flat_tokens(std::string_view name, std::string* prefix = nullptr);

}  // namespace roofline::prof::detail
