#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <iostream>
#include <sstream>

#include "roofline/core/error.hpp"
#include "roofline/core/report.hpp"
#include "roofline/core/stats.hpp"
#include "roofline/core/strings.hpp"

using namespace roofline;

TEST(Report, TextJsonAndCsvCarryTheSameRows) {
  Report r("demo");
  Table& t = r.add(Table("ceil", "Ceilings"));
  t.col("name", "Name").col("value", "Value", "TB/s", 2).col("n", "Samples");
  t.row({std::string("dram, read"), 3.14159, std::int64_t{10}});
  t.row({std::string("l2"), std::monostate{}, std::int64_t{12}});
  t.note("measured");

  std::ostringstream text, json, csv;
  render(r, Format::Text, text);
  render(r, Format::Json, json);
  render(r, Format::Csv, csv);
  EXPECT_NE(text.str().find("Value (TB/s)"), std::string::npos);
  EXPECT_NE(text.str().find("3.14"), std::string::npos);
  EXPECT_NE(text.str().find("note: measured"), std::string::npos);
  auto j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j["tables"][0]["rows"][0]["name"], "dram, read");
  EXPECT_DOUBLE_EQ(j["tables"][0]["rows"][0]["value"].get<double>(), 3.14159);
  EXPECT_TRUE(j["tables"][0]["rows"][1]["value"].is_null());
  EXPECT_EQ(csv.str(), "name,value,n\n\"dram, read\",3.14159,10\nl2,,12\n");
}

TEST(Strings, FormattingAndParsing) {
  EXPECT_EQ(format_si(3.35e12, "B/s"), "3.35 TB/s");
  EXPECT_EQ(format_sig(0.012345), "0.0123");
  EXPECT_EQ(format_bytes(50331648), "48.0 MiB");
  EXPECT_EQ(parse_size("64M", "size"), 64ull << 20);
  EXPECT_EQ(parse_int_list("1,64,128", "batch"), (std::vector<std::int64_t>{1, 64, 128}));
  EXPECT_THROW(parse_int("12x", "k"), Error);
  EXPECT_EQ(shorten("abcdefghij", 5), "abcd\xE2\x80\xA6");
  EXPECT_EQ(display_width(shorten("abcdefghij", 5)), 5u);
}

TEST(Stats, SummaryOfKnownSamples) {
  Summary s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 4);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_NEAR(s.stdev, std::sqrt(2.5), 1e-12);
}

// A table wider than the text width: the widest text columns give way (cut
// with "…"), then the columns split into blocks that repeat the first; every
// line fits, every column is still there, notes wrap. No limit: unchanged.
TEST(Report, WideTablesFitTheTextWidth) {
  Table t("wide", "A wide table");
  t.col("name", "Kernel").col("what", "What it is");
  for (int i = 0; i < 9; ++i) t.col("v" + std::to_string(i), "Value " + std::to_string(i), "ms", 3);
  for (int r = 0; r < 3; ++r) {
    std::vector<Cell> row = {std::string("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_nn_align8>(Params) #") +
                                 std::to_string(r),
                             std::string("a GEMM with a ReLU epilogue, bf16 in and out, fp32 accumulation")};
    for (int i = 0; i < 9; ++i) row.push_back(1234.5678 * (i + 1) * (r + 1));
    t.row(row);
  }
  t.note("a note long enough that it has to wrap when the width is eighty columns: it keeps going and going and going");
  std::ostringstream wide;
  render_text(t, wide);
  const std::string header = wide.str().substr(wide.str().find('\n') + 1);
  EXPECT_GT(header.find('\n'), 200u) << "without a limit the header line is as wide as the table";
  std::ostringstream fit;
  render_text(t, fit, 80);
  std::istringstream lines(fit.str());
  int n = 0, continued = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    EXPECT_LE(display_width(line), 80u) << line;
    continued += line == "  (continued)" ? 1 : 0;
  }
  EXPECT_GE(continued, 1);
  for (int i = 0; i < 9; ++i) EXPECT_NE(fit.str().find("Value " + std::to_string(i)), std::string::npos) << i;
  EXPECT_NE(fit.str().find("\xE2\x80\xA6"), std::string::npos) << "the kernel names are cut, marked";
  EXPECT_NE(fit.str().find("void cutla"), std::string::npos) << "a cut name keeps its start";
  std::cout << fit.str();
}

// A brief report (analyze's one screen): the text shows the chosen tables and
// the first warnings, then says what it left out and where it is; JSON keeps all.
TEST(Report, ABriefTextNamesWhatItLeftOutAndWhereItIs) {
  Report r("analyze");
  for (const char* id : {"summary", "spec", "ceilings", "bench"}) {
    Table& t = r.add(Table(id, std::string("Table ") + id));
    t.col("x", "X").row({std::string(id)});
  }
  for (int i = 0; i < 5; ++i) r.warn("warning number " + std::to_string(i));
  r.set_brief({"summary", "bench"}, "in out/index.html");
  std::ostringstream text;
  render(r, Format::Text, text, 200);
  const std::string s = text.str();
  EXPECT_NE(s.find("Table summary"), std::string::npos) << s;
  EXPECT_NE(s.find("Table bench"), std::string::npos) << s;
  EXPECT_EQ(s.find("Table spec\n"), std::string::npos) << s;  // (named in the "more:" line only)
  EXPECT_NE(s.find("warning number 2"), std::string::npos) << s;
  EXPECT_EQ(s.find("warning number 3"), std::string::npos) << s;
  EXPECT_NE(s.find("more: 2 more tables and 2 more warnings (Table spec; Table ceilings): in out/index.html"),
            std::string::npos)
      << s;
  std::ostringstream json;
  render(r, Format::Json, json);
  EXPECT_NE(json.str().find("Table ceilings"), std::string::npos);
  EXPECT_NE(json.str().find("warning number 4"), std::string::npos);
}
