// `roofline ceilings` on a machine without a usable GPU (this one): the GPU
// parts say why, the CPU part still runs, bad input fails clearly. Written to
// hold whether or not the CPU ceilings are implemented yet: the assertions are
// on the GPU messages and the exit codes of bad input.
#include <gtest/gtest.h>

#include "roofline/cuda/runtime.hpp"
#include "tests/support/cli.hpp"

using roofline::test::run_cli;
using roofline::test::TempDir;

namespace {

bool has_gpu() { return roofline::cuda::gpu_count() > 0; }

}  // namespace

TEST(CeilingsCli, DeviceGpuWithoutGpuFailsClearly) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU";
  TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "ceilings", "--device", "gpu", "--quick"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("no GPU to measure"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(roofline::cuda::gpu_unavailable_reason()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--device cpu"), std::string::npos) << "the hint names the way out: " << r.err;
}

TEST(CeilingsCli, AbsentGpuNumberFails) {
  TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "ceilings", "--device", "gpu:7", "--quick"});
  if (roofline::cuda::gpu_count() == 0) {
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_NE(r.err.find("no GPU available"), std::string::npos) << r.err;
  } else if (roofline::cuda::gpu_count() <= 7) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("GPU 7 does not exist"), std::string::npos) << r.err;
  }
}

TEST(CeilingsCli, UnknownDeviceIsAUsageError) {
  TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "ceilings", "--device", "tpu"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("unknown device 'tpu'"), std::string::npos) << r.err;
}

TEST(CeilingsCli, AllDevicesWithoutGpuSaysWhyAndStillTriesTheCpu) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU";
  TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "ceilings", "--device", "all", "--quick"}, {}, {}, 600);
  const std::string reason = roofline::cuda::gpu_unavailable_reason();
  ASSERT_FALSE(reason.empty());
  // Either the CPU part measured something (exit 0, the GPU part a note) or it
  // failed too (nonzero, both reasons in the error); the GPU reason shows either way.
  const std::string all = r.out + r.err;
  EXPECT_NE(all.find("GPU"), std::string::npos) << all;
  EXPECT_NE(all.find(reason), std::string::npos) << all;
  if (r.exit_code != 0) EXPECT_NE(r.err.find("CPU"), std::string::npos) << "the CPU part's fate is reported: " << r.err;
}

TEST(CeilingsCli, CpuOnlyReportsTheCpuPart) {
  TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "ceilings", "--device", "cpu", "--quick", "--json"}, {}, {}, 600);
  if (r.exit_code == 0) {
    EXPECT_NE(r.out.find("\"cpu.ceilings\""), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("gpu0"), std::string::npos) << "no GPU table when only the CPU is asked for";
  } else {
    EXPECT_NE(r.err.find("CPU"), std::string::npos) << r.err;
  }
}

TEST(CeilingsCli, UnwritableDatabaseIsAStoreError) {
  auto r = run_cli({"--db", "/proc/roofline-no-such-dir/r.db", "ceilings", "--device", "cpu"});
  EXPECT_EQ(r.exit_code, 5) << r.err;
}

TEST(CeilingsCli, CorruptDatabaseIsAStoreErrorAndKeptIntact) {
  TempDir dir;
  const std::string db = dir.file("bad.db");
  const std::string junk(4096, 'x');
  roofline::test::write_file(db, junk);
  auto r = run_cli({"--db", db, "ceilings", "--device", "cpu"});
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_EQ(roofline::test::read_file(db), junk) << "a file that is not ours is never overwritten";
}

TEST(CeilingsCli, HelpNamesTheOptions) {
  auto r = run_cli({"ceilings", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* opt : {"--device", "--quick", "--only"}) EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
}

TEST(AnalyzeCli, GpuOnlyWithoutAGpuFailsAndIsStoredAsFailed) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU";
  TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "analyze", "--device", "gpu", "--out", dir.file("report")});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("no GPU to analyze"), std::string::npos) << r.err;
  auto runs = run_cli({"--db", dir.file("r.db"), "runs"});
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_NE(runs.out.find("failed"), std::string::npos) << runs.out;
}

TEST(CeilingsCli, OnlyAPrefixThatMatchesNothingIsAUsageErrorThatSaysSo) {
  TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "ceilings", "--device", "cpu", "--quick", "--only", "nonsense"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--only nonsense"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("docs/ceilings.md"), std::string::npos) << r.err;
}
