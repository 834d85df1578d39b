// The warp-specialized ("ws") sweep kernels (src/sweep/ws_kernels.cu)
// against the host emulation: every variant, lengths that end inside a vector,
// inside a chunk and on a chunk's edge, grids so small that the shared-memory
// ring wraps many times (mbarrier phases flip), and the SASS: the same number
// of floating-point instructions as the overlap kernel, which runs the same
// polynomial code. Validated on the lent H100 (tools/device/sweep.sh).
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
#include "tests/support/gpu.hpp"

using namespace roofline;
namespace sw = roofline::sweep;

namespace {

// The ws kernels need sm_90 (bulk copies); older GPUs are skipped, and must
// refuse the kernel with Unsupported.
bool has_bulk_copies() {
  auto gpu = hw::query_gpu(0);
  return gpu.cc_major >= 9;
}

// Runs the ws kernel with `grid` blocks and compares every output with the host.
sw::Check every_output(sw::Variant v, std::int64_t n, int k, int grid, std::uint32_t seed) {
  const auto& vi = sw::info(v);
  const size_t bytes = static_cast<size_t>(n) * vi.element_bytes;
  cuda::DeviceBuffer<char> a(bytes), b(bytes);
  sw::gpu::launch_init(v, a.get(), n, seed, nullptr);
  CUDA_CHECK(cudaMemset(b.get(), 0xFF, bytes));  // NaN in every format: unwritten outputs show
  (void)sw::gpu::ws_config(v, 0);                // sets the kernel's dynamic shared memory limit
  sw::gpu::launch_ws(v, a.get(), b.get(), n, k, grid, nullptr);
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
  return sw::ref::compare(v, k, seed, idx, got);
}

}  // namespace

TEST(SweepWsGpu, EveryVariantMatchesTheHostEmulation) {
  ROOFLINE_REQUIRE_GPU();
  if (!has_bulk_copies()) GTEST_SKIP() << "the ws kernels need compute capability 9.0";
  const std::int64_t per_chunk_fp32 = static_cast<std::int64_t>(sw::gpu::kWsChunkBytes / 4);  // floats per chunk
  for (const auto& vi : sw::variants()) {
    for (std::int64_t n : {std::int64_t{10}, per_chunk_fp32 * 3 + 6, per_chunk_fp32 * sw::gpu::kWsStages * 2,
                           (std::int64_t{3} << 22) + 6}) {
      sw::Options o;
      o.n = n;
      o.k = n > (1 << 20) ? std::vector<std::int64_t>{1, 7} : std::vector<std::int64_t>{1, 2, 16, 17, 18, 100, 1000};
      o.runs = 2;
      o.warmup = 1;
      o.check_samples = static_cast<int>(std::min<std::int64_t>(n, 20000));  // small n: every output
      auto pts = sw::run_gpu(0, vi.variant, sw::Kernel::Ws, o, {});
      ASSERT_EQ(pts.size(), o.k.size()) << vi.name;
      for (const auto& p : pts) {
        EXPECT_EQ(p.kernel, sw::Kernel::Ws);
        EXPECT_TRUE(p.check.ok()) << vi.name << " n=" << n << " k=" << p.k << ": " << p.check.first_mismatch << ", "
                                  << p.check.mismatches << " mismatches, " << p.check.nonfinite << " non-finite";
        EXPECT_GE(p.check.checked, std::min<std::int64_t>(n, 10000)) << vi.name;
        EXPECT_GT(p.timing.mean_s, 0);
        // The rings of the resident blocks: at least one 72 KiB ring per SM.
        EXPECT_GE(p.bytes_in_flight_per_sm, static_cast<double>(sw::gpu::kWsRingBytes) - 1) << vi.name;
        EXPECT_GT(p.resident_threads_per_sm, 0);
      }
    }
  }
}

// Few blocks on a long array: each block wraps its ring many times (the
// producer waits on "empty", the consumers on "full", both phases flip), then
// the ragged last chunk and the last elements past the last whole vector.
TEST(SweepWsGpu, FewBlocksWriteEveryOutputRight) {
  ROOFLINE_REQUIRE_GPU();
  if (!has_bulk_copies()) GTEST_SKIP() << "the ws kernels need compute capability 9.0";
  CUDA_CHECK(cudaSetDevice(0));
  const std::uint32_t seed = std::random_device{}();
  for (auto v : {sw::Variant::Fp32, sw::Variant::Fma, sw::Variant::Fp64, sw::Variant::Fp16, sw::Variant::Bf16}) {
    const std::int64_t n = sw::info(v).elements_per_thread == 2 ? 1000006 : 1000003;  // ragged vector and chunk
    for (int grid : {1, 2, 5}) {
      const auto c = every_output(v, n, 9, grid, seed);
      EXPECT_EQ(c.checked, n);
      EXPECT_TRUE(c.ok()) << sw::info(v).name << " grid " << grid << ": " << c.mismatches << " wrong, first "
                          << c.first_mismatch;
    }
  }
}

// The persistent grid the sweep uses, on a length whose chunks do not divide
// evenly among the blocks, every output compared.
TEST(SweepWsGpu, PersistentGridWritesEveryOutputRight) {
  ROOFLINE_REQUIRE_GPU();
  if (!has_bulk_copies()) GTEST_SKIP() << "the ws kernels need compute capability 9.0";
  CUDA_CHECK(cudaSetDevice(0));
  const auto cfg = sw::gpu::ws_config(sw::Variant::Fp32, 0);
  EXPECT_GE(cfg.blocks_per_sm, 1);
  EXPECT_EQ(cfg.local_bytes, 0u) << "registers spilled";
  std::cout << "ws fp32: " << cfg.blocks_per_sm << " blocks of " << cfg.threads << " threads per SM, "
            << cfg.registers << " registers a thread, " << cfg.smem_per_block << " bytes of shared memory a block\n";
  const std::int64_t n = (std::int64_t{1} << 24) + 12345;
  const auto c = every_output(sw::Variant::Fp32, n, 33, cfg.grid, 77);
  EXPECT_EQ(c.checked, n);
  EXPECT_TRUE(c.ok()) << c.mismatches << " wrong, first " << c.first_mismatch;
}

// The ws and overlap kernels run the same polynomial code (poly_device.cuh):
// the same number of FP instructions per variant in the machine code, so the
// same FLOPs per element. Forms may differ (the compiler may issue a half2 add
// as HFMA2.MMA in one kernel and HADD2 in the other), the total may not.
TEST(SweepWsGpu, SassHasTheOverlapKernelsFloatingPointInstructions) {
  ROOFLINE_REQUIRE_GPU();
  const auto& sass = sw::sweep_sass();
  if (!sass.done) GTEST_SKIP() << "SASS check not done here: " << sass.why_not;
  auto gpu = hw::query_gpu(0);
  if (gpu.cc_major < 9) GTEST_SKIP() << "the ws kernels need compute capability 9.0";
  std::string arch = sw::sm_arch(gpu.cc_major, gpu.cc_minor);
  for (const auto& vi : sw::variants()) {
    const auto* ws = sass.find(vi.gpu_kernel(sw::Kernel::Ws), arch);
    const auto* ov = sass.find(vi.gpu_kernel(sw::Kernel::Overlap), arch);
    ASSERT_NE(ws, nullptr) << vi.gpu_kernel(sw::Kernel::Ws) << " not in the SASS for " << arch;
    ASSERT_NE(ov, nullptr) << vi.gpu_kernel(sw::Kernel::Overlap) << " not in the SASS for " << arch;
    auto total = [](const sw::SassKernel* k) {
      int t = 0;
      for (const auto& [op, c] : k->ops)
        if (op.find(".MMA") == std::string::npos) t += c;  // HFMA2.MMA is counted within HFMA2 already
      return t;
    };
    EXPECT_GT(total(ws), 0) << vi.name;
    EXPECT_EQ(total(ws), total(ov)) << vi.name << ": the ws kernel's FP instructions differ from the overlap kernel's";
    auto m = sw::mix_verdict(vi.variant, sw::Kernel::Ws, sass, arch);
    EXPECT_TRUE(m.from_sass) << m.text;
    std::cout << m.text << "\n";
  }
}
