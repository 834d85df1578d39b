// The im2col path of conv2d on the GPU: see im2col.hpp.
#include <fmt/format.h>

#include <algorithm>

#include "roofline/core/error.hpp"
#include "src/engine/cuda/im2col.hpp"
#include "src/engine/cuda/lowp.hpp"
#include "src/engine/cuda/ops_cuda.hpp"

namespace roofline::engine::cuda_ops {

namespace {

// The most bytes of A built at once (a chunk of images): ResNet-18's conv1 at
// batch 128 in bf16 would need 488 MB whole.
constexpr std::int64_t kIm2colBytes = std::int64_t(128) << 20;

constexpr std::int64_t align256(std::int64_t v) { return (v + 255) / 256 * 256; }
CudaState* mut(const CudaState* st) { return const_cast<CudaState*>(st); }

struct Layout {
  std::int64_t rsc, kp, plane, esize, chunk, parts, a_bytes;
};

Layout layout_of(const ops::Conv2dShape& s) {
  Layout l;
  l.rsc = s.r * s.s * s.c;
  l.kp = (l.rsc + 7) / 8 * 8;
  l.plane = s.oh() * s.ow();
  l.esize = static_cast<std::int64_t>(dtype_size(s.dtype));
  const std::int64_t per_image = l.plane * l.kp * l.esize;
  l.chunk = std::clamp<std::int64_t>(kIm2colBytes / per_image, 1, s.n);
  l.parts = (s.n + l.chunk - 1) / l.chunk;
  l.a_bytes = align256(l.chunk * per_image);
  return l;
}

char* im2col_buffer(CudaState* st, std::int64_t bytes) {
  if (static_cast<size_t>(bytes) > st->im2col.bytes()) {
    require_not_capturing(st, "the im2col convolution's buffer");
    st->retired_workspaces.push_back(std::move(st->im2col));
    st->im2col = cuda::DeviceBuffer<char>(static_cast<size_t>(bytes), "im2col matrix (first convolution)");
  }
  return st->im2col.get();
}

}  // namespace

bool im2col_applies(const ops::Conv2dShape& s) {
  return (s.dtype == DType::BF16 || s.dtype == DType::F16) && s.format == MemoryFormat::NHWC && s.groups == 1 &&
         s.c < 8;
}

bool im2col_bias_fits(const ops::Conv2dShape& s) {
  const Layout l = layout_of(s);
  return l.kp - l.rsc >= 2;
}

void im2col_conv_forward(const CudaState* cst, const ops::Conv2dShape& s, void* out, const void* in, const void* w,
                         const float* b) {
  CudaState* st = mut(cst);
  const Layout l = layout_of(s);
  char* a = im2col_buffer(st, l.a_bytes + align256(s.k * l.kp * l.esize));
  void* wp = a + l.a_bytes;
  const bool bias_in_gemm = b != nullptr && im2col_bias_fits(s);  // im2col.hpp
  launch_pad_rows(st, s.dtype, s.k, l.rsc, l.kp, w, bias_in_gemm ? b : nullptr, wp);
  for (std::int64_t n0 = 0; n0 < s.n; n0 += l.chunk) {
    const std::int64_t images = std::min(l.chunk, s.n - n0);
    launch_im2col_nhwc(st, s.dtype, s, n0, images, l.kp, bias_in_gemm ? 2 : 0, in, a);
    ops::LinearShape g;
    g.n = images * l.plane, g.in = l.kp, g.out = s.k, g.act = s.act, g.dtype = s.dtype;
    g.bias = b != nullptr && !bias_in_gemm;
    linear_forward(st, g, static_cast<char*>(out) + n0 * l.plane * s.k * l.esize, a, wp, g.bias ? b : nullptr);
  }
}

void im2col_conv_backward_weight(const CudaState* cst, const ops::Conv2dShape& s, float* dw, float* db,
                                 const void* dpre, const void* in) {
  CudaState* st = mut(cst);
  const Layout l = layout_of(s);
  char* a = im2col_buffer(st, l.a_bytes + align256(l.parts * s.k * l.kp * std::int64_t(sizeof(float))));
  auto* partial = reinterpret_cast<float*>(a + l.a_bytes);
  for (std::int64_t q = 0; q < l.parts; ++q) {
    const std::int64_t n0 = q * l.chunk, images = std::min(l.chunk, s.n - n0);
    launch_im2col_nhwc(st, s.dtype, s, n0, images, l.kp, 0, in, a);
    ops::LinearShape g;
    g.n = images * l.plane, g.in = l.kp, g.out = s.k, g.bias = false, g.dtype = s.dtype;
    linear_backward_weight(st, g, partial + q * s.k * l.kp, nullptr,
                           static_cast<const char*>(dpre) + n0 * l.plane * s.k * l.esize, a);
  }
  launch_sum_rows(st, l.parts, s.k, l.rsc, l.kp, partial, dw);
  if (db) {
    const std::int64_t scratch = channel_sums_scratch(st, MemoryFormat::NHWC, s.n, s.k, l.plane);
    ensure_workspace(st, static_cast<size_t>(scratch) * sizeof(float), "a bias-gradient sum");
    launch_channel_sums(st, s.dtype, MemoryFormat::NHWC, s.n, s.k, l.plane, db, dpre,
                        reinterpret_cast<float*>(st->workspace.get()));
  }
}

}  // namespace roofline::engine::cuda_ops
