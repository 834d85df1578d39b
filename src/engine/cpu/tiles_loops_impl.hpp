// The small ops' vectorised loops, written once and compiled once per ISA by
// tiles_<isa>.cpp (tiles_isa.inc includes this inside its anonymous namespace,
// in the ISA's loops region; see tiles.hpp): plain loops that GCC vectorises
// for the ISA. The callers (fast_pool.cpp, fast_batch.cpp, fast_activation.cpp,
// fast_sgd.cpp) split the work between threads. The batch gather and max-pool
// repeat the reference's float arithmetic and comparison order exactly (same
// values, same argmax).

// ---- max-pool (fast_pool.cpp) ------------------------------------------------------------
// Row by row of the window, then across the rows: the same winner as the
// reference's raster scan (a later value wins when it is strictly greater or
// NaN, so the first maximum and the last NaN win), because that rule combines
// the same way over a row's fold as over single values.
// ST > 0: the stride as a compile-time constant (the models' pools have stride = kernel),
// so the vectorizer loads whole rows and shuffles instead of gathering x * st;
// ST = 0: the stride `st` given at run time.
//
// Not compiled for AVX-512 (its TileSet takes the AVX2 one): the models' pooled
// rows are 4-40 outputs wide, and a 16-lane main loop never ran on the 12-wide
// rows of simple-cnn's first pool, which all went through the scalar, branchy
// remainder (1.7 us per 24x24 plane on the GPU host); 8 lanes cover them.
#if ROOFLINE_SIMD_BITS != 512
template <int K, int ST>
void pool_plane_k(const float* __restrict ip, float* __restrict o, std::int32_t* __restrict a, std::int64_t W,
                  std::int64_t OH, std::int64_t OW, std::int64_t st_runtime) {
  const std::int64_t st = ST > 0 ? ST : st_runtime;
  for (std::int64_t y = 0; y < OH; ++y) {
    float* oy = o + y * OW;
    std::int32_t* ay = a + y * OW;
    for (std::int64_t r = 0; r < K; ++r) {
      const std::int64_t row = (y * st + r) * W;
      const float* src = ip + row;
#pragma omp simd
      for (std::int64_t x = 0; x < OW; ++x) {
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

void pool_plane(const ops::Pool2dShape& s, const float* ip, float* o, std::int32_t* a) {
  const std::int64_t OH = s.oh(), OW = s.ow();
  if (s.kernel == 2 && s.stride == 2)
    pool_plane_k<2, 2>(ip, o, a, s.w, OH, OW, s.stride);
  else if (s.kernel == 4 && s.stride == 4)
    pool_plane_k<4, 4>(ip, o, a, s.w, OH, OW, s.stride);
  else if (s.kernel == 2)
    pool_plane_k<2, 0>(ip, o, a, s.w, OH, OW, s.stride);
  else if (s.kernel == 3)
    pool_plane_k<3, 0>(ip, o, a, s.w, OH, OW, s.stride);
  else
    pool_plane_k<4, 0>(ip, o, a, s.w, OH, OW, s.stride);
}
#endif

// ---- batch gather (fast_batch.cpp) -------------------------------------------------------
void normalize_row(float* __restrict x, const std::uint8_t* __restrict img, std::int64_t n, float mean,
                   float inv_std) {
  const float k = static_cast<float>(1.0 / 255.0);
#pragma omp simd
  for (std::int64_t j = 0; j < n; ++j) x[j] = (static_cast<float>(img[j]) * k - mean) * inv_std;
}

// Bilinear resize as the reference computes it (resize_sample), split into a
// horizontal pass over the source rows and a vertical pass: each output is
// the same float expression of the same values, so the results are equal.
void resize_image(float* __restrict x, const std::uint8_t* __restrict img, const ops::BatchShape& s,
                  const ResizeTables& t, float* __restrict h /* (in_h, out_w) */) {
  const std::int64_t* x0 = t.x0.data();
  const std::int64_t* x1 = t.x1.data();
  const float* fx = t.fx.data();
  for (std::int64_t y = 0; y < s.in_h; ++y) {
    const std::uint8_t* row = img + y * s.in_w;
    float* hy = h + y * s.out_w;
    for (std::int64_t ox = 0; ox < s.out_w; ++ox)
      hy[ox] = static_cast<float>(row[x0[ox]]) * (1 - fx[ox]) + static_cast<float>(row[x1[ox]]) * fx[ox];
  }
  const float k = static_cast<float>(1.0 / 255.0);
  for (std::int64_t oy = 0; oy < s.out_h; ++oy) {
    const float* top = h + t.y0[static_cast<size_t>(oy)] * s.out_w;
    const float* bot = h + t.y1[static_cast<size_t>(oy)] * s.out_w;
    const float fy = t.fy[static_cast<size_t>(oy)];
    float* xo = x + oy * s.out_w;
#pragma omp simd
    for (std::int64_t ox = 0; ox < s.out_w; ++ox) {
      const float v = top[ox] * (1 - fy) + bot[ox] * fy;
      xo[ox] = (v * k - s.mean) * s.inv_std;
    }
  }
}

// ---- ReLU and the bias gradient (fast_activation.cpp) ------------------------------------
void relu_chunk(float* __restrict out, const float* __restrict in, std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) out[i] = in[i] <= 0.f ? 0.f : in[i];  // keeps NaN, as torch.relu
}

void relu_grad_chunk(float* din, const float* dout, const float* out, std::int64_t n) {
  // din may alias dout (the layers mask the gradient in place)
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) din[i] = out[i] > 0.f ? dout[i] : 0.f;
}

void bias_grad_cols(const ops::BiasGradShape& s, float* dpre, float* db, const float* dout, const float* out,
                    std::int64_t j0, std::int64_t j1) {
  const bool relu = s.act == ops::Activation::ReLU;
  for (std::int64_t j = j0; j < j1; ++j) db[j] = 0.f;
  for (std::int64_t i = 0; i < s.rows; ++i) {
    const float* g = dout + i * s.cols;
    const float* y = out + i * s.cols;
    float* d = dpre + i * s.cols;
#pragma omp simd
    for (std::int64_t j = j0; j < j1; ++j) {
      const float v = relu ? (y[j] > 0.f ? g[j] : 0.f) : g[j];
      d[j] = v;
      db[j] += v;
    }
  }
}

// ---- SGD (fast_sgd.cpp) ------------------------------------------------------------------
// No multiply-add contraction here, on any ISA: an element's update must not
// depend on whether it falls in the vector body or the tail of a call (GCC
// contracted one and not the other), since linear_backward_weight_sgd updates a
// layer's rows in spans that start and end elsewhere than sgd_update's chunks.
#if !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif
void sgd_chunk(float* __restrict p, const float* __restrict g, float* __restrict buf, std::int64_t n, float lr, float mom,
         float wd, bool momentum) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
  if (momentum) {
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) {
      const float d = g[i] + wd * p[i];
      const float m = mom * buf[i] + d;
      buf[i] = m;
      p[i] = p[i] - lr * m;
    }
  } else {
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) p[i] = p[i] - lr * (g[i] + wd * p[i]);
  }
}
#if !defined(__clang__)
#pragma GCC pop_options
#endif
