// roofline import: another machine's store into this one. Every run comes
// with its devices, layers and profiles, the ids renumbered and every
// reference still pointing at its own row; a second import adds nothing; a
// file it cannot import (itself, garbage, a newer schema, missing) is refused
// with this store unchanged and no run recorded.
#include <gtest/gtest.h>

#include <fstream>

#include "roofline/core/error.hpp"
#include "roofline/engine/net_bench.hpp"
#include "roofline/profiler/profile_store.hpp"
#include "roofline/store/db.hpp"
#include "roofline/store/import.hpp"
#include "roofline/store/results.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using roofline::test::TempDir;

namespace {

// A store with one bench run on `gpu`: a device, a profile with a counted
// kernel, and ResNet-18's layers tied to both.
void fill(const std::string& path, const std::string& gpu, const std::string& host_argv) {
  store::Db db(path);
  const std::int64_t run = store::begin_run(db, {"bench", {"roofline", "bench", host_argv}});
  const std::int64_t dev = store::record_device(db, run, {"gpu", 0, gpu, "GPU-" + gpu, "{}"});
  prof::ProfileData p;
  p.command = "roofline bench resnet18";
  p.devices = {gpu};
  prof::KernelCounters k;
  k.kernel = "gemm";
  k.nvtx_path = "resnet18/fc/forward";
  k.tensor_flops["bf16"] = 1e9;
  p.counters.push_back(k);
  const std::int64_t profile = prof::store_profile(db, run, p, "cell");
  engine::NetRecord r;
  r.model = "resnet18", r.device = "gpu", r.precision = "bf16", r.mode = "train", r.batch = 8;
  engine::store_net_layers(db, run, dev, r, profile,
                           engine::net_layer_rows(r, {{"resnet18/conv1/forward", 1e6}}, 1));
  store::finish_run(db, run, 0);
}

std::int64_t count(store::Db& db, const std::string& sql) {
  auto st = db.prepare(sql);
  EXPECT_TRUE(st.step());
  return st.i64(0);
}

}  // namespace

TEST(Import, RunsComeWithTheirDevicesLayersAndProfilesRenumbered) {
  TempDir dir;
  fill(dir.file("here.db"), "NVIDIA H200", "a");
  fill(dir.file("there.db"), "NVIDIA H100 80GB HBM3", "b");
  store::Db here(dir.file("here.db"));
  const std::int64_t layers_before = count(here, "SELECT COUNT(*) FROM layers");
  const store::ImportResult res = store::import_store(here, dir.file("there.db"));
  EXPECT_EQ(res.rows.at("runs"), 1);
  EXPECT_EQ(res.rows.at("devices"), 1);
  EXPECT_EQ(res.rows.at("layers"), layers_before);
  EXPECT_EQ(res.rows.at("profile_counters"), 1);
  EXPECT_EQ(res.runs_skipped, 0);
  ASSERT_EQ(res.devices.size(), 1u);
  EXPECT_EQ(res.devices[0], "NVIDIA H100 80GB HBM3 (gpu)");
  // Each imported layer points at the H100 of its own run and at that run's profile.
  EXPECT_EQ(count(here,
                  "SELECT COUNT(*) FROM layers l JOIN devices d ON d.id = l.device_id JOIN profiles p ON p.id = "
                  "l.profile_id WHERE d.name = 'NVIDIA H100 80GB HBM3' AND d.run_id = l.run_id AND p.run_id = "
                  "l.run_id"),
            layers_before);
  EXPECT_EQ(count(here, "SELECT COUNT(*) FROM pragma_foreign_key_check"), 0);
  EXPECT_EQ(count(here, "SELECT COUNT(DISTINCT name) FROM devices"), 2);

  const store::ImportResult again = store::import_store(here, dir.file("there.db"));
  EXPECT_EQ(again.rows.at("runs"), 0);
  EXPECT_EQ(again.rows.at("layers"), 0);
  EXPECT_EQ(again.runs_skipped, 1);
  EXPECT_EQ(count(here, "SELECT COUNT(*) FROM runs"), 2);
}

TEST(Import, WhatCannotBeImportedLeavesThisStoreAsItWas) {
  TempDir dir;
  fill(dir.file("here.db"), "NVIDIA H200", "a");
  {
    std::ofstream(dir.file("garbage.db")) << "not a database at all, just text long enough to look like a header";
  }
  fill(dir.file("newer.db"), "NVIDIA H100 80GB HBM3", "b");
  {
    store::Db newer(dir.file("newer.db"));
    newer.exec("PRAGMA user_version = " + std::to_string(store::latest_schema_version() + 1));
  }
  for (const std::string& bad : {dir.file("here.db"), dir.file("garbage.db"), dir.file("newer.db"),
                                 dir.file("missing.db")}) {
    SCOPED_TRACE(bad);
    const auto r = test::run_cli({"--db", dir.file("here.db"), "import", bad});
    EXPECT_EQ(r.exit_code, 5) << r.err;
    EXPECT_NE(r.err.find("here.db"), std::string::npos) << r.err;  // "… was not changed" or "is this store itself"
    store::Db here(dir.file("here.db"));
    EXPECT_EQ(count(here, "SELECT COUNT(*) FROM runs"), 1) << "a refused import recorded a run";
  }
  const auto ok = test::run_cli({"--db", dir.file("here.db"), "import", dir.file("newer.db")});
  EXPECT_NE(ok.err.find("newer"), std::string::npos) << ok.err;
}

TEST(Import, TheCliSaysWhatCameInAndRecordsNoRunOfItsOwn) {
  TempDir dir;
  fill(dir.file("here.db"), "NVIDIA H200", "a");
  fill(dir.file("there.db"), "NVIDIA H100 80GB HBM3", "b");
  const auto r = test::run_cli({"--db", dir.file("here.db"), "import", dir.file("there.db")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("devices imported: NVIDIA H100 80GB HBM3 (gpu)"), std::string::npos) << r.out;
  store::Db here(dir.file("here.db"));
  EXPECT_EQ(count(here, "SELECT COUNT(*) FROM runs"), 2);
  EXPECT_EQ(count(here, "SELECT COUNT(*) FROM runs WHERE command = 'import'"), 0);
}
