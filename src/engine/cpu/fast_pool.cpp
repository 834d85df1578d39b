// Max-pool on the CPU: one task per (image, channel) plane. The windows of 2,
// 3 and 4 go through the vectorised plane loop of tiles_loops_impl.hpp (per
// ISA, through tiles()); other sizes through the scalar loop here. Both give
// the reference's values and argmax exactly.
#include <algorithm>
#include <cmath>

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

void maxpool2d_forward(const ops::Pool2dShape& s, float* out, std::int32_t* argmax, const float* in) {
  const int64_t OH = s.oh(), OW = s.ow(), planes = s.n * s.c;
  // A window's compares and selects, not its bytes, set the time (~1 ns per output
  // on the narrow rows of the models' pools).
  const int threads = std::max(threads_for(4.0 * double(planes * s.h * s.w), kBytesPerThread, planes),
                               threads_for(double(planes * OH * OW), kElementsPerThread, planes));
  const TileSet& ks = tiles();
  const bool vectorised = s.kernel >= 2 && s.kernel <= 4;
  parallel_for(planes, threads, [&](int64_t p) {
    const float* ip = in + p * s.h * s.w;
    float* o = out + p * OH * OW;
    std::int32_t* a = argmax + p * OH * OW;
    if (vectorised)
      ks.pool_plane(s, ip, o, a);
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
