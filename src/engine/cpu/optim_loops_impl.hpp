// The optimizer and cast loops of optim_loops.hpp, included by
// optim_loops_isa.inc inside its anonymous namespace, in the ISA's loops region.
// Written as select-based element loops (no branches on the values) so that
// GCC vectorises them; no multiply-add contraction (an element's value must not
// depend on whether it falls in the vector body or the tail, nor on the ISA).

// (The square root vectorises because these files are compiled with
// -fno-math-errno: CMakeLists.txt. Calls to functions outside this region are
// not inlined into its functions, whose optimisation attributes differ: hence
// __builtin_bit_cast rather than std::bit_cast.)
#if !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

inline std::uint32_t bits_of(float f) { return __builtin_bit_cast(std::uint32_t, f); }
inline float float_of(std::uint32_t u) { return __builtin_bit_cast(float, u); }
// All ones when c, else 0: selects written as bit masks, which GCC vectorises
// where it leaves nested conditionals as branches.
inline std::uint32_t mask(bool c) { return 0u - static_cast<std::uint32_t>(c); }

void sgd_chunk(float* __restrict p, const float* __restrict g, float* __restrict buf, std::int64_t n, float lr,
               float mom, float wd, float inv, SgdMode mode) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
  switch (mode) {
    case SgdMode::Plain:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) p[i] = p[i] - lr * (g[i] * inv + wd * p[i]);
      break;
    case SgdMode::Momentum:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) {
        const float d = g[i] * inv + wd * p[i];
        const float b = mom * buf[i] + d;
        buf[i] = b;
        p[i] = p[i] - lr * b;
      }
      break;
    case SgdMode::Nesterov:
#pragma omp simd
      for (std::int64_t i = 0; i < n; ++i) {
        const float d = g[i] * inv + wd * p[i];
        const float b = mom * buf[i] + d;
        buf[i] = b;
        p[i] = p[i] - lr * (d + mom * b);
      }
      break;
  }
}

void adamw_chunk(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v,
                 std::int64_t n, const ref::AdamWScalars<float>& s) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
  const float decay = s.decay, w1 = s.w1, w1c = 1.0f - s.w1, b2 = s.beta2, w2 = s.w2, eps = s.eps, ss = s.step_size,
              bc2 = s.bc2_sqrt, inv = s.inv_scale;
  // The two forms of ATen's lerp, chosen by the weight (a scalar) outside the loop.
  if (s.w1_small) {
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) {
      const float gi = g[i] * inv;
      const float pi = p[i] * decay;
      const float mi = m[i] + w1 * (gi - m[i]);
      const float vi = v[i] * b2 + (w2 * gi) * gi;
      const float denom = __builtin_sqrtf(vi) / bc2 + eps;
      m[i] = mi;
      v[i] = vi;
      p[i] = pi - ss * (mi / denom);
    }
  } else {
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) {
      const float gi = g[i] * inv;
      const float pi = p[i] * decay;
      const float mi = gi - (gi - m[i]) * w1c;
      const float vi = v[i] * b2 + (w2 * gi) * gi;
      const float denom = __builtin_sqrtf(vi) / bc2 + eps;
      m[i] = mi;
      v[i] = vi;
      p[i] = pi - ss * (mi / denom);
    }
  }
}

// bf16_from_float of half.hpp without its branch.
void f32_to_bf16(std::uint16_t* __restrict out, const float* __restrict in, std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint32_t u = bits_of(in[i]);
    const std::uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const std::uint32_t nan = (u >> 16) | 0x40u;
    out[i] = static_cast<std::uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
  }
}

// f16_from_float of half.hpp without its branches: all three results computed,
// one selected. Subnormal results: a·2^24 rounded to an integer by adding 2^23
// (exact for values below 2^23, rounding to nearest even as nearbyint does) and
// reading the integer from the sum's mantissa.
void f32_to_f16(std::uint16_t* __restrict out, const float* __restrict in, std::int64_t n) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint32_t u = bits_of(in[i]);
    const std::uint32_t sign = (u >> 16) & 0x8000u;
    const std::uint32_t a = u & 0x7fffffffu;
    std::uint32_t r = a - 0x38000000u;
    r += 0xfffu + ((r >> 13) & 1u);
    const std::uint32_t normal = r >> 13;
    const std::uint32_t sub = bits_of(float_of(a) * 16777216.0f + 8388608.0f) - 0x4b000000u;
    const std::uint32_t special = 0x7c00u | ((a > 0x7f800000u ? 1u : 0u) << 9);  // inf, or NaN 0x7e00
    const std::uint32_t big = mask(a >= 0x477ff000u), small = mask(a < 0x38800000u) & ~big;
    const std::uint32_t h = (special & big) | (sub & small) | (normal & ~(big | small));
    out[i] = static_cast<std::uint16_t>(sign | h);
  }
}

void bf16_to_f32(float* __restrict out, const std::uint16_t* __restrict in, std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) out[i] = float_of(static_cast<std::uint32_t>(in[i]) << 16);
}

// float_from_f16 of half.hpp without its branches.
void f16_to_f32(float* __restrict out, const std::uint16_t* __restrict in, std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint32_t h = in[i];
    const std::uint32_t sign = (h & 0x8000u) << 16;
    const std::uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    const std::uint32_t sub = bits_of(static_cast<float>(static_cast<std::int32_t>(m)) * 5.9604644775390625e-8f);
    const std::uint32_t inf_nan = 0x7f800000u | (m << 13);
    const std::uint32_t normal = ((e + 112u) << 23) | (m << 13);
    const std::uint32_t is_sub = mask(e == 0), is_special = mask(e == 31);
    out[i] = float_of(sign | (sub & is_sub) | (inf_nan & is_special) | (normal & ~(is_sub | is_special)));
  }
}

bool any_nonfinite(const float* __restrict in, std::int64_t n) {
  std::uint32_t bad = 0;
#pragma omp simd reduction(| : bad)
  for (std::int64_t i = 0; i < n; ++i) bad |= (bits_of(in[i]) & 0x7f800000u) == 0x7f800000u ? 1u : 0u;
  return bad != 0;
}
