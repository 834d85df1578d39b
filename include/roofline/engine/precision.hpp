// The precisions a network runs in, as `roofline bench --precision` names them:
//   fp32  true fp32: fp32 data and fp32 math, TF32 never on (PyTorch with
//         allow_tf32 off on matmuls and cuDNN);
//   tf32  fp32 data, convolutions and GEMMs on the tensor cores in TF32;
//   bf16  mixed precision as PyTorch's autocast: convolutions, GEMMs and the
//         activations between them in bf16 (channels-last on the GPU), fp32
//         master weights, gradients and optimizer state, losses in fp32;
//   fp16  the same in fp16, with dynamic loss scaling (an overflowing step is
//         skipped and counted).
#pragma once
#include <string>
#include <vector>

#include "roofline/engine/tensor.hpp"

namespace roofline::engine {

enum class Precision { FP32, TF32, BF16, FP16 };
const char* to_string(Precision p);  // "fp32", "tf32", "bf16", "fp16"
// Throws Error(Usage) naming the known precisions.
Precision parse_precision(const std::string& s);
std::vector<Precision> parse_precisions(const std::string& csv);

// The dtype of the activations between layers.
DType activation_dtype(Precision p);
// Whether GEMMs and convolutions may use TF32 (fp32 data).
inline bool allows_tf32(Precision p) { return p == Precision::TF32; }
// Whether it needs loss scaling (fp16's range).
inline bool needs_loss_scaling(Precision p) { return p == Precision::FP16; }
// Why a GPU of compute capability major.minor cannot run `p` ("" when it
// can): bf16 and TF32 tensor cores came with Ampere (8.0).
std::string precision_unsupported_reason(Precision p, int major, int minor);

}  // namespace roofline::engine
