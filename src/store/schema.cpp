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

const std::vector<Migration> kMigrations = {
    {1, "runs, devices, measurements", kV1},
};

}  // namespace

const std::vector<Migration>& migrations() { return kMigrations; }
int latest_schema_version() { return kMigrations.back().version; }

}  // namespace roofline::store
