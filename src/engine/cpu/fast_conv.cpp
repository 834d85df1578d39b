// Convolution on the CPU. Stride-1 unpadded convolutions (all the models'
// convolutions: simple-cnn's 1→1 5×5, ece408's 1→4 and 4→16 7×7) run on the
// flattened-plane kernels of tiles.hpp: an output plane is computed as if
// it were as wide as the input (position p = y·W + x), so each tap (c, r, q)
// is one long contiguous multiply-add over p with the input shifted by
// c·H·W + r·W + q — no im2col matrix, no per-row loop overhead, and only the
// OW..W−1 columns of each row wasted (86 → 80, 40 → 34, 28 → 24 wide). Other
// shapes take the direct path (fast_conv_direct.cpp). Large convolutions (the
// real networks': AlexNet, ResNet-18) go to oneDNN where onednn::conv_prefers
// says it is faster (dnnl_conv.hpp; the rule in docs/perf-notes/cpu-onednn.md).
//
// - forward: per (image, block of 4 output planes), into a flattened scratch
//   plane, then copied row by row with bias and ReLU;
// - input gradient: the same kernel over the output gradient padded by R−1,
//   S−1 on every side, with the weights flipped and transposed (a full
//   correlation), per image;
// - weight gradient: dot products of the flattened output gradient with the
//   shifted input, per fixed chunk of 4 images and block of output planes;
//   the chunks' partial sums are added in chunk order.
// Scratch buffers are per thread and only grow, so after the first step no
// pass allocates. Buffers the whole team shares belong to the calling thread
// and reach the team as pointers (inside the parallel region the name of a
// thread_local is each thread's own). Results do not depend on the thread count.
#include <algorithm>
#include <vector>

#include "src/engine/cpu/dnnl_conv.hpp"
#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/tiles.hpp"
#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast {

using std::int64_t;

namespace {

bool flattened(const ops::Conv2dShape& s) { return s.stride == 1 && s.pad == 0; }

double conv_flops(const ops::Conv2dShape& s) {
  return 2.0 * double(s.n) * double(s.k) * double(s.oh() * s.ow()) * double(s.c * s.r * s.s);
}

// Threads for a pass of `pieces` (image, channel-block) pieces split into
// `tasks`: its FLOPs plus each piece's fixed cost (parallel.hpp, kFlopsPerTask).
int conv_threads(const ops::Conv2dShape& s, std::int64_t pieces, std::int64_t tasks) {
  return threads_for(conv_flops(s) + kFlopsPerTask * double(pieces), kFlopsPerThread, tasks);
}

// A per-thread buffer that only grows.
float* scratch(std::vector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

// Rows of a flattened plane (row stride `from_w`) into a dense (rows, cols)
// plane, adding `bias` and applying ReLU (keeping NaN).
void copy_rows(float* __restrict dst, const float* __restrict src, int64_t rows, int64_t cols, int64_t from_w,
               float bias, bool relu) {
  for (int64_t y = 0; y < rows; ++y) {
    const float* a = src + y * from_w;
    float* d = dst + y * cols;
    if (relu) {
#pragma omp simd
      for (int64_t x = 0; x < cols; ++x) {
        const float v = a[x] + bias;
        d[x] = v <= 0.f ? 0.f : v;
      }
    } else {
#pragma omp simd
      for (int64_t x = 0; x < cols; ++x) d[x] = a[x] + bias;
    }
  }
}

}  // namespace

void conv2d_forward(const ops::Conv2dShape& s, float* out, const float* in, const float* w, const float* b) {
  if (const onednn::ConvSpec c{s, s.groups, s.format}; onednn::conv_prefers(c, onednn::Pass::Forward))
    return onednn::conv2d_forward(c, out, in, w, b);
  if (!flattened(s)) return conv2d_forward_direct(s, out, in, w, b);
  const TileSet& ks = tiles();
  const int64_t OH = s.oh(), OW = s.ow(), P = (OH - 1) * s.w + OW, blocks = (s.k + kConvBlock - 1) / kConvBlock;
  const int64_t ostride = (P + 15) / 16 * 16;
  const int threads = conv_threads(s, s.n * blocks, s.n * blocks);
  parallel_for(s.n * blocks, threads, [&](int64_t t) {
    thread_local std::vector<float> buf;
    const int64_t n = t / blocks, k0 = (t % blocks) * kConvBlock;
    const int kb = static_cast<int>(std::min<int64_t>(kConvBlock, s.k - k0));
    float* flat = scratch(buf, kb * ostride);  // (kb, ostride) flattened planes
    ConvPlane c{in + n * s.c * s.h * s.w, s.c, s.h, s.w, s.r, s.s, P, w + k0 * s.c * s.r * s.s, s.c * s.r * s.s,
                flat, ostride, kb};
    ks.conv_plane(c);
    for (int kk = 0; kk < kb; ++kk)
      copy_rows(out + ((n * s.k) + k0 + kk) * OH * OW, flat + kk * ostride, OH, OW, s.w,
                (s.bias && b) ? b[k0 + kk] : 0.f, s.act == ops::Activation::ReLU);
  });
}

void conv2d_backward_input(const ops::Conv2dShape& s, float* din, const float* dpre, const float* w) {
  if (const onednn::ConvSpec c{s, s.groups, s.format}; onednn::conv_prefers(c, onednn::Pass::InputGrad))
    return onednn::conv2d_backward_input(c, din, dpre, w);
  if (!flattened(s)) return conv2d_backward_input_direct(s, din, dpre, w);
  const TileSet& ks = tiles();
  const int64_t OH = s.oh(), OW = s.ow();
  // The output gradient padded by R−1 rows and S−1 columns on each side: a
  // full correlation with the flipped kernel becomes a valid one.
  const int64_t HP = OH + 2 * (s.r - 1), WP = OW + 2 * (s.s - 1);  // = H + R − 1, W + S − 1
  const int64_t P = (s.h - 1) * WP + s.w, ostride = (P + 15) / 16 * 16, taps = s.r * s.s;
  // wf (c, k, r, s) = w (k, c, R−1−r, S−1−q): the caller's thread owns it; the team only reads it.
  thread_local std::vector<float> wflip_buf;
  float* wf = scratch(wflip_buf, s.c * s.k * taps);
  for (int64_t c = 0; c < s.c; ++c)
    for (int64_t k = 0; k < s.k; ++k)
      for (int64_t r = 0; r < s.r; ++r)
        for (int64_t q = 0; q < s.s; ++q)
          wf[((c * s.k + k) * s.r + r) * s.s + q] = w[((k * s.c + c) * s.r + (s.r - 1 - r)) * s.s + (s.s - 1 - q)];
  const int threads = conv_threads(s, s.n, s.n);
  parallel_for(s.n, threads, [&](int64_t n) {
    thread_local std::vector<float> pad_buf, out_buf;
    float* pad = scratch(pad_buf, s.k * HP * WP);  // (k, HP, WP)
    std::fill(pad, pad + s.k * HP * WP, 0.f);
    for (int64_t k = 0; k < s.k; ++k)
      for (int64_t y = 0; y < OH; ++y)
        std::copy_n(dpre + ((n * s.k + k) * OH + y) * OW, OW, pad + (k * HP + y + s.r - 1) * WP + s.s - 1);
    float* flat = scratch(out_buf, kConvBlock * ostride);
    for (int64_t c0 = 0; c0 < s.c; c0 += kConvBlock) {
      const int cb = static_cast<int>(std::min<int64_t>(kConvBlock, s.c - c0));
      ConvPlane c{pad, s.k, HP, WP, s.r, s.s, P, wf + c0 * s.k * taps, s.k * taps, flat, ostride, cb};
      ks.conv_plane(c);
      for (int cc = 0; cc < cb; ++cc)
        copy_rows(din + (n * s.c + c0 + cc) * s.h * s.w, flat + cc * ostride, s.h, s.w, WP, 0.f, false);
    }
  });
}

void conv2d_backward_weight(const ops::Conv2dShape& s, float* dw, float* db, const float* dpre, const float* in) {
  if (const onednn::ConvSpec c{s, s.groups, s.format}; onednn::conv_prefers(c, onednn::Pass::WeightGrad))
    return onednn::conv2d_backward_weight(c, dw, db, dpre, in);
  if (!flattened(s)) return conv2d_backward_weight_direct(s, dw, db, dpre, in);
  const TileSet& ks = tiles();
  const int64_t OH = s.oh(), OW = s.ow(), P = (OH - 1) * s.w + OW, gstride = (P + 15) / 16 * 16;
  const int64_t taps = s.c * s.r * s.s, nw = s.k * taps, blocks = (s.k + kConvBlock - 1) / kConvBlock;
  constexpr int64_t kChunk = 4;  // images per partial sum: fixed, so the order of the sums is too
  const int64_t chunks = (s.n + kChunk - 1) / kChunk, stride = nw + s.k;
  thread_local std::vector<float> partial_buf;
  thread_local std::vector<int64_t> offsets;
  float* partial = scratch(partial_buf, chunks * stride);  // (chunks, nw + k): weights, then biases
  offsets.resize(static_cast<size_t>(taps));
  for (int64_t c = 0; c < s.c; ++c)
    for (int64_t r = 0; r < s.r; ++r)
      for (int64_t q = 0; q < s.s; ++q) offsets[static_cast<size_t>((c * s.r + r) * s.s + q)] = c * s.h * s.w + r * s.w + q;
  const int64_t* tap_off = offsets.data();
  const int threads = conv_threads(s, s.n * blocks, chunks * blocks);
  parallel_for(chunks * blocks, threads, [&](int64_t t) {
    thread_local std::vector<float> g_buf;
    const int64_t ch = t / blocks, k0 = (t % blocks) * kConvBlock;
    const int kb = static_cast<int>(std::min<int64_t>(kConvBlock, s.k - k0));
    float* pw = partial + ch * stride;
    for (int kk = 0; kk < kb; ++kk) {
      std::fill_n(pw + (k0 + kk) * taps, taps, 0.f);
      pw[nw + k0 + kk] = 0.f;
    }
    float* g = scratch(g_buf, kb * gstride);  // (kb, gstride): the output gradient flattened to width W
    for (int64_t n = ch * kChunk; n < std::min(s.n, (ch + 1) * kChunk); ++n) {
      for (int kk = 0; kk < kb; ++kk) {
        const float* src = dpre + (n * s.k + k0 + kk) * OH * OW;
        float* gk = g + kk * gstride;
        // The bias gradient on the way: rows summed in float (vectorised),
        // the rows' sums in double (a sum of signed values that may cancel).
        double bsum = 0;
        for (int64_t y = 0; y < OH; ++y) {
          const float* row = src + y * OW;
          std::copy_n(row, OW, gk + y * s.w);
          if (y + 1 < OH) std::fill_n(gk + y * s.w + OW, s.w - OW, 0.f);
          float rs = 0.f;
#pragma omp simd reduction(+ : rs)
          for (int64_t x = 0; x < OW; ++x) rs += row[x];
          bsum += rs;
        }
        pw[nw + k0 + kk] += static_cast<float>(bsum);
      }
      for (int64_t t0 = 0; t0 < taps; t0 += kWgradTaps) {
        const int nt = static_cast<int>(std::min<int64_t>(kWgradTaps, taps - t0));
        ConvWgrad c{g, gstride, in + n * s.c * s.h * s.w, P, tap_off + t0, kb, nt, pw + k0 * taps + t0, taps};
        ks.conv_wgrad(c);
      }
    }
  });
  sum_chunks(partial, chunks, stride, nw, s.k, dw, db);
}

}  // namespace roofline::engine::fast
