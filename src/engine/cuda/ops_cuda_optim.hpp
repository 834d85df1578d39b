// The CUDA path of the optimizers, casts and loss scaling
// (roofline/engine/ops_optim.hpp), on the context's stream; defined in
// optim.cu. No CUDA headers: ops_optim.cpp includes this in CUDA builds. Every
// scalar (step counters, scale, found_inf) is device memory, read and written by
// the kernels only, so the calls can be captured in a CUDA graph and replayed.
#pragma once
#include <cstdint>

#include "roofline/engine/ops_optim.hpp"

namespace roofline::engine::cuda_ops {

void sgd_update(const CudaState* st, const ops::SgdShape& s, float* p, const float* g, float* buf,
                const ops::SgdConfig& cfg, std::int32_t* advance_step, const ops::ParamCopy& copy,
                const ops::GradScale& scale);
void adamw_update(const CudaState* st, const ops::AdamWShape& s, float* p, const float* g, float* m, float* v,
                  const ops::AdamWConfig& cfg, const std::int32_t* step, std::int32_t* advance_step,
                  const ops::ParamCopy& copy, const ops::GradScale& scale);
void cast(const CudaState* st, const ops::CastShape& s, void* out, const void* in);
void scale_loss_grad(const CudaState* st, std::int64_t n, float* g, const float* scale);
void grads_check_finite(const CudaState* st, std::int64_t n, const float* g, std::int32_t* found_inf);
void loss_scale_init(const CudaState* st, const ops::LossScaleConfig& cfg, float* scale, float* inv_scale,
                     std::int32_t* tracker, std::int32_t* found_inf, std::int32_t* skipped);
void loss_scale_update(const CudaState* st, const ops::LossScaleConfig& cfg, float* scale, float* inv_scale,
                       std::int32_t* tracker, std::int32_t* found_inf, std::int32_t* skipped);

}  // namespace roofline::engine::cuda_ops
