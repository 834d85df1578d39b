// The configuration `roofline profile` hands to the injection library: what
// the launcher writes is what the library reads, and a malformed value is
// refused with a message that names it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "roofline/core/env.hpp"
#include "roofline/core/error.hpp"
#include "roofline/profiler/injection_config.hpp"

using roofline::prof::InjectionConfig;

namespace {

InjectionConfig all_changed() {
  InjectionConfig c;
  c.out_dir = "/tmp/roofline-profile-ü \"quoted\"";
  c.trace = true;
  c.trace_limit = 123;
  c.device = 3;
  c.counters = true;
  c.counters_limit = 0;
  c.metrics = {"gpu__time_duration.sum", "dram__bytes_read.sum"};
  c.pm_sampling = true;
  c.pm_interval_ns = 2'500'000;
  c.capture_range = "nvtx:train step";
  c.delay_ns = 700'000'000;
  c.duration_ns = 300'000'000;
  c.program_start_ns = 123'456'789'012;
  return c;
}

}  // namespace

TEST(InjectionConfig, RoundTripsThroughTextAndTheEnvironment) {
  const InjectionConfig c = all_changed();
  EXPECT_EQ(InjectionConfig::parse(c.to_text()), c);
  EXPECT_EQ(InjectionConfig::parse(InjectionConfig{}.to_text()), InjectionConfig{});
  EXPECT_EQ(InjectionConfig::parse("{}"), InjectionConfig{});  // a missing field keeps its default

  const auto [name, value] = c.environment_variable();
  EXPECT_EQ(name, "ROOFLINE_PROFILE_CONFIG");
  EXPECT_EQ(roofline::env::declaration(roofline::env::Var::ProfileConfig).audience, roofline::env::Audience::Internal);
  setenv(name.c_str(), value.c_str(), 1);
  EXPECT_EQ(InjectionConfig::from_environment(), c);
  unsetenv(name.c_str());
  EXPECT_EQ(InjectionConfig::from_environment(), InjectionConfig{});

  // The capture range the fields ask for.
  const roofline::prof::CaptureSpec s = c.capture();
  EXPECT_EQ(s.range, roofline::prof::CaptureSpec::Range::Nvtx);
  EXPECT_EQ(s.nvtx_name, "train step");
  EXPECT_EQ(s.delay_ns, 700'000'000u);
  EXPECT_EQ(s.duration_ns, 300'000'000u);
  EXPECT_FALSE(InjectionConfig{}.capture().active());
}

TEST(InjectionConfig, BadValuesAreRefusedByName) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {"not json", "not JSON"},
      {"[1, 2]", "expected a JSON object"},
      {R"({"trace_limit": -1})", "trace_limit must be a whole number"},
      {R"({"device": 1.5})", "device must be a whole number"},
      {R"({"counters_limit": 5000000000})", "counters_limit must be a whole number from 0 to 4294967295"},
      {R"({"trace": "yes"})", "trace must be true or false"},
      {R"({"out_dir": ""})", "out_dir must be a non-empty string"},
      {R"({"metrics": "a,b"})", "metrics must be a list"},
      {R"({"metrics": ["a", 3]})", "each metric must be a non-empty string"},
      {R"({"colour": 1})", "unknown field 'colour'"},
      {R"({"capture_range": "cudaProfilerApi"})", "capture_range: 'cudaProfilerApi' is not a capture range"},
      {R"({"capture_range": "nvtx:"})", "capture_range: nvtx: needs the range's name"},
      {R"({"capture_range": 1})", "capture_range must be a string"},
      {R"({"delay_ns": -5})", "delay_ns must be a whole number"},
      {R"({"duration_ns": 1e30})", "duration_ns must be a whole number from 0 to 1000000000000000"},
  };
  for (const auto& k : cases) {
    try {
      InjectionConfig::parse(k.text);
      ADD_FAILURE() << k.text << " was accepted";
    } catch (const roofline::Error& e) {
      EXPECT_EQ(e.kind(), roofline::ErrorKind::Input) << k.text;
      EXPECT_NE(std::string(e.what()).find("ROOFLINE_PROFILE_CONFIG: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(k.says), std::string::npos) << e.what();
      EXPECT_FALSE(e.hint().empty()) << k.text;
    }
  }
}
