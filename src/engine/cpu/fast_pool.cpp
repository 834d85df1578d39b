// Max-pool on the CPU: one task per (image, channel) plane. The windows of 2,
// 3 and 4 go through a vectorised plane loop (one clone per ISA, picked at
// load time); other sizes through a scalar loop. Both give the reference's
// values and argmax exactly.
#include <algorithm>
#include <cmath>

#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast {

using std::int64_t;

namespace {

// ---- max-pool -------------------------------------------------------------------------
// Row by row of the window, then across the rows: the same winner as the
// reference's raster scan (a later value wins when it is strictly greater or
// NaN, so the first maximum and the last NaN win), because that rule combines
// the same way over a row's fold as over single values.
// ST > 0: the stride as a compile-time constant (the models' pools have stride = kernel),
// so the vectorizer loads whole rows and shuffles instead of gathering x * st;
// ST = 0: the stride `st` given at run time.
//
// No AVX-512 clone: the models' pooled rows are 4-40 outputs wide, and a 16-lane
// main loop never ran on the 12-wide rows of simple-cnn's first pool, which all
// went through the scalar, branchy remainder (1.7 us per 24x24 plane on the GPU
// host, 2026-11-24); 8 lanes cover them.
#define ROOFLINE_CLONES_NARROW __attribute__((target_clones("avx2", "default")))
template <int K, int ST>
ROOFLINE_CLONES_NARROW void pool_plane_k(const float* __restrict ip, float* __restrict o, std::int32_t* __restrict a,
                                  int64_t W, int64_t OH, int64_t OW, int64_t st_runtime) {
  const int64_t st = ST > 0 ? ST : st_runtime;
  for (int64_t y = 0; y < OH; ++y) {
    float* oy = o + y * OW;
    std::int32_t* ay = a + y * OW;
    for (int64_t r = 0; r < K; ++r) {
      const int64_t row = (y * st + r) * W;
      const float* src = ip + row;
#pragma omp simd
      for (int64_t x = 0; x < OW; ++x) {
        const float* w = src + x * st;
        float m = w[0];
        int q = 0;
        for (int j = 1; j < K; ++j) {
          const float v = w[j];
          const bool take = v > m || v != v;
          m = take ? v : m;
          q = take ? j : q;
        }
        const std::int32_t idx = static_cast<std::int32_t>(row + x * st + q);
        if (r == 0) {
          oy[x] = m;
          ay[x] = idx;
        } else {
          const bool take = m > oy[x] || m != m;
          oy[x] = take ? m : oy[x];
          ay[x] = take ? idx : ay[x];
        }
      }
    }
  }
}

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

void maxpool2d_forward(const ops::Pool2dShape& s, float* out, std::int32_t* argmax, const float* in) {
  const int64_t OH = s.oh(), OW = s.ow(), planes = s.n * s.c;
  // A window's compares and selects, not its bytes, set the time (~1 ns per output
  // on the narrow rows of the models' pools).
  const int threads = std::max(threads_for(4.0 * double(planes * s.h * s.w), kBytesPerThread, planes),
                               threads_for(double(planes * OH * OW), kElementsPerThread, planes));
  parallel_for(planes, threads, [&](int64_t p) {
    const float* ip = in + p * s.h * s.w;
    float* o = out + p * OH * OW;
    std::int32_t* a = argmax + p * OH * OW;
    if (s.kernel == 2 && s.stride == 2)
      pool_plane_k<2, 2>(ip, o, a, s.w, OH, OW, s.stride);
    else if (s.kernel == 4 && s.stride == 4)
      pool_plane_k<4, 4>(ip, o, a, s.w, OH, OW, s.stride);
    else if (s.kernel == 2)
      pool_plane_k<2, 0>(ip, o, a, s.w, OH, OW, s.stride);
    else if (s.kernel == 3)
      pool_plane_k<3, 0>(ip, o, a, s.w, OH, OW, s.stride);
    else if (s.kernel == 4)
      pool_plane_k<4, 0>(ip, o, a, s.w, OH, OW, s.stride);
    else
      pool_plane_any(s, ip, o, a);
  });
}

void maxpool2d_backward(const ops::Pool2dShape& s, float* din, const float* dout, const std::int32_t* argmax) {
  const int64_t OH = s.oh(), OW = s.ow(), planes = s.n * s.c;
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
