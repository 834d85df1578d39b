// The tiled convolution kernels (kernels/conv2d_tiled.cuh) run on the CPU:
// a block's threads are fibers (ucontext) on one OS thread, switched in turn
// at every __syncthreads and shuffle (so each round between two barriers runs
// every thread up to the next one), shared memory is a plain array, blocks run
// one after another.
// The build machine has no GPU; this checks the kernels' indexing, tiling,
// flipped weights and fixed-order reductions against a float64 reference at
// their edges, so the GPU run starts from kernels whose logic is right (races
// and timing are for racecheck and the benches there). The launch geometry
// mirrors src/engine/cuda/conv_pool.cu.
#if __has_include(<cuda_runtime.h>) && __has_include(<ucontext.h>)
#include <cuda_runtime.h>
#include <ucontext.h>
#define ROOFLINE_EMULATE_KERNELS 1
#endif

#include <gtest/gtest.h>

#include "tests/support/numeric.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#ifdef ROOFLINE_EMULATE_KERNELS

// The CUDA built-ins the kernels use, as host code.
#undef __global__
#undef __host__
#undef __device__
#undef __shared__
#undef __launch_bounds__
#define __global__
#define __host__
#define __device__
#define __shared__
#define __launch_bounds__(...)

namespace {

using roofline::test::rel_error;
uint3 threadIdx, blockIdx;  // the running fiber's
dim3 gridDim, blockDim;

// One block's threads as fibers. yield() returns to the scheduler, which runs
// every live fiber once per round, so a round is the code between two
// barriers (all threads reach every barrier, as the kernels require).
struct Fibers {
  ucontext_t scheduler{};
  std::vector<ucontext_t> ctx;
  std::vector<std::vector<char>> stacks;
  std::vector<bool> done;
  int current = 0;
  const std::function<void()>* body = nullptr;
};
Fibers* fibers = nullptr;

void fiber_main() {
  (*fibers->body)();
  fibers->done[fibers->current] = true;  // returns to uc_link: the scheduler
}
void yield() {
  if (swapcontext(&fibers->ctx[fibers->current], &fibers->scheduler) != 0) std::abort();
}
void __syncthreads() { yield(); }
// Every lane of a warp calls it together, as on the GPU: write, barrier,
// read the lane `offset` above, barrier (before the slot is written again).
float shuffle_slots[1024];
float __shfl_down_sync(unsigned, float v, int offset) {
  const int t = static_cast<int>(threadIdx.x), lane = t & 31;
  shuffle_slots[t] = v;
  yield();
  const float r = lane + offset < 32 ? shuffle_slots[t + offset] : v;
  yield();
  return r;
}
int min(int a, int b) { return a < b ? a : b; }
}  // namespace

// The kernels under another namespace: their host stubs in the library have
// the names (and, for the templates, the weak symbols) of the real ones.
namespace roofline_emulated::kernels {
// "Dynamic shared memory": one block runs at a time.
float4 conv_smem4[1 << 16];
}  // namespace roofline_emulated::kernels

#define roofline roofline_emulated
#include "kernels/conv2d_regtile.cuh"
#include "kernels/conv2d_tiled.cuh"
#undef roofline

#include "src/engine/cuda/conv_choice.hpp"

namespace {

namespace rk = roofline_emulated::kernels;
using rk::kConvThreads;

// getcontext returns twice: kept out of the loops whose variables it could
// clobber.
[[gnu::noinline]] void start_fiber(Fibers& f, unsigned t) {
  if (getcontext(&f.ctx[t]) != 0) std::abort();
  f.ctx[t].uc_stack.ss_sp = f.stacks[t].data();
  f.ctx[t].uc_stack.ss_size = f.stacks[t].size();
  f.ctx[t].uc_link = &f.scheduler;
  makecontext(&f.ctx[t], fiber_main, 0);
}
// Runs fiber t up to its next barrier or its end; true while it is not done.
[[gnu::noinline]] bool resume_fiber(Fibers& f, unsigned t) {
  f.current = static_cast<int>(t);
  threadIdx = {t, 0, 0};
  if (swapcontext(&f.scheduler, &f.ctx[t]) != 0) std::abort();
  return !f.done[t];
}

// Runs kernel() as every thread of every block of `grid`, `threads` per block.
template <class F>
void launch(dim3 grid, unsigned threads, F kernel) {
  Fibers f;
  const std::function<void()> body = kernel;
  f.body = &body;
  f.ctx.resize(threads);
  f.stacks.assign(threads, std::vector<char>(64 * 1024));
  fibers = &f;
  gridDim = grid;
  blockDim = dim3(threads);
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        blockIdx = {x, y, z};
        f.done.assign(threads, false);
        for (unsigned t = 0; t < threads; ++t) start_fiber(f, t);
        for (bool live = true; live;) {
          live = false;
          for (unsigned t = 0; t < threads; ++t)
            if (!f.done[t] && resume_fiber(f, t)) live = true;
        }
      }
  fibers = nullptr;
}

struct Shape {
  int n, c, h, w, k, r, s, pad;
  int oh() const { return h + 2 * pad - r + 1; }
  int ow() const { return w + 2 * pad - s + 1; }
};

int channels_per_block(int co) { return co <= 4 ? 4 : co <= 8 ? 8 : 16; }

template <int KB, int PX, bool FLIP, int CS = 1>
void run_tiled(const rk::TiledConvDims& d, float* out, const float* in, const float* w, const float* b, bool relu) {
  ASSERT_LE((rk::tiled_smem_floats<KB, PX, CS>(d)), int(sizeof(rk::conv_smem4) / 4));
  const dim3 grid(rk::tiled_blocks_x(d, PX, CS), (d.co + KB - 1) / KB, d.n);
  launch(grid, kConvThreads, [&] { rk::conv2d_tiled<KB, PX, FLIP, CS>(d, out, in, w, b, relu); });
}

// Every (channels per block, pixels per thread) the launcher may pick.
template <bool FLIP>
void run_tiled(int kb, int px, int cs, const rk::TiledConvDims& d, float* out, const float* in, const float* w,
               const float* b, bool relu) {
  if (cs == 2) return run_tiled<4, 1, FLIP, 2>(d, out, in, w, b, relu);  // input-channel groups: 4 x 1 only
  if (cs == 4) return run_tiled<4, 1, FLIP, 4>(d, out, in, w, b, relu);
  if (px == 4 && kb == 4) return run_tiled<4, 4, FLIP>(d, out, in, w, b, relu);
  if (px == 4 && kb == 8) return run_tiled<8, 4, FLIP>(d, out, in, w, b, relu);  // the kernel allows it; unused
  if (px == 4) return run_tiled<16, 4, FLIP>(d, out, in, w, b, relu);
  if (kb == 4) run_tiled<4, 1, FLIP>(d, out, in, w, b, relu);
  if (kb == 8) run_tiled<8, 1, FLIP>(d, out, in, w, b, relu);
  if (kb == 16) run_tiled<16, 1, FLIP>(d, out, in, w, b, relu);
}
// The register-tiled kernel with the launch plan conv_pool.cu would use for
// this tile and thread target.
template <int KB, int R, bool FLIP>
void run_regtile(const roofline::engine::cuda_ops::RegTilePlan& p, const rk::TiledConvDims& d, float* out,
                 const float* in, const float* w, const float* b, bool relu) {
  ASSERT_LE(p.smem_floats, std::int64_t(sizeof(rk::conv_smem4) / 4));
  const rk::RegTileDims g{d, p.band};
  ASSERT_EQ((rk::regtile_smem_floats<KB, R>(g)), p.smem_floats);
  ASSERT_EQ(rk::regtile_bands<R>(g), p.bands);
  const dim3 grid(p.bands, (d.co + KB - 1) / KB, d.n);
  auto body = [&] {
    if (d.s == 3) rk::conv2d_regtile<KB, R, 3, FLIP>(g, out, in, w, b, relu);
    if (d.s == 5) rk::conv2d_regtile<KB, R, 5, FLIP>(g, out, in, w, b, relu);
    if (d.s == 7) rk::conv2d_regtile<KB, R, 7, FLIP>(g, out, in, w, b, relu);
  };
  launch(grid, p.threads, body);
}
// false: the kernel does not apply to this shape (its width, or the tile).
template <bool FLIP>
bool run_regtile(int kb, int rows, int threads, const rk::TiledConvDims& d, float* out, const float* in,
                 const float* w, const float* b, bool relu) {
  namespace co = roofline::engine::cuda_ops;
  co::RegTilePlan p;
  const co::ConvGeometry geo{d.n, d.ci, d.co, d.oh, d.ow, d.r, d.s};
  if (!co::plan_regtile(geo, 132, kb, rows, threads, p)) return false;
  const int key = kb * 10 + rows;
  if (key == 41) run_regtile<4, 1, FLIP>(p, d, out, in, w, b, relu);
  if (key == 42) run_regtile<4, 2, FLIP>(p, d, out, in, w, b, relu);
  if (key == 44) run_regtile<4, 4, FLIP>(p, d, out, in, w, b, relu);
  if (key == 81) run_regtile<8, 1, FLIP>(p, d, out, in, w, b, relu);
  if (key == 82) run_regtile<8, 2, FLIP>(p, d, out, in, w, b, relu);
  if (key == 161) run_regtile<16, 1, FLIP>(p, d, out, in, w, b, relu);
  return true;
}
struct RegTileVariant {
  int kb, rows, threads;
};
// Every compiled tile, with the automatic thread count and with 32-thread
// blocks (many bands: each band's first rows come from the previous band's).
constexpr RegTileVariant kRegTileVariants[] = {{4, 1, 0},  {4, 2, 0},  {4, 4, 0},  {8, 1, 0},  {8, 2, 0},
                                               {16, 1, 0}, {4, 1, 32}, {8, 2, 32}, {4, 4, 32}, {16, 1, 32}};

struct TiledVariant {
  int kb, px, cs;
};
constexpr TiledVariant kTiledVariants[] = {{4, 1, 1}, {8, 1, 1},  {16, 1, 1}, {4, 4, 1},
                                           {8, 4, 1}, {16, 4, 1}, {4, 1, 2},  {4, 1, 4}};

template <int KB>
void run_wgrad(const rk::WgradDims& d, int parts, int slices, float* partial, const float* in, const float* dout) {
  ASSERT_LE(rk::wgrad_smem_floats<KB>(d), int(sizeof(rk::conv_smem4) / 4));
  const dim3 grid(parts, (d.k + KB - 1) / KB, slices);
  launch(grid, kConvThreads, [&] { rk::conv2d_wgrad_partial<KB>(d, partial, in, dout); });
}

void check_shape(const Shape& s, int parts, int slices, std::mt19937& gen) {
  SCOPED_TRACE(::testing::Message() << "n=" << s.n << " c=" << s.c << " " << s.h << "x" << s.w << " k=" << s.k << " "
                                    << s.r << "x" << s.s << " pad=" << s.pad << " parts=" << parts
                                    << " slices=" << slices);
  std::normal_distribution<float> nd;
  const int oh = s.oh(), ow = s.ow();
  std::vector<float> in(size_t(s.n) * s.c * s.h * s.w), w(size_t(s.k) * s.c * s.r * s.s), b(s.k),
      dout(size_t(s.n) * s.k * oh * ow);
  for (auto* v : {&in, &w, &b, &dout})
    for (float& x : *v) x = nd(gen);
  auto IN = [&](int n, int c, int y, int x) { return double(in[((size_t(n) * s.c + c) * s.h + y) * s.w + x]); };
  auto W = [&](int k, int c, int r, int q) { return double(w[((size_t(k) * s.c + c) * s.r + r) * s.s + q]); };
  auto DOUT = [&](int n, int k, int y, int x) { return double(dout[((size_t(n) * s.k + k) * oh + y) * ow + x]); };

  // float64 references, straight from the definitions.
  std::vector<double> fwd(dout.size()), din(in.size(), 0.0), dw(w.size(), 0.0), db(s.k, 0.0);
  for (int n = 0; n < s.n; ++n)
    for (int k = 0; k < s.k; ++k)
      for (int y = 0; y < oh; ++y)
        for (int x = 0; x < ow; ++x) {
          double acc = b[k];
          const double g = DOUT(n, k, y, x);
          db[k] += g;
          for (int c = 0; c < s.c; ++c)
            for (int r = 0; r < s.r; ++r)
              for (int q = 0; q < s.s; ++q) {
                const int iy = y - s.pad + r, ix = x - s.pad + q;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                acc += IN(n, c, iy, ix) * W(k, c, r, q);
                din[((size_t(n) * s.c + c) * s.h + iy) * s.w + ix] += g * W(k, c, r, q);
                dw[((size_t(k) * s.c + c) * s.r + r) * s.s + q] += g * IN(n, c, iy, ix);
              }
          fwd[((size_t(n) * s.k + k) * oh + y) * ow + x] = acc > 0 ? acc : 0;  // with ReLU
        }

  for (const TiledVariant v : kTiledVariants) {
    SCOPED_TRACE(::testing::Message() << "channels per block " << v.kb << ", pixels per thread " << v.px
                                      << ", input-channel groups " << v.cs);
    // Forward (bias + ReLU), as conv2d_forward launches it.
    std::vector<float> out(fwd.size(), NAN);
    const rk::TiledConvDims tf{s.n, s.c, s.h, s.w, s.k, oh, ow, s.r, s.s, s.pad, s.pad};
    run_tiled<false>(v.kb, v.px, v.cs, tf, out.data(), in.data(), w.data(), b.data(), true);
    EXPECT_LE(rel_error(out, fwd), 1e-5) << "forward";

    // Input gradient, as conv2d_backward_input launches it (pad <= r - 1 and s - 1).
    if (s.pad <= s.r - 1 && s.pad <= s.s - 1) {
      std::vector<float> g(din.size(), NAN);
      const rk::TiledConvDims tb{s.n, s.k, oh, ow, s.c, s.h, s.w, s.r, s.s, s.r - 1 - s.pad, s.s - 1 - s.pad};
      run_tiled<true>(v.kb, v.px, v.cs, tb, g.data(), dout.data(), w.data(), nullptr, false);
      EXPECT_LE(rel_error(g, din), 1e-5) << "input gradient";
    }
  }

  int regtile_runs = 0;
  for (const RegTileVariant v : kRegTileVariants) {
    SCOPED_TRACE(::testing::Message() << "register tile: " << v.kb << " channels x " << v.rows << " rows, threads "
                                      << v.threads);
    std::vector<float> out(fwd.size(), NAN);
    const rk::TiledConvDims tf{s.n, s.c, s.h, s.w, s.k, oh, ow, s.r, s.s, s.pad, s.pad};
    if (!run_regtile<false>(v.kb, v.rows, v.threads, tf, out.data(), in.data(), w.data(), b.data(), true)) continue;
    ++regtile_runs;
    EXPECT_LE(rel_error(out, fwd), 1e-5) << "forward";
    if (s.pad <= s.r - 1 && s.pad <= s.s - 1) {
      std::vector<float> g(din.size(), NAN);
      const rk::TiledConvDims tb{s.n, s.k, oh, ow, s.c, s.h, s.w, s.r, s.s, s.r - 1 - s.pad, s.s - 1 - s.pad};
      if (run_regtile<true>(v.kb, v.rows, v.threads, tb, g.data(), dout.data(), w.data(), nullptr, false))
        EXPECT_LE(rel_error(g, din), 1e-5) << "input gradient";
    }
  }
  // The pooled inference launch (conv + bias + ReLU, then P × P max pools,
  // stride P): 4-channel tiles, the automatic and 32-thread bands.
  for (const int pool : {2, 4}) {
    const int ohp = oh / pool, owp = ow / pool;
    if (ohp < 1 || owp < 1) continue;
    std::vector<double> want(size_t(s.n) * s.k * ohp * owp);
    for (int n = 0; n < s.n; ++n)
      for (int k = 0; k < s.k; ++k)
        for (int py = 0; py < ohp; ++py)
          for (int px = 0; px < owp; ++px) {
            double m = -INFINITY;
            for (int q = 0; q < pool; ++q)
              for (int p = 0; p < pool; ++p)
                m = std::max(m, fwd[((size_t(n) * s.k + k) * oh + py * pool + q) * ow + px * pool + p]);
            want[((size_t(n) * s.k + k) * ohp + py) * owp + px] = m;
          }
    for (const int kb : {4, 8, 16})
      for (const int threads : {0, 32}) {
        SCOPED_TRACE(::testing::Message() << "pooled " << pool << ", " << kb << " channels, threads " << threads);
        namespace co = roofline::engine::cuda_ops;
        co::RegTilePlan p;
        const co::ConvGeometry geo{s.n, s.c, s.k, ohp * pool, owp * pool, s.r, s.s};
        if (!co::plan_regtile(geo, 132, kb, 1, threads, p, pool)) {
          EXPECT_FALSE(s.s == 3 || s.s == 5 || s.s == 7) << "the pooled launch should apply";
          continue;
        }
        EXPECT_EQ(p.band % pool, 0);
        ASSERT_LE(p.smem_floats, std::int64_t(sizeof(rk::conv_smem4) / 4));
        const rk::TiledConvDims tf{s.n, s.c, s.h, s.w, s.k, ohp * pool, owp * pool, s.r, s.s, s.pad, s.pad};
        const rk::RegTileDims g{tf, p.band};
        std::vector<float> out(want.size(), NAN);
        auto body = [&] {
          auto run = [&](auto kbc) {
            constexpr int KB = decltype(kbc)::value;
            if (pool == 2 && s.s == 3) rk::conv2d_regtile<KB, 1, 3, false, 2>(g, out.data(), in.data(), w.data(), b.data(), true);
            if (pool == 2 && s.s == 5) rk::conv2d_regtile<KB, 1, 5, false, 2>(g, out.data(), in.data(), w.data(), b.data(), true);
            if (pool == 2 && s.s == 7) rk::conv2d_regtile<KB, 1, 7, false, 2>(g, out.data(), in.data(), w.data(), b.data(), true);
            if (pool == 4 && s.s == 3) rk::conv2d_regtile<KB, 1, 3, false, 4>(g, out.data(), in.data(), w.data(), b.data(), true);
            if (pool == 4 && s.s == 5) rk::conv2d_regtile<KB, 1, 5, false, 4>(g, out.data(), in.data(), w.data(), b.data(), true);
            if (pool == 4 && s.s == 7) rk::conv2d_regtile<KB, 1, 7, false, 4>(g, out.data(), in.data(), w.data(), b.data(), true);
          };
          if (kb == 4) run(std::integral_constant<int, 4>{});
          if (kb == 8) run(std::integral_constant<int, 8>{});
          if (kb == 16) run(std::integral_constant<int, 16>{});
        };
        launch(dim3(p.bands, (s.k + kb - 1) / kb, s.n), p.threads, body);
        EXPECT_LE(rel_error(out, want), 1e-5) << "pooled forward";
      }
  }

  // The kernel is compiled for widths 3, 5 and 7 and rows of up to 1024 pixels.
  if (s.s == 3 || s.s == 5 || s.s == 7) EXPECT_EQ(regtile_runs, int(std::size(kRegTileVariants)));

  // Weight and bias gradient, as wgrad_tiled launches it (with `parts` image
  // blocks and about `slices` row slices).
  rk::WgradDims d{};
  d.n = s.n, d.c = s.c, d.h = s.h, d.w = s.w, d.k = s.k, d.oh = oh, d.ow = ow, d.r = s.r, d.s = s.s;
  d.ph = d.pw = s.pad;
  d.combos = s.c * s.r * s.s + 1;
  ASSERT_LE(d.combos, kConvThreads);
  d.rows = (oh + slices - 1) / slices;
  slices = (oh + d.rows - 1) / d.rows;  // no empty slice
  d.groups = std::max(1, std::min(kConvThreads / d.combos, d.rows));
  const int kb = channels_per_block(s.k), kgroups = (s.k + kb - 1) / kb;
  std::vector<float> partial(size_t(parts) * slices * kgroups * d.combos * kb, NAN), gw(w.size(), NAN), gb(s.k, NAN);
  if (kb == 4) run_wgrad<4>(d, parts, slices, partial.data(), in.data(), dout.data());
  if (kb == 8) run_wgrad<8>(d, parts, slices, partial.data(), in.data(), dout.data());
  if (kb == 16) run_wgrad<16>(d, parts, slices, partial.data(), in.data(), dout.data());
  launch(dim3(2), 32, [&] { rk::conv2d_wgrad_reduce(d, parts * slices, kb, gw.data(), gb.data(), partial.data()); });
  EXPECT_LE(rel_error(gw, dw), 1e-5) << "weight gradient";
  EXPECT_LE(rel_error(gb, db), 1e-5) << "bias gradient";
}

TEST(ConvTiledEmulated, MatchesTheFloat64ReferenceAtTheKernelsEdges) {
  std::mt19937 gen(408);
  // {n, c, h, w, k, r, s, pad}, weight-gradient image blocks, row slices
  check_shape({1, 4, 40, 40, 16, 7, 7, 0}, 1, 5, gen);  // ece408 conv2: 16-channel forward, 5 pixel blocks
  check_shape({2, 1, 30, 30, 4, 7, 7, 0}, 2, 3, gen);   // ece408 conv1-like: 4 channels, row groups in wgrad
  check_shape({5, 2, 6, 7, 3, 3, 3, 1}, 2, 4, gen);     // more images than blocks, padding
  check_shape({2, 16, 9, 9, 16, 3, 3, 1}, 2, 1, gen);   // 16-channel input-gradient blocks
  check_shape({3, 7, 9, 30, 12, 5, 2, 1}, 3, 2, gen);   // 8-channel input gradient, 12 of 16, r != s
  check_shape({2, 3, 12, 11, 33, 3, 3, 2}, 1, 6, gen);  // 1-channel tail block of 33
  check_shape({2, 20, 17, 17, 5, 1, 1, 0}, 2, 5, gen);  // 1x1, second block from mid-row
  check_shape({1, 2, 3, 300, 3, 2, 3, 0}, 1, 2, gen);   // rows wider than a block
  check_shape({2, 2, 1, 9, 3, 1, 3, 0}, 2, 1, gen);     // one-row images
  check_shape({2, 2, 5, 5, 3, 1, 1, 1}, 1, 3, gen);     // pad > r - 1: no input gradient
  check_shape({3, 1, 40, 8, 2, 3, 3, 1}, 2, 20, gen);   // 40 partials: more than a warp's lanes
  check_shape({1, 1, 86, 86, 4, 7, 7, 0}, 1, 4, gen);   // ece408 conv1 itself
  check_shape({2, 3, 14, 13, 6, 5, 5, 2}, 2, 3, gen);   // 5 wide, padded, rows of 13 (a part-filled group)
  check_shape({1, 4, 40, 40, 16, 7, 7, 0}, 1, 2, gen);  // ece408 conv2 at batch 1 (channel groups' shape)
  check_shape({1, 5, 11, 9, 3, 3, 3, 1}, 1, 2, gen);    // 5 input channels: uneven groups, 3 of 4 at cs 4
}

}  // namespace

#else

TEST(ConvTiledEmulated, MatchesTheFloat64ReferenceAtTheKernelsEdges) {
  GTEST_SKIP() << "no CUDA headers in this build: the tiled kernels are not compiled here";
}

#endif
