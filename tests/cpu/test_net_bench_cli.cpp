// `roofline bench` with the networks: bad input gets a clear message and a
// nonzero exit; a CPU cell runs and is stored with its precision.
#include <gtest/gtest.h>

#include "roofline/engine/net_bench.hpp"
#include "tests/support/cli.hpp"

using roofline::test::run_cli;
using roofline::test::TempDir;

TEST(NetBenchCli, UnknownPrecisionIsNamed) {
  TempDir dir;
  const auto r = run_cli({"--db", dir.file("r.db"), "bench", "resnet18", "--device", "cpu", "--precision", "fp8"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("unknown precision 'fp8'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bf16"), std::string::npos) << r.err;
}

TEST(NetBenchCli, SmallModelsAndNetworksAreSeparateCalls) {
  TempDir dir;
  const auto r = run_cli({"--db", dir.file("r.db"), "bench", "simple-mlp,alexnet", "--device", "cpu"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("separate calls"), std::string::npos) << r.err;
}

TEST(NetBenchCli, Bf16OnTheCpuAloneIsRefused) {
  TempDir dir;
  const auto r = run_cli({"--db", dir.file("r.db"), "bench", "resnet18", "--device", "cpu", "--precision", "bf16"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("GPU only"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--precision fp32"), std::string::npos) << r.err;
}

TEST(NetBench, PeerJsonParsesAndTheTableShowsBothRatios) {
  const nlohmann::json j = nlohmann::json::parse(R"({"peer": "pytorch", "records": [
    {"source": "pytorch", "model": "resnet18", "device": "gpu", "precision": "bf16", "batch": 128, "mode": "train",
     "median_s": 0.012, "peak_bytes": 1.8e9, "loss": null},
    {"source": "pytorch-compile", "model": "resnet18", "device": "gpu", "precision": "bf16", "batch": 128,
     "mode": "train", "median_s": 0.009}]})");
  const auto peer = roofline::engine::parse_net_peer_json(j);
  ASSERT_EQ(peer.size(), 2u);
  EXPECT_FALSE(peer[0].loss.has_value());
  EXPECT_GT(peer[0].flops, 1e12);  // a bf16 ResNet-18 step at batch 128 is about 1.4 TFLOP
  EXPECT_LT(peer[0].flops, 1.6e12);
  roofline::engine::NetRecord ours = peer[0];
  ours.source = "roofline";
  ours.median_s = 0.006;
  const auto t = roofline::engine::net_peer_table({ours}, peer);
  ASSERT_EQ(t.rows().size(), 1u);
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows()[0][8]), 2.0);  // × eager
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows()[0][9]), 1.5);  // × compile
}

TEST(NetBenchCli, WeightsOfAnotherModelAreRefusedNamingTheTensors) {
  TempDir dir;
  roofline::test::write_file(dir.file("w.safetensors"), "not a safetensors file");
  auto r = run_cli({"--db", dir.file("r.db"), "bench", "resnet18", "--device", "cpu", "--weights",
                    dir.file("w.safetensors")});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("w.safetensors"), std::string::npos) << r.err;
}
