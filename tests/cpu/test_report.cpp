#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
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
