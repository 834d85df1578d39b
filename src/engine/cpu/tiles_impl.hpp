// The fast CPU path's register-blocked kernels, written once against simd.hpp's
// V and compiled once per ISA by tiles_<isa>.cpp (tiles_isa.inc includes this
// inside an anonymous namespace, after the target pragma). See tiles.hpp for
// what each computes.
//
// Register blocking: every kernel keeps a block of accumulators in registers
// (KB×PV, MR×NR) so that each value loaded feeds several FMAs. Block sizes
// depend on the register file: 32 vector registers with AVX-512, 16 below.
//
// Determinism: the block shape only decides which elements one call computes
// together, never the order of an element's own sum (its FMAs run over k, or
// (c, r, q), in one fixed order, and horizontal sums use V::hsum4's fixed
// tree), so edge blocks, tails and any tiling give bitwise the same values.

#if ROOFLINE_SIMD_BITS == 512
constexpr int kNtMr = 4, kNtNr = 6;  // 24 accumulators + 4 A vectors + 1 B vector
// Broadcast blocks 8 rows tall: the fast CPU path's row split gives a thread 8
// rows at batch 128, so a thread's call streams B once (6 × 4 blocks took 6 + 2
// rows: 46.8–49.4 against 39.5–39.7 µs for simple-mlp's first layer at 8 rows
// on each of 16 threads of the GPU host).
constexpr int kBcMr = 8, kBcNv = 3;  // 24 accumulators + 3 B vectors + 1 broadcast
constexpr int conv_pv(int kb) { return kb == 1 ? 8 : kb == 2 ? 8 : kb == 3 ? 6 : 5; }
#else
constexpr int kNtMr = 3, kNtNr = 3;  // 9 + 3 + 1 of 16 registers
constexpr int kBcMr = 4, kBcNv = 2;  // 8 + 2 + 1
constexpr int conv_pv(int kb) { return kb == 1 ? 6 : kb == 2 ? 4 : kb == 3 ? 3 : 2; }
#endif
constexpr int W = V::W;

#define ROOFLINE_UNROLL _Pragma("GCC unroll 16")

// ---- C = A · Bᵀ (dot products along K) ------------------------------------------------
template <int MR, int NR>
void nt_block(const GemmNt& g, std::int64_t i, std::int64_t j) {
  V::T acc[MR][NR];
  ROOFLINE_UNROLL for (int r = 0; r < MR; ++r) ROOFLINE_UNROLL for (int c = 0; c < NR; ++c) acc[r][c] = V::zero();
  const float* a[MR];
  const float* b[NR];
  ROOFLINE_UNROLL for (int r = 0; r < MR; ++r) a[r] = g.A + (i + r) * g.lda;
  ROOFLINE_UNROLL for (int c = 0; c < NR; ++c) b[c] = g.B + (j + c) * g.ldb;
  std::int64_t k = 0;
  for (; k + W <= g.K; k += W) {
    V::T av[MR];
    ROOFLINE_UNROLL for (int r = 0; r < MR; ++r) av[r] = V::load(a[r] + k);
    ROOFLINE_UNROLL for (int c = 0; c < NR; ++c) {
      const V::T bv = V::load(b[c] + k);
      ROOFLINE_UNROLL for (int r = 0; r < MR; ++r) acc[r][c] = V::fma(av[r], bv, acc[r][c]);
    }
  }
  if (k < g.K) {
    const int n = static_cast<int>(g.K - k);
    V::T av[MR];
    ROOFLINE_UNROLL for (int r = 0; r < MR; ++r) av[r] = V::load_n(a[r] + k, n);
    ROOFLINE_UNROLL for (int c = 0; c < NR; ++c) {
      const V::T bv = V::load_n(b[c] + k, n);
      ROOFLINE_UNROLL for (int r = 0; r < MR; ++r) acc[r][c] = V::fma(av[r], bv, acc[r][c]);
    }
  }
  ROOFLINE_UNROLL for (int r = 0; r < MR; ++r) {
    float* out = g.C + (i + r) * g.ldc + j;
    ROOFLINE_UNROLL for (int c0 = 0; c0 < NR; c0 += 4) {
      const V::T z = V::zero();
      __m128 s = V::hsum4(acc[r][c0], c0 + 1 < NR ? acc[r][c0 + 1] : z, c0 + 2 < NR ? acc[r][c0 + 2] : z,
                          c0 + 3 < NR ? acc[r][c0 + 3] : z);
      const int n = NR - c0 < 4 ? NR - c0 : 4;
      if (g.bias) {
        alignas(16) float bb[4] = {0.f, 0.f, 0.f, 0.f};
        for (int t = 0; t < n; ++t) bb[t] = g.bias[j + c0 + t];
        s = _mm_add_ps(s, _mm_load_ps(bb));
      }
      if (g.relu) s = relu4(s);
      if (n == 4) {
        _mm_storeu_ps(out + c0, s);
      } else {
        alignas(16) float t4[4];
        _mm_store_ps(t4, s);
        for (int t = 0; t < n; ++t) out[c0 + t] = t4[t];
      }
    }
  }
}

using NtFn = void (*)(const GemmNt&, std::int64_t, std::int64_t);
template <int MR, int... NRs>
constexpr std::array<NtFn, sizeof...(NRs)> nt_row(std::integer_sequence<int, NRs...>) {
  return {&nt_block<MR, NRs + 1>...};
}
template <int... MRs>
constexpr std::array<std::array<NtFn, kNtNr>, sizeof...(MRs)> nt_table(std::integer_sequence<int, MRs...>) {
  return {nt_row<MRs + 1>(std::make_integer_sequence<int, kNtNr>{})...};
}
constexpr auto kNtTable = nt_table(std::make_integer_sequence<int, kNtMr>{});

void gemm_nt(const GemmNt& g, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) {
  // Columns outer: the NR rows of B stay in L1 while the row blocks of A pass.
  for (std::int64_t j = j0; j < j1; j += kNtNr) {
    const int nr = static_cast<int>(j1 - j < kNtNr ? j1 - j : kNtNr);
    for (std::int64_t i = i0; i < i1; i += kNtMr) {
      const int mr = static_cast<int>(i1 - i < kNtMr ? i1 - i : kNtMr);
      kNtTable[static_cast<size_t>(mr - 1)][static_cast<size_t>(nr - 1)](g, i, j);
    }
  }
}

// ---- C = A' · B (broadcast A, vectors along N) -----------------------------------------
template <int MR, int NV, bool TAIL>
void bc_block(const GemmBc& g, std::int64_t m, std::int64_t j, int tail) {
  V::T acc[MR][NV];
  ROOFLINE_UNROLL for (int r = 0; r < MR; ++r) ROOFLINE_UNROLL for (int v = 0; v < NV; ++v) acc[r][v] = V::zero();
  const float* a = g.A + m * g.sam;
  const float* b = g.B + j;
  for (std::int64_t k = 0; k < g.K; ++k) {
    V::T bv[NV];
    const float* bk = b + k * g.ldb;
    ROOFLINE_UNROLL for (int v = 0; v < NV; ++v) bv[v] =
        (TAIL && v == NV - 1) ? V::load_n(bk + v * W, tail) : V::load(bk + v * W);
    const float* ak = a + k * g.sak;
    ROOFLINE_UNROLL for (int r = 0; r < MR; ++r) {
      const V::T av = V::set1(ak[r * g.sam]);
      ROOFLINE_UNROLL for (int v = 0; v < NV; ++v) acc[r][v] = V::fma(av, bv[v], acc[r][v]);
    }
  }
  if (g.bias) {
    ROOFLINE_UNROLL for (int v = 0; v < NV; ++v) {
      const V::T bb = (TAIL && v == NV - 1) ? V::load_n(g.bias + j + v * W, tail) : V::load(g.bias + j + v * W);
      ROOFLINE_UNROLL for (int r = 0; r < MR; ++r) acc[r][v] = V::add(acc[r][v], bb);
    }
  }
  if (g.relu)
    ROOFLINE_UNROLL for (int r = 0; r < MR; ++r) ROOFLINE_UNROLL for (int v = 0; v < NV; ++v) acc[r][v] =
        V::relu(acc[r][v]);
  ROOFLINE_UNROLL for (int r = 0; r < MR; ++r) {
    float* out = g.C + (m + r) * g.ldc + j;
    ROOFLINE_UNROLL for (int v = 0; v < NV; ++v) {
      if (TAIL && v == NV - 1)
        V::store_n(out + v * W, acc[r][v], tail);
      else
        V::store(out + v * W, acc[r][v]);
    }
  }
}

using BcFn = void (*)(const GemmBc&, std::int64_t, std::int64_t, int);
template <int MR, bool TAIL, int... NVs>
constexpr std::array<BcFn, sizeof...(NVs)> bc_row(std::integer_sequence<int, NVs...>) {
  return {&bc_block<MR, NVs + 1, TAIL>...};
}
template <bool TAIL, int... MRs>
constexpr std::array<std::array<BcFn, kBcNv>, sizeof...(MRs)> bc_table(std::integer_sequence<int, MRs...>) {
  return {bc_row<MRs + 1, TAIL>(std::make_integer_sequence<int, kBcNv>{})...};
}
constexpr auto kBcFull = bc_table<false>(std::make_integer_sequence<int, kBcMr>{});
constexpr auto kBcTail = bc_table<true>(std::make_integer_sequence<int, kBcMr>{});

void gemm_bc(const GemmBc& g, std::int64_t m0, std::int64_t m1, std::int64_t j0, std::int64_t j1) {
  // Column blocks outer: a K × (NV·W) panel of B stays in L1/L2 while the row blocks pass.
  for (std::int64_t j = j0; j < j1; j += kBcNv * W) {
    const std::int64_t cols = j1 - j < kBcNv * W ? j1 - j : kBcNv * W;
    const int nv = static_cast<int>((cols + W - 1) / W);
    const int tail = static_cast<int>(cols - (nv - 1) * W);
    for (std::int64_t m = m0; m < m1; m += kBcMr) {
      const int mr = static_cast<int>(m1 - m < kBcMr ? m1 - m : kBcMr);
      if (tail == W)
        kBcFull[static_cast<size_t>(mr - 1)][static_cast<size_t>(nv - 1)](g, m, j, W);
      else
        kBcTail[static_cast<size_t>(mr - 1)][static_cast<size_t>(nv - 1)](g, m, j, tail);
    }
  }
}

// ---- Convolution planes (flattened to the input width) -----------------------------------
// Positions p0 .. p0 + PV·W − 1 (the last vector holding `tail` lanes when TAIL).
template <int KB, int PV, bool TAIL>
void conv_chunk(const ConvPlane& c, std::int64_t p0, int tail) {
  V::T acc[KB][PV];
  ROOFLINE_UNROLL for (int k = 0; k < KB; ++k) ROOFLINE_UNROLL for (int v = 0; v < PV; ++v) acc[k][v] = V::zero();
  const std::int64_t plane = c.H * c.W;
  for (std::int64_t ch = 0; ch < c.C; ++ch) {
    const float* base = c.in + ch * plane + p0;
    const float* wc = c.w + ch * c.R * c.S;
    for (std::int64_t r = 0; r < c.R; ++r)
      for (std::int64_t q = 0; q < c.S; ++q) {
        const float* src = base + r * c.W + q;
        V::T x[PV];
        ROOFLINE_UNROLL for (int v = 0; v < PV; ++v) x[v] =
            (TAIL && v == PV - 1) ? V::load_n(src + v * W, tail) : V::load(src + v * W);
        const std::int64_t wi = r * c.S + q;
        ROOFLINE_UNROLL for (int k = 0; k < KB; ++k) {
          const V::T wv = V::set1(wc[k * c.wstride + wi]);
          ROOFLINE_UNROLL for (int v = 0; v < PV; ++v) acc[k][v] = V::fma(wv, x[v], acc[k][v]);
        }
      }
  }
  ROOFLINE_UNROLL for (int k = 0; k < KB; ++k) {
    float* out = c.out + k * c.ostride + p0;
    ROOFLINE_UNROLL for (int v = 0; v < PV; ++v) {
      if (TAIL && v == PV - 1)
        V::store_n(out + v * W, acc[k][v], tail);
      else
        V::store(out + v * W, acc[k][v]);
    }
  }
}

template <int KB>
void conv_plane_kb(const ConvPlane& c) {
  constexpr int PV = conv_pv(KB);
  std::int64_t p = 0;
  for (; p + PV * W <= c.P; p += PV * W) conv_chunk<KB, PV, false>(c, p, W);
  for (; p + W <= c.P; p += W) conv_chunk<KB, 1, false>(c, p, W);
  if (p < c.P) conv_chunk<KB, 1, true>(c, p, static_cast<int>(c.P - p));
}

void conv_plane(const ConvPlane& c) {
  switch (c.kb) {
    case 4:
      return conv_plane_kb<4>(c);
    case 3:
      return conv_plane_kb<3>(c);
    case 2:
      return conv_plane_kb<2>(c);
    default:
      return conv_plane_kb<1>(c);
  }
}

// ---- Convolution weight gradient: dot products along the flattened plane ----------------
template <int KB, int NT>
void wgrad_block(const ConvWgrad& c) {
  V::T acc[KB][NT];
  ROOFLINE_UNROLL for (int k = 0; k < KB; ++k) ROOFLINE_UNROLL for (int t = 0; t < NT; ++t) acc[k][t] = V::zero();
  const float* x[NT];
  ROOFLINE_UNROLL for (int t = 0; t < NT; ++t) x[t] = c.in + c.taps[t];
  std::int64_t p = 0;
  for (; p + W <= c.P; p += W) {
    V::T gv[KB];
    ROOFLINE_UNROLL for (int k = 0; k < KB; ++k) gv[k] = V::load(c.g + k * c.gstride + p);
    ROOFLINE_UNROLL for (int t = 0; t < NT; ++t) {
      const V::T xv = V::load(x[t] + p);
      ROOFLINE_UNROLL for (int k = 0; k < KB; ++k) acc[k][t] = V::fma(gv[k], xv, acc[k][t]);
    }
  }
  if (p < c.P) {
    const int n = static_cast<int>(c.P - p);
    V::T gv[KB];
    ROOFLINE_UNROLL for (int k = 0; k < KB; ++k) gv[k] = V::load_n(c.g + k * c.gstride + p, n);
    ROOFLINE_UNROLL for (int t = 0; t < NT; ++t) {
      const V::T xv = V::load_n(x[t] + p, n);
      ROOFLINE_UNROLL for (int k = 0; k < KB; ++k) acc[k][t] = V::fma(gv[k], xv, acc[k][t]);
    }
  }
  ROOFLINE_UNROLL for (int k = 0; k < KB; ++k) {
    float* out = c.acc + k * c.acc_stride;
    ROOFLINE_UNROLL for (int t0 = 0; t0 < NT; t0 += 4) {
      const V::T z = V::zero();
      alignas(16) float s[4];
      _mm_store_ps(s, V::hsum4(acc[k][t0], t0 + 1 < NT ? acc[k][t0 + 1] : z, t0 + 2 < NT ? acc[k][t0 + 2] : z,
                               t0 + 3 < NT ? acc[k][t0 + 3] : z));
      const int n = NT - t0 < 4 ? NT - t0 : 4;
      for (int t = 0; t < n; ++t) out[t0 + t] += s[t];
    }
  }
}

using WgFn = void (*)(const ConvWgrad&);
template <int KB, int... NTs>
constexpr std::array<WgFn, sizeof...(NTs)> wg_row(std::integer_sequence<int, NTs...>) {
  return {&wgrad_block<KB, NTs + 1>...};
}
template <int... KBs>
constexpr std::array<std::array<WgFn, kWgradTaps>, sizeof...(KBs)> wg_table(std::integer_sequence<int, KBs...>) {
  return {wg_row<KBs + 1>(std::make_integer_sequence<int, kWgradTaps>{})...};
}
constexpr auto kWgTable = wg_table(std::make_integer_sequence<int, kConvBlock>{});

void conv_wgrad(const ConvWgrad& c) { kWgTable[static_cast<size_t>(c.kb - 1)][static_cast<size_t>(c.nt - 1)](c); }

#undef ROOFLINE_UNROLL
