// The GPU sweep kernels against the host emulation, the SASS check, and bad
// sizes. Validated on the lent H100 (tools/device/sweep.sh).
#include <gtest/gtest.h>

#include <iostream>

#include "roofline/bench/sweep.hpp"
#include "roofline/bench/sweep_sass.hpp"
#include "roofline/core/error.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "support/cli.hpp"
#include "support/gpu.hpp"

using namespace roofline;
namespace sw = roofline::bench::sweep;

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
  for (const auto& vi : sw::variants()) {
    const auto* k = sass.find(vi.kernel, arch);
    ASSERT_NE(k, nullptr) << vi.kernel << " not in the SASS for " << arch << " (" << sass.source << ")";
    EXPECT_FALSE(k->ops.empty()) << vi.kernel;
    auto m = sw::mix_verdict(vi.variant, sass, arch);
    EXPECT_TRUE(m.from_sass) << m.text;
    std::cout << m.text << "\n";
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
