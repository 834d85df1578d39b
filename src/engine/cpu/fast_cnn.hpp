// The fast CPU path of the CNN ops (roofline/engine/ops_cnn.hpp), fp32 only
// (the dispatcher refuses other dtypes): vectorisable loops over a channel's
// run (NCHW) or a row's channels (NHWC), split between threads by parallel.hpp
// into tasks whose bounds depend on the shape alone, so results do not depend
// on the thread count. Statistics are summed per task in fp32 (from a per-channel
// shift, so the variance does not cancel) and across tasks in double.
#pragma once
#include <cstdint>

#include "roofline/engine/ops_cnn.hpp"

namespace roofline::engine::fast {

// fast_batchnorm.cpp
void batchnorm_forward_train(const ops::BatchNormShape& s, float* out, const float* in, const float* residual,
                             const float* gamma, const float* beta, float* running_mean, float* running_var,
                             float* save_mean, float* save_invstd);
void batchnorm_forward_eval(const ops::BatchNormShape& s, float* out, const float* in, const float* residual,
                            const float* gamma, const float* beta, const float* running_mean, const float* running_var);
void batchnorm_backward(const ops::BatchNormShape& s, float* din, float* dgamma, float* dbeta, float* dout,
                        const float* out, const float* in, const float* gamma, const float* save_mean,
                        const float* save_invstd);

// fast_cnn.cpp
void adaptive_avgpool2d_forward(const ops::AvgPoolShape& s, float* out, const float* in);
void adaptive_avgpool2d_backward(const ops::AvgPoolShape& s, float* din, const float* dout);
void add_forward(const ops::EltwiseShape& s, float* out, const float* a, const float* b);
void dropout_forward(const ops::DropoutShape& s, float* out, const float* in, std::uint64_t seed, std::int32_t step);
void dropout_backward(const ops::DropoutShape& s, float* din, const float* dout, std::uint64_t seed, std::int32_t step);

}  // namespace roofline::engine::fast
