// `roofline ceilings --quick --device gpu` on a real GPU: exits 0, prints the
// tables, and every figure it printed is in the store (category "ceiling").
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "roofline/store/db.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/gpu.hpp"

using roofline::test::run_cli;
using roofline::test::TempDir;

TEST(CeilingsCliGpu, QuickRunPrintsAndStoresTheFigures) {
  ROOFLINE_REQUIRE_GPU();
  TempDir dir;
  const std::string db = dir.file("r.db");
  // A subset keeps the test short; tools/device/ceilings.sh runs the whole thing.
  auto r = run_cli({"--db", db, "--json", "ceilings", "--quick", "--device", "gpu:0", "--only",
                    "dram.read,dram.memcpy,fp32.cuda,bf16.tensor,launch.latency,launch.cooperative,sync.grid,dram.latency,"
                    "dram.bytes_in_flight"},
                   {}, {}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, double> printed;
  for (const auto& t : j["tables"])
    for (const auto& row : t["rows"]) {
      const std::string name = row.contains("ceiling") ? row["ceiling"].get<std::string>() : row["figure"].get<std::string>();
      if (row.contains("measured") && row["measured"].is_number()) printed[name] = row["measured"].get<double>();
      if (row.contains("value") && row["value"].is_number()) printed[name] = row["value"].get<double>();
    }
  for (const char* want : {"dram.read", "dram.memcpy", "fp32.cuda", "bf16.tensor", "bf16.tensor.cublaslt",
                           "launch.latency", "launch.cooperative", "sync.grid", "dram.latency", "dram.bytes_in_flight"}) {
    ASSERT_TRUE(printed.count(want)) << want << " missing from " << r.out;
    EXPECT_GT(printed[want], 0) << want;
  }

  roofline::store::Db store(db, roofline::store::Db::Mode::ReadOnly);
  auto st = store.prepare("SELECT name, value FROM measurements WHERE category = 'ceiling'");
  std::map<std::string, double> stored;
  while (st.step()) stored[st.text(0)] = st.f64(1);
  for (const auto& [name, value] : printed) {
    ASSERT_TRUE(stored.count(name)) << name << " printed but not stored";
    EXPECT_TRUE(std::isfinite(stored[name]) && stored[name] > 0) << name;
  }
}

// Two or more GPUs: every ordered pair that reaches each other as peers gets
// its copy bandwidth one way and both ways at once, printed and stored (issue
// 25's interconnect ceilings, first part). Skipped, saying so, on one GPU.
TEST(CeilingsCliGpu, PeerCopiesBetweenEveryPairOfGpus) {
  ROOFLINE_REQUIRE_GPU();
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  if (count < 2) GTEST_SKIP() << "needs two GPUs (this machine has " << count << ")";
  TempDir dir;
  const std::string db = dir.file("r.db");
  auto r = run_cli({"--db", db, "--json", "ceilings", "--quick", "--device", "all", "--only", "p2p,nccl"}, {}, {}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  roofline::store::Db store(db, roofline::store::Db::Mode::ReadOnly);
  auto st = store.prepare(
      "SELECT d.ordinal, m.name, m.value FROM measurements m JOIN devices d ON d.id = m.device_id WHERE m.name LIKE "
      "'p2p.%' OR m.name LIKE 'nccl.%'");
  std::map<std::string, double> got;
  while (st.step()) got["gpu" + std::to_string(st.i64(0)) + " " + st.text(1)] = st.f64(2);
  for (int i = 0; i < count; ++i)
    for (int j = 0; j < count; ++j) {
      if (i == j) continue;
      int can = 0;
      ASSERT_EQ(cudaDeviceCanAccessPeer(&can, i, j), cudaSuccess);
      if (!can) continue;
      const std::string w = "gpu" + std::to_string(i) + " p2p.gpu" + std::to_string(j) + ".write";
      const std::string b = "gpu" + std::to_string(i) + " p2p.gpu" + std::to_string(j) + ".bidir";
      ASSERT_TRUE(got.count(w) && got.count(b)) << w << " or its bidir missing: " << r.out;
      EXPECT_GT(got[w], 10e9) << w;   // far above PCIe 1.0; NVLink is hundreds of GB/s
      EXPECT_GT(got[b], got[w]) << b;  // two copy engines at once move more than one
    }
  // NCCL's collectives, from GPU 0's session, with nccl-tests' bus bandwidth.
  for (const char* c : {"allreduce", "allgather", "reducescatter", "broadcast"}) {
    const std::string k = std::string("gpu0 nccl.") + c + ".busbw";
    ASSERT_TRUE(got.count(k)) << k << " missing: " << r.out << r.err;
    EXPECT_GT(got[k], 10e9) << k;
  }
}
