// bench --counters's CPU-side pieces: the engine's NVTX range stack that the
// counter profiler files kernels under, and the merge of the two counter runs
// (every metric replayed; DRAM bytes in one pass: prof::replace_dram_bytes).
#include <gtest/gtest.h>

#include "roofline/engine/context.hpp"
#include "roofline/profiler/profile_data.hpp"

using namespace roofline;

TEST(BenchCounters, TheInnermostRangeNamesTheLayerAndPass) {
  EXPECT_EQ(engine::current_nvtx_range(), "");
  {
    engine::NvtxRange outer("resnet18/step");
    EXPECT_EQ(engine::current_nvtx_range(), "resnet18/step");
    {
      engine::NvtxRange inner(std::string("resnet18/") + "conv1/forward");  // a temporary name is kept
      EXPECT_EQ(engine::current_nvtx_range(), "resnet18/conv1/forward");
    }
    EXPECT_EQ(engine::current_nvtx_range(), "resnet18/step");
  }
  EXPECT_EQ(engine::current_nvtx_range(), "");
}

TEST(BenchCounters, TheDramRunReplacesTheReplayedBytesKernelByKernel) {
  prof::KernelCounters a, b, a_dram;
  a.kernel = "gemm", a.nvtx_path = "resnet18/fc/forward", a.dram_read_bytes = 30e6, a.dram_write_bytes = 20e6;
  a.tensor_flops["bf16"] = 1e9;
  b.kernel = "gemm", b.nvtx_path = "resnet18/conv1/forward", b.dram_read_bytes = 99e6, b.dram_write_bytes = 19e6;
  a_dram.kernel = "gemm", a_dram.nvtx_path = "resnet18/fc/forward", a_dram.dram_read_bytes = 10e6,
  a_dram.dram_write_bytes = 2e6;
  // Run 1 reads DRAM only: its other fields must not leak into the merge.
  a_dram.tensor_flops["bf16"] = 0;
  size_t unmatched = 9;
  const auto merged = prof::replace_dram_bytes({a, b}, {a_dram}, &unmatched);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(unmatched, 1u);  // conv1's gemm: not in the DRAM run
  EXPECT_EQ(merged[0].dram_read_bytes, 10e6);
  EXPECT_EQ(merged[0].dram_write_bytes, 2e6);
  EXPECT_EQ(merged[0].tensor_flops.at("bf16"), 1e9);
  EXPECT_EQ(merged[1].dram_read_bytes, 99e6);  // kept, and counted as unmatched
}
