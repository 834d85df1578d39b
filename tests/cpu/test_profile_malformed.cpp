// Malformed profile files: every reader of one (profile --load, explain
// --from-json, the store, the merge of a profiled program's own files) goes
// through ProfileData::from_json, which must refuse them with an input error
// that says so, never read out of bounds (arrays shorter than their fields,
// wrong types, a file that is not an object).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/profiler/profile_data.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;

namespace {

// Each is a JSON text that once crashed or read past an array's end.
const std::vector<std::string> kMalformed = {
    R"({"kernels":[{"name":"k","duration":{},"grid":[]}]})",
    R"({"kernels":[{"name":"k","duration":{},"grid":[1,2]}]})",
    R"({"kernels":[{"name":"k","duration":{},"block":[1]}]})",
    R"({"kernels":[{"name":"k"}]})",
    R"({"kernels":[{"name":"k","duration":[]}]})",
    R"({"kernels":[7]})",
    R"({"timeline":{"largest_gaps":[[]]}})",
    R"({"timeline":{"largest_gaps":[[1]]}})",
    R"({"timeline":{"largest_gaps":[5]}})",
    R"({"timeline":[]})",
    R"({"pm_samples":[[1,2,3]]})",
    R"({"pm_samples":[[]]})",
    R"({"launches":[{"kernel":"k","api_ns":{}}]})",
    R"({"apis":[{"name":"cudaMalloc"}]})",
    R"({"memcpys":[{"kind":"HtoD","duration":{},"sizes":5}]})",
    R"({"counters":[{"kernel":"k","flops":[1,2]}]})",
    R"({"devices":"H100"})",
    R"({"kernels":[{"name":"k","duration":{"reservoir":"x"}}]})",
    R"([])",
    R"("profile")",
    R"(42)",
    // Numbers a plain cast cannot hold (undefined behaviour in nlohmann's get<>, found by the fuzzer).
    R"({"pm_samples":[[77777777777777777777777771,0.5,0.5,1,2,3]]})",
    R"({"kernels":[{"name":"k","duration":{"count":1e300}}]})",
    R"({"pid":1e10})",
    R"({"processes":[-1e30]})",
    R"({"timeline":{"gap_histogram":{"<10us":-5}}})",
    R"({"kernels":[{"name":"k","duration":{},"grid":[1,2,-3]}]})",
};

}  // namespace

TEST(ProfileMalformed, EveryShapeIsAnInputErrorNotACrash) {
  for (const auto& text : kMalformed) {
    SCOPED_TRACE(text);
    try {
      (void)prof::ProfileData::from_json(nlohmann::json::parse(text));
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Input);
      EXPECT_NE(std::string(e.what()).find("malformed"), std::string::npos) << e.what();
    }
  }
}

TEST(ProfileMalformed, AWellFormedProfileStillReadsBack) {
  prof::ProfileData p;
  p.command = "python3 train.py";
  p.timeline.largest_gaps.push_back({10, 20});
  p.pm_samples.push_back({1, 2, 3, 4, 5, 6});
  prof::KernelSummary k;
  k.name = "k";
  k.grid[0] = 4;
  k.duration.add(1000);
  p.kernels["k"] = k;
  prof::ProfileData q = prof::ProfileData::from_json(p.to_json());
  EXPECT_EQ(q.command, p.command);
  ASSERT_EQ(q.timeline.largest_gaps.size(), 1u);
  EXPECT_EQ(q.timeline.largest_gaps[0].end_ns, 20u);
  ASSERT_EQ(q.pm_samples.size(), 1u);
  ASSERT_EQ(q.kernels.size(), 1u);
  EXPECT_EQ(q.kernels.begin()->second.grid[0], 4u);
}

TEST(ProfileMalformed, LoadSaysTheFileIsMalformedAndExitsWithAnInputError) {
  test::TempDir dir;
  test::write_file(dir.file("bad.json"), kMalformed[0]);
  auto r = test::run_cli({"--db", dir.file("r.db"), "profile", "--load", dir.file("bad.json")});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("malformed"), std::string::npos) << r.err;
}
