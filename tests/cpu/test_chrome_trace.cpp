// The Chrome-trace/Perfetto file of `profile --trace`: the same events plain or
// gzip-compressed (a path ending in .gz), the compressed one much smaller, and
// its size said.
#include <gtest/gtest.h>
#include <zlib.h>

#include <nlohmann/json.hpp>
#include <string>

#include "roofline/profiler/aggregator.hpp"
#include "roofline/profiler/chrome_trace.hpp"
#include "roofline/profiler/trace_writer.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using namespace roofline::prof;

namespace {

std::string gunzip_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr);
  std::string out;
  char buf[1 << 16];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

}  // namespace

TEST(ChromeTrace, GzipPathWritesTheSameEventsCompressed) {
  test::TempDir dir;
  const std::string lines = dir.file("trace-1.jsonl");
  {
    TraceWriter w;
    ASSERT_TRUE(w.open(lines, 1'000'000, 1, 1'000, "python3 train.py"));
    for (std::uint64_t i = 0; i < 20'000; ++i) {
      Activity a;
      a.type = Activity::Type::Kernel;
      a.start = 2'000 + i * 100;
      a.end = a.start + 60;
      a.name = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, float*)";
      a.stream = 7;
      a.correlation = static_cast<std::uint32_t>(i);
      w.activity(a, "");
    }
    w.close();
  }
  const auto plain = write_chrome_trace({lines}, dir.file("t.json"), 1'000'000, {"H100"});
  const auto gz = write_chrome_trace({lines}, dir.file("t.json.gz"), 1'000'000, {"H100"});
  EXPECT_FALSE(plain.compressed);
  EXPECT_TRUE(gz.compressed);
  EXPECT_EQ(plain.events, gz.events);
  EXPECT_GE(plain.events, 20'000u);
  const std::string text = test::read_file(dir.file("t.json"));
  EXPECT_EQ(plain.bytes, text.size());
  EXPECT_EQ(gunzip_file(dir.file("t.json.gz")), text);
  EXPECT_LT(gz.bytes * 5, plain.bytes) << "gzip should shrink a JSON trace at least fivefold";
  auto j = nlohmann::json::parse(text);
  EXPECT_GE(j["traceEvents"].size(), plain.events);  // the events and the track names
}
