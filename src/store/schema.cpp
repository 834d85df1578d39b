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

const std::vector<Migration> kMigrations = {
    {1, "runs, devices, measurements", kV1},
    {2, "bench_results, layers", kV2},
};

}  // namespace

const std::vector<Migration>& migrations() { return kMigrations; }
int latest_schema_version() { return kMigrations.back().version; }

}  // namespace roofline::store
