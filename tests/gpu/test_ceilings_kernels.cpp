// The bandwidth, FMA and latency kernels of `roofline ceilings`, each checked
// against a host reference on fresh random data (the outputs poisoned first).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "roofline/cuda/check.hpp"
#include "roofline/cuda/memory.hpp"
#include "src/ceilings/gpu/kernels.hpp"
#include "src/ceilings/gpu/pattern.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
using namespace roofline::ceilings::gpu;

namespace {

uint32_t fresh_seed() { return std::random_device{}(); }

int cc_major() {
  int major = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  return major;
}

std::vector<StreamVariant> runnable(StreamKind kind) {
  std::vector<StreamVariant> out;
  for (auto& v : stream_variants(kind))
    if (!v.bulk || cc_major() >= 9) out.push_back(v);
  return out;
}

uint32_t host_sum(uint32_t seed, size_t words) {
  uint32_t s = 0;
  for (size_t i = 0; i < words; ++i) s += random_word(seed, i);
  return s;
}

template <class T>
std::vector<T> download(const cuda::DeviceBuffer<T>& b) {
  std::vector<T> h(b.size());
  b.download(h.data(), h.size());
  CUDA_CHECK(cudaDeviceSynchronize());
  return h;
}

uint32_t sum_of(const std::vector<uint32_t>& v) { return std::accumulate(v.begin(), v.end(), 0u); }

// The sizes: a multiple of the bulk chunk, and one with a ragged tail (SM-path variants only).
const size_t kSizes[] = {8u << 20, (8u << 20) + 48};

}  // namespace

TEST(CeilingKernels, DramReadSumsEveryWord) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  for (size_t bytes : kSizes) {
    const uint32_t seed = fresh_seed();
    cuda::DeviceBuffer<char> in(bytes);
    fill_random(in.get(), bytes, seed, nullptr);
    const uint32_t expected = host_sum(seed, bytes / 4);
    for (const auto& v : runnable(StreamKind::Read)) {
      if (v.bulk && bytes % kBulkChunkBytes != 0) continue;
      SCOPED_TRACE(v.id + " " + std::to_string(bytes) + " bytes");
      const int grid = stream_grid(StreamKind::Read, v, 0);
      cuda::DeviceBuffer<uint32_t> sums(static_cast<size_t>(grid));
      cuda::DeviceBuffer<int> err(1);
      CUDA_CHECK(cudaMemset(sums.get(), 0xFF, sums.bytes()));
      CUDA_CHECK(cudaMemset(err.get(), 0, sizeof(int)));
      launch_read(v, grid, in.get(), bytes, sums.get(), err.get(), nullptr);
      EXPECT_EQ(sum_of(download(sums)), expected);
      EXPECT_EQ(download(err)[0], 0);
    }
  }
}

TEST(CeilingKernels, DramWriteStoresThePatternEverywhere) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  for (size_t bytes : kSizes) {
    for (const auto& v : runnable(StreamKind::Write)) {
      if (v.bulk && bytes % kBulkChunkBytes != 0) continue;
      SCOPED_TRACE(v.id + " " + std::to_string(bytes) + " bytes");
      const uint32_t seed = fresh_seed();
      cuda::DeviceBuffer<uint32_t> out(bytes / 4);
      cuda::DeviceBuffer<int> err(1);
      CUDA_CHECK(cudaMemset(out.get(), 0xAB, out.bytes()));
      CUDA_CHECK(cudaMemset(err.get(), 0, sizeof(int)));
      launch_write(v, stream_grid(StreamKind::Write, v, 0), out.get(), bytes, seed, err.get(), nullptr);
      const auto h = download(out);
      size_t wrong = 0, first = h.size();
      for (size_t w = 0; w < h.size(); ++w)
        if (h[w] != write_word(seed, w)) {
          if (wrong++ == 0) first = w;
        }
      EXPECT_EQ(wrong, 0u) << "first wrong word " << first;
      EXPECT_EQ(download(err)[0], 0);
    }
  }
}

TEST(CeilingKernels, DramCopyEqualsItsInput) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  for (size_t bytes : kSizes) {
    for (const auto& v : runnable(StreamKind::Copy)) {
      if (v.bulk && bytes % kBulkChunkBytes != 0) continue;
      SCOPED_TRACE(v.id + " " + std::to_string(bytes) + " bytes");
      cuda::DeviceBuffer<uint32_t> in(bytes / 4), out(bytes / 4);
      cuda::DeviceBuffer<int> err(1);
      fill_random(in.get(), bytes, fresh_seed(), nullptr);
      CUDA_CHECK(cudaMemset(out.get(), 0xAB, out.bytes()));
      CUDA_CHECK(cudaMemset(err.get(), 0, sizeof(int)));
      launch_copy(v, stream_grid(StreamKind::Copy, v, 0), in.get(), out.get(), bytes, err.get(), nullptr);
      const auto got = download(out), want = download(in);
      size_t wrong = 0, first = got.size();
      for (size_t w = 0; w < got.size(); ++w)
        if (got[w] != want[w] && wrong++ == 0) first = w;
      EXPECT_EQ(wrong, 0u) << "first wrong word " << first;
      EXPECT_EQ(download(err)[0], 0);
    }
  }
}

TEST(CeilingKernels, L2ReadSumsEveryPass) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  const size_t bytes = (1u << 20) + 16;
  const uint32_t seed = fresh_seed();
  cuda::DeviceBuffer<char> in(bytes);
  fill_random(in.get(), bytes, seed, nullptr);
  const int grid = l2_grid(0);
  cuda::DeviceBuffer<uint32_t> sums(static_cast<size_t>(grid));
  CUDA_CHECK(cudaMemset(sums.get(), 0xFF, sums.bytes()));
  const int passes = 3;
  launch_l2_read(grid, in.get(), bytes, passes, sums.get(), nullptr);
  EXPECT_EQ(sum_of(download(sums)), passes * host_sum(seed, bytes / 4));
}

TEST(CeilingKernels, SharedMemoryReadMatchesHostSimulation) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  const uint32_t seed = fresh_seed();
  const int grid = 3, iters = 7;
  const uint32_t step = 32 * 7;
  cuda::DeviceBuffer<uint32_t> sums(grid);
  CUDA_CHECK(cudaMemset(sums.get(), 0xFF, sums.bytes()));
  launch_smem_read(grid, iters, step, seed, sums.get(), nullptr, nullptr);
  std::vector<uint32_t> vec(kSmemVecs);
  for (int j = 0; j < kSmemVecs; ++j)
    for (int k = 0; k < 4; ++k) vec[j] += random_word(seed, 4 * static_cast<uint64_t>(j) + k);
  uint32_t expected = 0;
  for (uint32_t t = 0; t < kSmemThreads; ++t) {
    uint32_t idx = t;
    for (int it = 0; it < iters; ++it) {
      for (int u = 0; u < kSmemUnroll; ++u) expected += vec[(idx + u * kSmemThreads) & (kSmemVecs - 1)];
      idx = (idx + step) & (kSmemVecs - 1);
    }
  }
  for (uint32_t s : download(sums)) EXPECT_EQ(s, expected);
}

namespace {

// Rounds v to a binary format with `mant` explicit bits and minimum normal
// exponent `emin`, to nearest even (subnormals included).
double round_to(double v, int mant, int emin) {
  if (v == 0) return v;
  int e = 0;
  std::frexp(v, &e);
  const int q = std::max(e - 1, emin) - mant;
  return std::ldexp(std::nearbyint(std::ldexp(v, -q)), q);
}

// Host replay of one thread's chains: every step rounded as the GPU rounds it.
double emulate_fma(FmaType t, uint32_t tid, int lane, long long steps, int chains, double a, double b) {
  auto round = [t](double v) {
    switch (t) {
      case FmaType::FP32: return static_cast<double>(static_cast<float>(v));
      case FmaType::FP16x2: return round_to(v, 10, -14);
      case FmaType::BF16x2: return round_to(v, 7, -126);
      case FmaType::FP64: return v;
    }
    return v;
  };
  std::vector<double> x(chains);
  for (int c = 0; c < chains; ++c) x[c] = fma_start(tid, c, lane);
  for (long long n = 0; n < steps; ++n)
    for (int c = 0; c < chains; ++c)
      // x * a + b is exact in double for the 32-bit and narrower formats (a has 8
      // significant bits), so rounding it once is the fused FMA; FP64 uses fma().
      x[c] = t == FmaType::FP64 ? std::fma(x[c], a, b) : round(x[c] * a + b);
  double s = x[0];
  for (int c = 1; c < chains; ++c) s = round(s + x[c]);
  return s;
}

double device_value(FmaType t, const std::vector<uint8_t>& out, size_t tid, int lane) {
  switch (t) {
    case FmaType::FP64: {
      double d;
      std::memcpy(&d, out.data() + 8 * tid, 8);
      return d;
    }
    case FmaType::FP32: {
      float f;
      std::memcpy(&f, out.data() + 4 * tid, 4);
      return f;
    }
    case FmaType::FP16x2: {
      __half h;
      std::memcpy(&h, out.data() + 4 * tid + 2 * lane, 2);
      return static_cast<double>(__half2float(h));
    }
    case FmaType::BF16x2: {
      uint16_t h;
      std::memcpy(&h, out.data() + 4 * tid + 2 * lane, 2);
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
  }
  return 0;
}

}  // namespace

TEST(CeilingKernels, FmaChainsEqualTheHostReplay) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  // x -> x * (1 + 2^-7) - 1/16 drifts away from its fixed point 8: every step
  // changes every chain and rounds, so a skipped or extra FMA shows.
  const double a = 1.0078125, b = -0.0625;
  const int grid = 2, iters = 2;
  for (FmaType t : {FmaType::FP64, FmaType::FP32, FmaType::FP16x2, FmaType::BF16x2}) {
    SCOPED_TRACE(static_cast<int>(t));
    const FmaConfig cfg = fma_config(t);
    const size_t threads = static_cast<size_t>(grid) * cfg.threads;
    cuda::DeviceBuffer<uint8_t> out(threads * cfg.bytes_per_result);
    CUDA_CHECK(cudaMemset(out.get(), 0xFF, out.bytes()));
    launch_fma(t, grid, iters, a, b, out.get(), true, 0, nullptr, nullptr);
    const auto h = download(out);
    const int lanes = (t == FmaType::FP16x2 || t == FmaType::BF16x2) ? 2 : 1;
    const long long steps = static_cast<long long>(iters) * cfg.unroll;
    size_t wrong = 0;
    for (size_t tid = 0; tid < threads; ++tid)
      for (int lane = 0; lane < lanes; ++lane) {
        const double want = emulate_fma(t, static_cast<uint32_t>(tid), lane, steps, cfg.chains, a, b);
        const double got = device_value(t, h, tid, lane);
        if (got != want && wrong++ < 3)
          ADD_FAILURE() << "thread " << tid << " lane " << lane << ": " << got << ", expected " << want;
      }
    EXPECT_EQ(wrong, 0u);
  }
}

TEST(CeilingKernels, ClockProbeReadsAPlausibleSmClock) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  const int grid = fma_grid(FmaType::FP32, 0);
  cuda::DeviceBuffer<uint8_t> out(static_cast<size_t>(grid) * fma_config(FmaType::FP32).threads * 4);
  cuda::DeviceBuffer<ClockProbe> probe(1);
  CUDA_CHECK(cudaMemset(probe.get(), 0, sizeof(ClockProbe)));
  launch_fma(FmaType::FP32, grid, 2000, -1.0, 1.5, out.get(), false, 0x7fc0deadu, probe.get(), nullptr);
  const auto p = download(probe)[0];
  const double mhz = kernels::probe_mhz(p);
  int khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  EXPECT_GT(mhz, 100.0);
  EXPECT_LT(mhz, 1.2 * khz / 1000.0) << "the SM clock cannot exceed the boost clock by much";
}

TEST(CeilingKernels, PointerChaseVisitsEveryNodeOnce) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  for (uint32_t stride_bytes : {64u, 256u}) {
    const size_t nodes = 5000;
    const uint32_t stride_words = stride_bytes / 4;
    // Sattolo's algorithm: one cycle through all nodes.
    std::vector<uint32_t> order(nodes);
    std::iota(order.begin(), order.end(), 0u);
    std::mt19937 rng(fresh_seed());
    for (size_t i = nodes - 1; i > 0; --i) std::swap(order[i], order[std::uniform_int_distribution<size_t>(0, i - 1)(rng)]);
    std::vector<uint32_t> succ(nodes);
    for (size_t i = 0; i < nodes; ++i) succ[order[i]] = order[(i + 1) % nodes];
    cuda::DeviceBuffer<uint32_t> dsucc(nodes), next(nodes * stride_words), trace(nodes), end(1);
    dsucc.upload(succ.data(), nodes);
    CUDA_CHECK(cudaMemset(trace.get(), 0xFF, trace.bytes()));
    build_chase(next.get(), dsucc.get(), nodes, stride_words, nullptr);
    launch_chase(next.get(), 0, static_cast<long long>(nodes), trace.get(), end.get(), nullptr, nullptr);
    const auto t = download(trace);
    std::set<uint32_t> seen;
    for (uint32_t w : t) {
      ASSERT_EQ(w % stride_words, 0u) << "a hop landed between nodes";
      seen.insert(w / stride_words);
    }
    EXPECT_EQ(t[0], 0u);
    EXPECT_EQ(seen.size(), nodes) << "every node visited exactly once";
    EXPECT_EQ(download(end)[0], 0u) << "a full lap ends where it started";
  }
}

TEST(CeilingKernels, DmmaAccumulatesTheHostProduct) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  if (cc_major() < 8) GTEST_SKIP() << "DMMA needs compute capability 8.0";
  std::mt19937 rng(fresh_seed());
  std::uniform_int_distribution<int> v(-9, 9);
  std::vector<double> ab(64);
  for (double& x : ab) {
    do x = v(rng);
    while (x == 0);
  }
  const int grid = 2, iters = 5;
  cuda::DeviceBuffer<double> dab(64), out(static_cast<size_t>(grid) * kDmmaThreads * kDmmaChains * 2);
  cuda::DeviceBuffer<int> err(1);
  dab.upload(ab.data(), 64);
  CUDA_CHECK(cudaMemset(out.get(), 0xFF, out.bytes()));
  CUDA_CHECK(cudaMemset(err.get(), 0, sizeof(int)));
  launch_dmma(grid, iters, dab.get(), out.get(), true, nullptr, err.get(), nullptr);
  const auto h = download(out);
  EXPECT_EQ(download(err)[0], 0);
  // The PTX fragment layout of m8n8k4 f64: A[l/4][l%4], B[l%4][l/4], D[l/4][2(l%4) + i].
  size_t wrong = 0;
  for (size_t tid = 0; tid < static_cast<size_t>(grid) * kDmmaThreads; ++tid) {
    const int lane = static_cast<int>(tid % 32), row = lane / 4;
    for (int c = 0; c < kDmmaChains; ++c)
      for (int i = 0; i < 2; ++i) {
        const int col = 2 * (lane % 4) + i;
        double want = 0;
        for (int k = 0; k < 4; ++k) want += ab[4 * row + k] * ab[32 + 4 * col + k];
        want *= iters;
        const double got = h[(tid * kDmmaChains + c) * 2 + i];
        if (got != want && wrong++ < 3) ADD_FAILURE() << "thread " << tid << " D[" << row << "][" << col << "] = " << got << ", expected " << want;
      }
  }
  EXPECT_EQ(wrong, 0u);
}
