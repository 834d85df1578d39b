// Max-pool on the CPU (fp32). NCHW: one task per (image, channel) plane. The
// windows of 2, 3 and 4 go through the vectorised plane loop of
// tiles_loops_impl.hpp (per ISA, through tiles()); other sizes through the
// scalar loop here. A padded pool runs them over a copy of the plane with −inf
// borders, then maps the argmax back (a window whose maximum came from the
// border, only possible when its real elements are all −inf, is redone
// exactly). NHWC: one task per output row, every window vectorised across the
// channels. All give the reference's values and argmax exactly.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/parallel.hpp"
#include "src/engine/cpu/tiles.hpp"

namespace roofline::engine::fast {

using std::int64_t;

namespace {

void pool_plane_any(const ops::Pool2dShape& s, const float* ip, float* o, std::int32_t* a) {
  const int64_t OH = s.oh(), OW = s.ow();
  for (int64_t y = 0; y < OH; ++y)
    for (int64_t x = 0; x < OW; ++x) {
      int64_t best = (y * s.stride) * s.w + x * s.stride;
      float m = ip[best];
      for (int64_t r = 0; r < s.kernel; ++r)
        for (int64_t q = 0; q < s.kernel; ++q) {
          const int64_t idx = (y * s.stride + r) * s.w + x * s.stride + q;
          const float v = ip[idx];
          if (v > m || std::isnan(v)) {
            m = v;
            best = idx;
          }
        }
      o[y * OW + x] = m;
      a[y * OW + x] = static_cast<std::int32_t>(best);
    }
}

}  // namespace

namespace {

// One window of a plane (h × w) exactly as the reference takes it (padding
// excluded): its max and the max's index in the plane.
void window_exact(const ops::Pool2dShape& s, const float* ip, int64_t y, int64_t x, float& m, std::int32_t& a) {
  int64_t best = -1;
  for (int64_t r = 0; r < s.kernel; ++r)
    for (int64_t q = 0; q < s.kernel; ++q) {
      const int64_t iy = y * s.stride - s.pad + r, ix = x * s.stride - s.pad + q;
      if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
      const float v = ip[iy * s.w + ix];
      if (best < 0 || v > m || std::isnan(v)) {
        m = v;
        best = iy * s.w + ix;
      }
    }
  a = static_cast<std::int32_t>(best);
}

// Padded NCHW: the plane copied into a (h + 2·pad) × (w + 2·pad) one with −inf
// borders, pooled unpadded, the argmax mapped back to the plane.
void pool_plane_padded(const ops::Pool2dShape& s, const TileSet& ks, const float* ip, float* o, std::int32_t* a) {
  const int64_t Hp = s.h + 2 * s.pad, Wp = s.w + 2 * s.pad, OH = s.oh(), OW = s.ow();
  thread_local std::vector<float> buf;
  buf.assign(static_cast<size_t>(Hp * Wp), -std::numeric_limits<float>::infinity());
  for (int64_t y = 0; y < s.h; ++y) std::copy_n(ip + y * s.w, s.w, buf.data() + (y + s.pad) * Wp + s.pad);
  ops::Pool2dShape sp = s;
  sp.h = Hp;
  sp.w = Wp;
  sp.pad = 0;
  if (s.kernel >= 2 && s.kernel <= 4)
    ks.pool_plane(sp, buf.data(), o, a);
  else
    pool_plane_any(sp, buf.data(), o, a);
  for (int64_t y = 0; y < OH; ++y)
    for (int64_t x = 0; x < OW; ++x) {
      const int64_t i = y * OW + x, iy = a[i] / Wp - s.pad, ix = a[i] % Wp - s.pad;
      if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w)
        window_exact(s, ip, y, x, o[i], a[i]);  // the border won: every real element is −inf
      else
        a[i] = static_cast<std::int32_t>(iy * s.w + ix);
    }
}

// NHWC: output row y of image n, each window's elements compared across the
// channels (contiguous), in the reference's order.
void pool_row_nhwc(const ops::Pool2dShape& s, int64_t n, int64_t y, float* out, std::int32_t* argmax, const float* in) {
  const int64_t C = s.c, OH = s.oh(), OW = s.ow();
  for (int64_t x = 0; x < OW; ++x) {
    float* o = out + ((n * OH + y) * OW + x) * C;
    thread_local std::vector<std::int32_t> unused;  // argmax null: the window's indices go nowhere
    if (!argmax) unused.resize(static_cast<size_t>(C));
    std::int32_t* a = argmax ? argmax + ((n * OH + y) * OW + x) * C : unused.data();
    bool first = true;
    for (int64_t r = 0; r < s.kernel; ++r) {
      const int64_t iy = y * s.stride - s.pad + r;
      if (iy < 0 || iy >= s.h) continue;
      for (int64_t q = 0; q < s.kernel; ++q) {
        const int64_t ix = x * s.stride - s.pad + q;
        if (ix < 0 || ix >= s.w) continue;
        const float* src = in + ((n * s.h + iy) * s.w + ix) * C;
        const auto idx = static_cast<std::int32_t>(iy * s.w + ix);
        if (first) {
          std::copy_n(src, C, o);
          std::fill_n(a, C, idx);
          first = false;
          continue;
        }
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) {
          const float v = src[c];
          const bool take = v > o[c] || v != v;
          o[c] = take ? v : o[c];
          a[c] = take ? idx : a[c];
        }
      }
    }
  }
}

}  // namespace

void maxpool2d_forward(const ops::Pool2dShape& s, float* out, std::int32_t* argmax, const float* in) {
  const int64_t OH = s.oh(), OW = s.ow(), planes = s.n * s.c;
  // A window's compares and selects, not its bytes, set the time (~1 ns per output
  // on the narrow rows of the models' pools).
  const double bytes = 4.0 * double(planes * s.h * s.w), outs = double(planes * OH * OW);
  if (s.format == MemoryFormat::NHWC) {
    const int64_t rows = s.n * OH;
    const int threads = std::max(threads_for(bytes, kBytesPerThread, rows),
                                 threads_for(outs / 8, kElementsPerThread, rows));  // 8 channels a vector
    parallel_for(rows, threads, [&](int64_t t) { pool_row_nhwc(s, t / OH, t % OH, out, argmax, in); });
    return;
  }
  const int threads =
      std::max(threads_for(bytes, kBytesPerThread, planes), threads_for(outs, kElementsPerThread, planes));
  const TileSet& ks = tiles();
  const bool vectorised = s.kernel >= 2 && s.kernel <= 4;
  parallel_for(planes, threads, [&](int64_t p) {
    const float* ip = in + p * s.h * s.w;
    float* o = out + p * OH * OW;
    thread_local std::vector<std::int32_t> unused;  // argmax null: the plane's indices go nowhere
    if (!argmax) unused.resize(static_cast<size_t>(OH * OW));
    std::int32_t* a = argmax ? argmax + p * OH * OW : unused.data();
    if (s.pad > 0)
      pool_plane_padded(s, ks, ip, o, a);
    else if (vectorised)
      ks.pool_plane(s, ip, o, a);
    else
      pool_plane_any(s, ip, o, a);
  });
}

void maxpool2d_backward(const ops::Pool2dShape& s, float* din, const float* dout, const std::int32_t* argmax) {
  const int64_t OH = s.oh(), OW = s.ow(), planes = s.n * s.c;
  if (s.format == MemoryFormat::NHWC) {
    // One task per image: its gradient zeroed, then every window's added at
    // its argmax, windows in order (as the reference).
    const int64_t C = s.c, img = s.h * s.w * C;
    const int threads = threads_for(4.0 * double(planes * s.h * s.w), kBytesPerThread, s.n);
    parallel_for(s.n, threads, [&](int64_t n) {
      float* d = din + n * img;
      std::fill_n(d, img, 0.f);
      for (int64_t i = 0; i < OH * OW; ++i) {
        const float* g = dout + (n * OH * OW + i) * C;
        const std::int32_t* a = argmax + (n * OH * OW + i) * C;
        for (int64_t c = 0; c < C; ++c) d[int64_t(a[c]) * C + c] += g[c];
      }
    });
    return;
  }
  // NCHW: the argmax is a plane index whatever the padding.
  const int threads = threads_for(4.0 * double(planes * s.h * s.w), kBytesPerThread, planes);
  parallel_for(planes, threads, [&](int64_t p) {
    float* d = din + p * s.h * s.w;
    std::fill_n(d, s.h * s.w, 0.f);
    const std::int32_t* a = argmax + p * OH * OW;
    const float* g = dout + p * OH * OW;
    for (int64_t i = 0; i < OH * OW; ++i) d[a[i]] += g[i];  // overlapping windows add up, in order
  });
}

}  // namespace roofline::engine::fast
