// roofline sweep on the command line: bad input gets a clear message and a
// nonzero exit; a small CPU sweep writes the seed's CSV.
#include <gtest/gtest.h>

#include "tests/support/cli.hpp"

using namespace roofline::test;

namespace {
CliResult sweep(const TempDir& d, std::vector<std::string> args) {
  std::vector<std::string> a = {"--db", d.file("r.db"), "sweep"};
  a.insert(a.end(), args.begin(), args.end());
  return run_cli(a);
}
}  // namespace

TEST(SweepCli, KZeroIsAUsageErrorNamingK) {
  TempDir d;
  auto r = sweep(d, {"--device", "cpu", "--k", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("k must be a positive integer"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("what to do"), std::string::npos) << r.err;
}

TEST(SweepCli, NonIntegerAndNegativeKAreUsageErrors) {
  TempDir d;
  for (const char* k : {"1.5", "-3", "1,,x"}) {
    auto r = sweep(d, {"--device", "cpu", "--k", k});
    EXPECT_EQ(r.exit_code, 2) << k;
    EXPECT_NE(r.err.find("k must be"), std::string::npos) << k << ": " << r.err;
  }
}

TEST(SweepCli, NBeyondMemoryNamesMemory) {
  TempDir d;
  auto r = sweep(d, {"--device", "cpu", "--n", "1000000000000000", "--k", "1"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("memory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--n"), std::string::npos) << r.err;
}

TEST(SweepCli, BadNBlockAndVariantAreUsageErrors) {
  TempDir d;
  auto n0 = sweep(d, {"--device", "cpu", "--n", "0"});
  EXPECT_EQ(n0.exit_code, 2);
  EXPECT_NE(n0.err.find("n must be"), std::string::npos) << n0.err;
  auto block = sweep(d, {"--device", "cpu", "--block", "100"});
  EXPECT_EQ(block.exit_code, 2);
  EXPECT_NE(block.err.find("--block must be a multiple of 32"), std::string::npos) << block.err;
  auto var = sweep(d, {"--device", "cpu", "--variants", "fp99"});
  EXPECT_EQ(var.exit_code, 2);
  EXPECT_NE(var.err.find("unknown sweep variant 'fp99'"), std::string::npos) << var.err;
  auto kern = sweep(d, {"--device", "cpu", "--kernel", "fastest"});
  EXPECT_EQ(kern.exit_code, 2);
  EXPECT_NE(kern.err.find("unknown sweep kernel 'fastest'"), std::string::npos) << kern.err;
  EXPECT_NE(kern.err.find("ws"), std::string::npos) << "the hint names every kernel: " << kern.err;
}

TEST(SweepCli, SmallCpuSweepWritesTheSeedsCsvAndStoresPoints) {
  TempDir d;
  auto r = sweep(d, {"--device", "cpu", "--n", "8192", "--k", "1,4,16", "--runs", "3", "--warmup", "1", "--csv-out",
                     d.file("s.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string csv = read_file(d.file("s.csv"));
  ASSERT_EQ(csv.rfind("k,ai,gflops,bandwidth,percent_peak\n", 0), 0u) << csv;
  EXPECT_NE(csv.find("\n1,0.250000,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n4,1.000000,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n16,4.000000,"), std::string::npos) << csv;
  EXPECT_NE(r.out.find("fp32 sweep, cpu kernel, on"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok ("), std::string::npos);  // outputs checked
  EXPECT_NE(r.out.find("SM clock"), std::string::npos) << r.out;  // the clock column, per point
  auto runs = run_cli({"--db", d.file("r.db"), "--json", "runs"});
  EXPECT_NE(runs.out.find("\"sweep\""), std::string::npos);
}
