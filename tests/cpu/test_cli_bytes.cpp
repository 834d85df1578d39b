// Command lines that are not valid UTF-8 (a Latin-1 folder name, a kernel
// name of arbitrary bytes): the run is stored and --json output is written,
// with the bad bytes shown as U+FFFD, instead of an "internal error" from the
// JSON encoder (type_error.316).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "roofline/core/json_text.hpp"
#include "roofline/core/strings.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;

TEST(CliBytes, JsonTextReplacesBytesThatAreNotUtf8) {
  const std::string latin1 = "caf\xe9";
  EXPECT_THROW((void)nlohmann::json(latin1).dump(), nlohmann::json::type_error);
  EXPECT_EQ(json_text(nlohmann::json(latin1)), "\"caf\xef\xbf\xbd\"");
  EXPECT_EQ(json_text(nlohmann::json("plain")), "\"plain\"");
}

TEST(CliBytes, ARunWithALatin1ArgumentIsStoredAndSaysWhatIsWrong) {
  test::TempDir dir;
  const std::string folder = dir.file("caf\xe9");
  auto r = test::run_cli({"--db", dir.file("r.db"), "bench", "simple-mlp", "--device", "cpu", "--data", folder});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 1) << "an internal error: " << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  auto runs = test::run_cli({"--db", dir.file("r.db"), "--json", "runs"});
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  auto j = nlohmann::json::parse(runs.out);  // valid JSON, bad bytes replaced
  EXPECT_NE(runs.out.find("caf\xef\xbf\xbd"), std::string::npos) << runs.out;
}

TEST(CliBytes, JsonOutputOfANameThatIsNotUtf8IsValidJson) {
  test::TempDir dir;
  auto r = test::run_cli({"--db", dir.file("r.db"), "--json", "explain", "k\xe9rnel\xff"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NO_THROW((void)nlohmann::json::parse(r.out)) << r.out;
}

TEST(CliBytes, ControlCharactersNeverReachTheTerminalRaw) {
  EXPECT_EQ(printable("k\x1b]0;pwned\x07name"), "k\\x1b]0;pwned\\x07name");
  EXPECT_EQ(printable("a\nb"), "a\\x0ab");
  EXPECT_EQ(printable("a\nb", true), "a\nb");
  EXPECT_EQ(printable("csi\xc2\x9b" "2J"), "csi\\u009b2J");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x80\xa6"), "caf\xc3\xa9 \xe2\x80\xa6") << "UTF-8 text is kept";
  test::TempDir dir;
  auto r = test::run_cli({"--db", dir.file("r.db"), "explain", "\x1b[2J\x1b]0;title\x07void k()"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "an escape sequence reached the terminal";
  EXPECT_NE(r.out.find("\\x1b[2J"), std::string::npos) << r.out;
}
