// The CLI tests' runner (tests/support/cli.hpp): a command that hangs is killed
// at its limit, and its threads' stacks come back in its stderr, so that a hang
// seen once on CI says where it was.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>

#include "tests/support/cli.hpp"

TEST(RunCli, AHungCommandIsKilledAtItsLimitWithItsStacks) {
  // The "binary" is sleep: it outlives a 1 s limit.
  ASSERT_EQ(setenv("ROOFLINE_TEST_BINARY", "/bin/sleep", 1), 0);
  const auto start = std::chrono::steady_clock::now();
  const auto r = roofline::test::run_cli({"60"}, {}, {}, 1);
  unsetenv("ROOFLINE_TEST_BINARY");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(50));
  EXPECT_EQ(r.exit_code, 128 + 9);
  EXPECT_NE(r.err.find("passed the test's 1 s limit"), std::string::npos) << r.err;
  if (r.err.find("gdb is not installed") != std::string::npos) GTEST_SKIP() << "gdb is not installed: no stacks to check";
  // sleep's one thread, in its wait (or a word from gdb saying why it could not attach).
  EXPECT_TRUE(r.err.find("#0") != std::string::npos || r.err.find("could not attach") != std::string::npos) << r.err;
}
