// The GPU sweep kernels (the seed's and the overlap kernels) against the host
// emulation, the SASS check, and bad sizes. Validated on the lent H100
// (tools/device/sweep.sh).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "roofline/sweep/sweep.hpp"
#include "roofline/sweep/sass.hpp"
#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "roofline/cuda/memory.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "src/sweep/kernels.hpp"
#include "src/sweep/reference.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
namespace sw = roofline::sweep;

TEST(SweepGpu, EveryVariantMatchesTheHostEmulation) {
  ROOFLINE_REQUIRE_GPU();
  sw::Options o;
  o.n = (1 << 20) + 2;  // not a multiple of the block: the last block is partial
  o.k = {1, 2, 7, 100, 1000};
  o.runs = 2;
  o.warmup = 1;
  o.check_samples = 20000;
  for (const auto& vi : sw::variants()) {
    auto pts = sw::run_gpu(0, vi.variant, o, {});
    ASSERT_EQ(pts.size(), o.k.size()) << vi.name;
    for (const auto& p : pts) {
      EXPECT_TRUE(p.check.ok()) << vi.name << " k=" << p.k << ": " << p.check.first_mismatch << ", "
                                << p.check.mismatches << " mismatches, " << p.check.nonfinite << " non-finite";
      EXPECT_GT(p.check.checked, 10000) << vi.name;
      EXPECT_EQ(p.check.nonfinite, 0) << vi.name << " k=" << p.k;
      EXPECT_GT(p.timing.mean_s, 0);
    }
  }
}

TEST(SweepGpu, OtherBlockSizesGiveTheSameOutputs) {
  ROOFLINE_REQUIRE_GPU();
  sw::Options o;
  o.n = 100000;
  o.k = {5};
  o.runs = 2;
  o.warmup = 0;
  for (int block : {32, 128, 1024}) {
    o.block = block;
    for (auto v : {sw::Variant::Fp32, sw::Variant::Fp16}) {
      auto pts = sw::run_gpu(0, v, o, {});
      EXPECT_TRUE(pts.at(0).check.ok()) << "block " << block << ": " << pts[0].check.first_mismatch;
    }
  }
}

TEST(SweepGpu, SassCountsAreThereForThisGpu) {
  ROOFLINE_REQUIRE_GPU();
  const auto& sass = sw::sweep_sass();
  if (!sass.done) GTEST_SKIP() << "SASS check not done here: " << sass.why_not;
  auto gpu = hw::query_gpu(0);
  std::string arch = sw::sm_arch(gpu.cc_major, gpu.cc_minor);
  for (const auto& vi : sw::variants())
    for (auto kernel : {sw::Kernel::Seed, sw::Kernel::Overlap}) {
      const char* name = vi.gpu_kernel(kernel);
      const auto* k = sass.find(name, arch);
      ASSERT_NE(k, nullptr) << name << " not in the SASS for " << arch << " (" << sass.source << ")";
      EXPECT_FALSE(k->ops.empty()) << name;
      auto m = sw::mix_verdict(vi.variant, kernel, sass, arch);
      EXPECT_TRUE(m.from_sass) << m.text;
      std::cout << m.text << "\n";
    }
}

// The overlap kernels compute the seed's function: every variant, lengths that
// end inside a vector, inside a chunk, and on a chunk's edge, k around the
// unrolled loop's trip of 16 (k - 1 = 15, 16, 17 terms after the first), and
// a length where every block runs several chunks through its stages.
TEST(SweepGpu, OverlapKernelsMatchTheHostEmulation) {
  ROOFLINE_REQUIRE_GPU();
  const std::int64_t per_chunk_fp32 = sw::gpu::kOverlapVecs * sw::gpu::kOverlapThreads * 4;  // floats per chunk
  for (const auto& vi : sw::variants()) {
    for (std::int64_t n : {std::int64_t{10}, per_chunk_fp32 * 3 + 6, per_chunk_fp32 * 8, (std::int64_t{3} << 22) + 6}) {
      sw::Options o;
      o.n = n;
      o.k = n > (1 << 20) ? std::vector<std::int64_t>{1, 7} : std::vector<std::int64_t>{1, 2, 16, 17, 18, 100, 1000};
      o.runs = 2;
      o.warmup = 1;
      o.check_samples = static_cast<int>(std::min<std::int64_t>(n, 20000));  // small n: every output
      auto pts = sw::run_gpu(0, vi.variant, sw::Kernel::Overlap, o, {});
      ASSERT_EQ(pts.size(), o.k.size()) << vi.name;
      for (const auto& p : pts) {
        EXPECT_EQ(p.kernel, sw::Kernel::Overlap);
        EXPECT_TRUE(p.check.ok()) << vi.name << " n=" << n << " k=" << p.k << ": " << p.check.first_mismatch << ", "
                                  << p.check.mismatches << " mismatches, " << p.check.nonfinite << " non-finite";
        EXPECT_GE(p.check.checked, std::min<std::int64_t>(n, 10000)) << vi.name;
        EXPECT_GT(p.timing.mean_s, 0);
        EXPECT_GT(p.bytes_in_flight_per_sm, 0);
        EXPECT_GT(p.resident_threads_per_sm, 0);
      }
    }
  }
}

// Few blocks on a long array: each block cycles its stages many times (the
// slot rotation and the copies kStages chunks ahead), then the ragged end.
TEST(SweepGpu, OverlapKernelWithFewBlocksWritesEveryOutputRight) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  for (auto v : {sw::Variant::Fp32, sw::Variant::Fp64, sw::Variant::Bf16}) {
    const auto& vi = sw::info(v);
    const std::int64_t n = 1000003;  // prime: a ragged last vector and chunk
    const std::uint32_t seed = std::random_device{}();
    const size_t bytes = static_cast<size_t>(n) * vi.element_bytes;
    cuda::DeviceBuffer<char> a(bytes), b(bytes);
    sw::gpu::launch_init(v, a.get(), n, seed, nullptr);
    for (int grid : {1, 3}) {
      CUDA_CHECK(cudaMemset(b.get(), 0xFF, bytes));
      const int k = 9;
      sw::gpu::launch_overlap(v, a.get(), b.get(), n, k, grid, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<std::int64_t> idx(static_cast<size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = i;
      cuda::DeviceBuffer<std::int64_t> d_idx(idx.size());
      cuda::DeviceBuffer<std::uint64_t> d_out(idx.size());
      d_idx.upload(idx.data(), idx.size());
      sw::gpu::launch_gather(v, b.get(), d_idx.get(), n, d_out.get(), nullptr);
      std::vector<std::uint64_t> raw(idx.size());
      d_out.download(raw.data(), raw.size());
      CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<double> got;
      got.reserve(raw.size());
      for (auto r : raw) got.push_back(sw::ref::decode(v, r));
      const auto c = sw::ref::compare(v, k, seed, idx, got);
      EXPECT_EQ(c.checked, n);
      EXPECT_TRUE(c.ok()) << vi.name << " grid " << grid << ": " << c.mismatches << " wrong, first " << c.first_mismatch;
    }
  }
}

TEST(SweepGpu, NBeyondGpuMemoryIsAUsageErrorNamingMemory) {
  ROOFLINE_REQUIRE_GPU();
  sw::Options o;
  o.n = 1000000000000000LL;
  o.k = {1};
  try {
    sw::run_gpu(0, sw::Variant::Fp32, o, {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("GPU memory"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("--n"), std::string::npos) << e.hint();
  }
  test::TempDir d;
  auto r = test::run_cli({"--db", d.file("r.db"), "sweep", "--device", "gpu", "--n", "1000000000000000", "--k", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("memory"), std::string::npos) << r.err;
}

TEST(SweepGpu, OddNForHalfVariantsIsAUsageError) {
  ROOFLINE_REQUIRE_GPU();
  sw::Options o;
  o.n = 1001;
  o.k = {1};
  EXPECT_THROW(sw::run_gpu(0, sw::Variant::Bf16, o, {}), Error);
}
