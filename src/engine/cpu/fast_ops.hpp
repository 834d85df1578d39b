// The fast CPU path: register-blocked GEMM and convolution kernels compiled
// for AVX-512, AVX2 and SSE2 and picked at run time (tiles.hpp; the binary
// stays portable), bias and ReLU fused into the forward passes, OpenMP
// threads sized by each op's work (parallel.hpp), and results that do not
// depend on the thread count. Same shapes and conventions as ops.hpp.
#pragma once
#include <cstdint>
#include <functional>

#include "roofline/engine/ops.hpp"

namespace roofline::engine::fast {

void linear_forward(const ops::LinearShape& s, float* out, const float* in, const float* w, const float* b);
void linear_forward_wt(const ops::LinearShape& s, float* out, const float* in, const float* wt, const float* b);
void linear_backward_input(const ops::LinearShape& s, float* din, const float* dpre, const float* w);
void linear_backward_weight(const ops::LinearShape& s, float* dw, float* db, const float* dpre, const float* in);
void linear_backward_weight_sgd(const ops::LinearShape& s, const ops::LinearSgdBuffers& p, const float* dpre,
                                const float* in, const ops::SgdConfig& cfg);

void conv2d_forward(const ops::Conv2dShape& s, float* out, const float* in, const float* w, const float* b);
void conv2d_backward_input(const ops::Conv2dShape& s, float* din, const float* dpre, const float* w);
void conv2d_backward_weight(const ops::Conv2dShape& s, float* dw, float* db, const float* dpre, const float* in);

// The general direct convolution (any stride and padding); conv2d_* above use
// it for shapes the flattened-plane kernels do not take.
void conv2d_forward_direct(const ops::Conv2dShape& s, float* out, const float* in, const float* w, const float* b);
void conv2d_backward_input_direct(const ops::Conv2dShape& s, float* din, const float* dpre, const float* w);
void conv2d_backward_weight_direct(const ops::Conv2dShape& s, float* dw, float* db, const float* dpre, const float* in);

void maxpool2d_forward(const ops::Pool2dShape& s, float* out, std::int32_t* argmax, const float* in);
void maxpool2d_backward(const ops::Pool2dShape& s, float* din, const float* dout, const std::int32_t* argmax);

void activation_forward(const ops::EltwiseShape& s, float* out, const float* in);
void activation_backward(const ops::EltwiseShape& s, float* din, const float* dout, const float* out);

void activation_bias_backward(const ops::BiasGradShape& s, float* dpre, float* db, const float* dout, const float* out);
void softmax_forward(const ops::RowsShape& s, float* out, const float* in);
void softmax_backward(const ops::RowsShape& s, float* din, const float* dout, const float* out);
void log_softmax_forward(const ops::RowsShape& s, float* out, const float* in);
void log_softmax_backward(const ops::RowsShape& s, float* din, const float* dout, const float* out);
// Returns the sum of the rows' losses; counts correct rows into *correct.
double cross_entropy(const ops::RowsShape& s, float* dlogits, const float* logits, const std::int32_t* labels,
                     float grad_scale, std::int64_t* correct);

void sgd_update(const ops::SgdShape& s, float* p, const float* g, float* buf, const ops::SgdConfig& cfg);
// sgd_update's arithmetic on n parameters, on the calling thread (buf null without momentum).
void sgd_span(float* p, const float* g, float* buf, std::int64_t n, const ops::SgdConfig& cfg);
// ops::for_row_chunks on the fast CPU backend.
void for_row_chunks(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& f, double row_flops);
// ops::linear_joins_row_split on the fast CPU backend.
bool linear_joins_row_split(std::int64_t in);
void gather_batch(const ops::BatchShape& s, float* x, std::int32_t* y, const std::uint8_t* images,
                  const std::uint8_t* labels, const std::int32_t* order, std::int64_t first, std::int32_t step);

}  // namespace roofline::engine::fast
