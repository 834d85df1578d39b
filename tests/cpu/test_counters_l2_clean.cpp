// The range profiler's L2-clean option and its kernel: the names round-trip, Evict
// is the default, and the embedded PTX assembles for the GPUs we run on (the
// driver compiles it at run time, where a mistake would only show on the device).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "roofline/profiler/range_profiler.hpp"
#include "src/profiler/counters/l2_evict_ptx.hpp"

using namespace roofline::prof;

TEST(L2Clean, NamesRoundTripAndEvictIsTheDefault) {
  for (L2Clean c : {L2Clean::None, L2Clean::Memset, L2Clean::Evict}) {
    auto back = parse_l2_clean(to_string(c));
    ASSERT_TRUE(back.has_value()) << to_string(c);
    EXPECT_EQ(*back, c);
  }
  EXPECT_FALSE(parse_l2_clean("flush").has_value());
  EXPECT_FALSE(parse_l2_clean("").has_value());
  EXPECT_EQ(RangeProfilerOptions{}.l2_clean, L2Clean::Evict);
}

TEST(L2Clean, EvictKernelPtxAssemblesForAmpereAndHopper) {
  const std::string ptx = detail::l2_evict_ptx();
  EXPECT_NE(ptx.find(std::string(".entry ") + detail::kL2EvictKernel), std::string::npos);
  // Ordinary loads (they allocate in L2), and the one guarded store.
  EXPECT_NE(ptx.find("ld.global.v4.u32"), std::string::npos);
  EXPECT_EQ(ptx.find("ld.global.nc"), std::string::npos);
  std::string ptxas;
  for (const char* c : {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"})
    if (std::filesystem::exists(c)) ptxas = c;
  if (ptxas.empty()) GTEST_SKIP() << "no ptxas here (the CUDA toolkit is not installed)";
  const auto dir = std::filesystem::temp_directory_path();
  const auto src =
      dir / ("roofline_l2_evict_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".ptx");
  {
    std::ofstream f(src);
    f << ptx;
  }
  for (const char* arch : {"sm_80", "sm_90"}) {
    const std::string cmd = ptxas + " -arch=" + arch + " -o /dev/null " + src.string() + " 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  std::filesystem::remove(src);
}
