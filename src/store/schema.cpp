// The results store's schema, as a list of migrations. Never edit a migration
// that has landed: add a new one. docs/store.md describes every table.
#include "roofline/store/db.hpp"

namespace roofline::store {

namespace {

// v1: runs, the devices they saw, and every measured figure.
const char* kV1 = R"sql(
CREATE TABLE runs (
  id            INTEGER PRIMARY KEY,
  started_at    TEXT NOT NULL,
  finished_at   TEXT,
  command       TEXT NOT NULL,
  argv          TEXT NOT NULL,
  version       TEXT NOT NULL,
  git_sha       TEXT,
  host          TEXT,
  status        TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running','ok','failed')),
  exit_code     INTEGER,
  message       TEXT
);
CREATE TABLE devices (
  id        INTEGER PRIMARY KEY,
  run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  kind      TEXT NOT NULL CHECK (kind IN ('cpu','gpu')),
  ordinal   INTEGER NOT NULL,
  name      TEXT NOT NULL,
  uuid      TEXT,
  spec      TEXT NOT NULL,
  UNIQUE (run_id, kind, ordinal)
);
CREATE TABLE measurements (
  id           INTEGER PRIMARY KEY,
  run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  device_id    INTEGER REFERENCES devices(id) ON DELETE CASCADE,
  category     TEXT NOT NULL,
  name         TEXT NOT NULL,
  precision    TEXT,
  unit         TEXT NOT NULL,
  value        REAL,
  median_s     REAL,
  min_s        REAL,
  max_s        REAL,
  q1_s         REAL,
  q3_s         REAL,
  samples      INTEGER,
  rel_stdev    REAL,
  clock_mhz    REAL,
  throttled    INTEGER NOT NULL DEFAULT 0,
  params       TEXT,
  measured_at  TEXT NOT NULL
);
CREATE INDEX measurements_by_run ON measurements(run_id, category);
CREATE INDEX measurements_by_name ON measurements(name, device_id);
CREATE INDEX devices_by_name ON devices(name);
)sql";

// v2: the engine's benchmark results (`roofline bench`, one row per model,
// device, mode and batch) and per-layer costs and times. `layers` is filled
// with analytical FLOPs/bytes now; seconds come from the profiler later.
const char* kV2 = R"sql(
CREATE TABLE bench_results (
  id              INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  device_id       INTEGER REFERENCES devices(id) ON DELETE CASCADE,
  device          TEXT NOT NULL,
  model           TEXT NOT NULL,
  mode            TEXT NOT NULL CHECK (mode IN ('train','infer')),
  batch           INTEGER NOT NULL,
  epochs          INTEGER,
  steps           INTEGER,
  train_seconds   REAL,
  epoch_seconds   TEXT,
  test_loss       REAL,
  test_accuracy   REAL,
  infer_median_s  REAL,
  infer_iqr_s     REAL,
  busy_fraction   REAL,
  peer            TEXT,
  params          TEXT,
  measured_at     TEXT NOT NULL
);
CREATE INDEX bench_results_by_run ON bench_results(run_id);
CREATE INDEX bench_results_by_model ON bench_results(model, device, batch);
CREATE TABLE layers (
  id           INTEGER PRIMARY KEY,
  run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  model        TEXT NOT NULL,
  layer_index  INTEGER NOT NULL,
  layer_name   TEXT NOT NULL,
  op           TEXT NOT NULL,
  pass         TEXT NOT NULL CHECK (pass IN ('forward','input-grad','weight-grad','optimizer')),
  batch        INTEGER,
  flops        REAL,
  bytes        REAL,
  seconds      REAL,
  params       TEXT
);
CREATE INDEX layers_by_run ON layers(run_id, model);
)sql";

// v3: profiles of programs run under `roofline profile` (and of roofline's own
// workloads): one row per profiled program with the whole ProfileData as JSON
// (the round trip), and its parts as rows for queries. (v2 is the engine's.)
const char* kV3 = R"sql(
CREATE TABLE profiles (
  id              INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  command         TEXT NOT NULL,
  label           TEXT,
  exit_status     TEXT NOT NULL,
  exit_code       INTEGER NOT NULL,
  complete        INTEGER NOT NULL,
  wall_s          REAL,
  gpu_window_s    REAL,
  kernel_time_s   REAL,
  kernel_busy_s   REAL,
  gpu_busy_s      REAL,
  busy_fraction   REAL,
  processes       INTEGER NOT NULL,
  devices         TEXT NOT NULL,
  data            TEXT NOT NULL,
  created_at      TEXT NOT NULL
);
CREATE TABLE profile_kernels (
  id            INTEGER PRIMARY KEY,
  profile_id    INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  demangled     TEXT,
  nvtx_path     TEXT NOT NULL,
  instances     INTEGER NOT NULL,
  total_ns      REAL NOT NULL,
  avg_ns        REAL,
  med_ns        REAL,
  min_ns        REAL,
  max_ns        REAL,
  stddev_ns     REAL,
  grid          TEXT,
  block         TEXT,
  registers     INTEGER,
  static_smem   INTEGER,
  dynamic_smem  INTEGER,
  device        INTEGER
);
CREATE TABLE profile_apis (
  id          INTEGER PRIMARY KEY,
  profile_id  INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  domain      TEXT NOT NULL,
  calls       INTEGER NOT NULL,
  total_ns    REAL NOT NULL,
  avg_ns      REAL,
  med_ns      REAL,
  min_ns      REAL,
  max_ns      REAL,
  stddev_ns   REAL,
  errors      INTEGER NOT NULL
);
CREATE TABLE profile_memcpys (
  id           INTEGER PRIMARY KEY,
  profile_id   INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  kind         TEXT NOT NULL,
  count        INTEGER NOT NULL,
  total_ns     REAL NOT NULL,
  avg_ns       REAL,
  med_ns       REAL,
  min_ns       REAL,
  max_ns       REAL,
  stddev_ns    REAL,
  total_bytes  INTEGER NOT NULL,
  min_bytes    INTEGER,
  max_bytes    INTEGER,
  pageable     INTEGER NOT NULL,
  synchronous  INTEGER NOT NULL
);
CREATE TABLE profile_samples (
  id              INTEGER PRIMARY KEY,
  profile_id      INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  t_ns            INTEGER NOT NULL,
  gr_active       REAL,
  sm_active       REAL,
  tensor_active   REAL,
  dram_read_bps   REAL,
  dram_write_bps  REAL
);
CREATE TABLE profile_counters (
  id                  INTEGER PRIMARY KEY,
  profile_id          INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  kernel              TEXT NOT NULL,
  nvtx_path           TEXT NOT NULL,
  instances           INTEGER NOT NULL,
  duration_ns         REAL,
  flops               REAL,
  tensor_flops        REAL,
  dram_read_bytes     REAL,
  dram_write_bytes    REAL,
  l2_read_bytes       REAL,
  l2_write_bytes      REAL,
  achieved_occupancy  REAL,
  detail              TEXT
);
CREATE TABLE profile_diagnoses (
  id          INTEGER PRIMARY KEY,
  profile_id  INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  rule        TEXT NOT NULL,
  severity    TEXT NOT NULL,
  title       TEXT NOT NULL,
  evidence    TEXT,
  suggestion  TEXT,
  impact_ns   REAL
);
CREATE INDEX profiles_by_run ON profiles(run_id);
CREATE INDEX profile_kernels_by_profile ON profile_kernels(profile_id);
CREATE INDEX profile_apis_by_profile ON profile_apis(profile_id);
CREATE INDEX profile_memcpys_by_profile ON profile_memcpys(profile_id);
CREATE INDEX profile_samples_by_profile ON profile_samples(profile_id, t_ns);
CREATE INDEX profile_counters_by_profile ON profile_counters(profile_id);
CREATE INDEX profile_diagnoses_by_profile ON profile_diagnoses(profile_id);
)sql";

// v4: the graph networks' cells (roofline bench alexnet,resnet18): a precision,
// the median and spread of one step (train) or batch (infer), the peak device
// memory and the FLOPs of one step, beside the small models' columns.
const char* kV4 = R"sql(
ALTER TABLE bench_results ADD COLUMN precision TEXT;
ALTER TABLE bench_results ADD COLUMN step_median_s REAL;
ALTER TABLE bench_results ADD COLUMN step_iqr_s REAL;
ALTER TABLE bench_results ADD COLUMN peak_bytes REAL;
ALTER TABLE bench_results ADD COLUMN flops REAL;
)sql";

// v5: a profiled network cell's layers with their GPU time (bench --profile):
// the device, precision and mode of the cell, and its profile and result rows.
const char* kV5 = R"sql(
ALTER TABLE layers ADD COLUMN device_id INTEGER REFERENCES devices(id) ON DELETE CASCADE;
ALTER TABLE layers ADD COLUMN precision TEXT;
ALTER TABLE layers ADD COLUMN mode TEXT;
ALTER TABLE layers ADD COLUMN profile_id INTEGER REFERENCES profiles(id) ON DELETE SET NULL;
CREATE INDEX layers_by_device ON layers(device_id, model, precision, mode, batch);
)sql";

// v6: each run's printed report (its tables, notes and warnings as JSON), so
// that `roofline report RUN_ID` can render any stored run as a page.
const char* kV6 = R"sql(
ALTER TABLE runs ADD COLUMN report TEXT;
)sql";

// v7: a layer's pass as the hardware counters saw it (bench --profile
// --counters): FLOPs (all, and on tensor cores; by unit and precision as JSON:
// {"tensor.bf16": ..., "cuda.fp32": ...}), DRAM and L2 bytes, and the counted
// kernels' time. NULL where the cell was not counted.
const char* kV7 = R"sql(
ALTER TABLE layers ADD COLUMN counted_flops REAL;
ALTER TABLE layers ADD COLUMN counted_tensor_flops REAL;
ALTER TABLE layers ADD COLUMN counted_dram_bytes REAL;
ALTER TABLE layers ADD COLUMN counted_l2_bytes REAL;
ALTER TABLE layers ADD COLUMN counted_seconds REAL;
ALTER TABLE layers ADD COLUMN counted_by_unit TEXT;
)sql";

const std::vector<Migration> kMigrations = {
    {1, "runs, devices, measurements", kV1},
    {2, "bench_results, layers", kV2},
    {3, "profiles: kernels, APIs, copies, PM samples, counters, diagnoses", kV3},
    {4, "bench_results: precision, step median and spread, peak memory, FLOPs", kV4},
    {5, "layers: device, precision, mode and profile of a profiled network cell", kV5},
    {6, "runs: the printed report", kV6},
    {7, "layers: counted FLOPs, DRAM and L2 bytes of a layer's pass", kV7},
};

}  // namespace

const std::vector<Migration>& migrations() { return kMigrations; }
int latest_schema_version() { return kMigrations.back().version; }

}  // namespace roofline::store
