// The fast CPU path's convolutions and Linear layers on oneDNN (Debian's
// libdnnl-dev, 2.x, OpenMP runtime), for the large shapes of real networks
// (AlexNet, ResNet-18) where it beats our own tiles; fast_conv.cpp and
// fast_linear.cpp ask conv_prefers / linear_prefers and send those shapes here
// (the rule and the measurements that set it: docs/perf-notes/cpu-onednn.md).
//
// fp32 only. Each distinct shape gets its primitives on its first call (and
// the buffers of any reorder and the scratchpad with them); later calls of the
// same shape allocate nothing. Primitives, buffers and the stream are per
// calling thread (thread_local caches), so concurrent calls never share a
// scratchpad; the engine is one for the process. oneDNN runs on libgomp's
// threads, omp_get_max_threads() of them (Context::cpu_threads()), the whole
// team for every call (libgomp re-creates threads when team sizes change:
// docs/perf-notes/cpu-threads.md). Inside one of the fast path's parallel
// regions (ops::for_row_chunks) a call runs on the calling thread alone, as
// our tiles do there: each thread of the region would otherwise open a team of
// its own.
//
// Layouts are the caller's, plain: NCHW activations with (k, c/groups, r, s)
// weights, or NHWC activations with (k, r, s, c/groups) weights. Each
// primitive is asked first in those layouts; where oneDNN's implementation for
// them is not a JIT one (a reference or im2col-GEMM loop), it is created again
// with the layouts of its choice (format_tag::any) and the operands are
// reordered each call into buffers kept with the primitive. Weights are
// reordered on every call: they change between training steps and nothing
// here can tell when they have not.
//
// Results depend on oneDNN's blocking and thread count (a weight gradient's
// sum over the batch is split between threads), unlike our own tiles', whose
// results are the same for any thread count; they agree with the float64
// reference within the harness's bounds.
#pragma once
#include <cstdint>
#include <string>

#include "roofline/engine/ops.hpp"
#include "roofline/engine/tensor.hpp"

namespace roofline::engine::fast::onednn {

enum class Pass : std::uint8_t { Forward, InputGrad, WeightGrad };

// A convolution as oneDNN takes it: today's Conv2dShape (c and k count all
// channels) with the groups and layout that H4's Conv2dShape gains.
struct ConvSpec {
  ops::Conv2dShape s;
  std::int64_t groups = 1;  // divides s.c and s.k
  MemoryFormat format = MemoryFormat::NCHW;
};

// Whether our tiles have this convolution at all: NCHW, ungrouped.
bool ours_takes(const ConvSpec& c);
// Whether oneDNN runs this pass: where our tiles do not take it, else where it
// is faster (measured; the rule in docs/perf-notes/cpu-onednn.md): every
// convolution but the stride-1 unpadded ones of at most 4 input channels and
// those under one thread's worth of FLOPs; Linear layers of at least 2^18 weights.
bool conv_prefers(const ConvSpec& c, Pass p);
bool linear_prefers(const ops::LinearShape& s, Pass p);
// For tests and measurements: Rule (the default) lets *_prefers decide;
// Always sends every call outside a parallel region to oneDNN, Never none.
enum class Choice : std::uint8_t { Rule, Always, Never };
void set_choice_for_testing(Choice c);

// out = act(conv(in, w) + b). out (n, k, oh, ow) or (n, oh, ow, k); in (n, c, h, w)
// or (n, h, w, c); w (k, c/groups, r, s) or (k, r, s, c/groups); b (k) or null.
void conv2d_forward(const ConvSpec& c, float* out, const float* in, const float* w, const float* b);
// din from dpre (the output's layout) and w; overwrites din.
void conv2d_backward_input(const ConvSpec& c, float* din, const float* dpre, const float* w);
// dw (w's layout) and db (k) or null from dpre and in; overwrites both.
void conv2d_backward_weight(const ConvSpec& c, float* dw, float* db, const float* dpre, const float* in);

// Linear on oneDNN's matmul over the plain matrices (no weight reorder: w (out,
// in) is read as wᵀ through its strides). out (n, out) = act(in (n, in) · wᵀ + b).
void linear_forward(const ops::LinearShape& s, float* out, const float* in, const float* w, const float* b);
// The same over weights stored transposed, wt (in, out) (ops::linear_forward_wt).
void linear_forward_wt(const ops::LinearShape& s, float* out, const float* in, const float* wt, const float* b);
// din (n, in) = dpre (n, out) · w (out, in)
void linear_backward_input(const ops::LinearShape& s, float* din, const float* dpre, const float* w);
// dw (out, in) = dpreᵀ · in; db (out) = Σ_rows dpre (db may be null)
void linear_backward_weight(const ops::LinearShape& s, float* dw, float* db, const float* dpre, const float* in);

// The implementation oneDNN picked for a pass ("brg:avx512_core", "jit:avx2",
// …) and whether it reorders activations or weights around it, for the perf
// notes and the tests ("" before the shape's first call on this thread).
std::string conv_impl(const ConvSpec& c, Pass p);

}  // namespace roofline::engine::fast::onednn
