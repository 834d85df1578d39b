// What the commands write to and read from the results store.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "roofline/core/stats.hpp"
#include "roofline/store/db.hpp"

namespace roofline::store {

struct RunInfo {
  std::string command;              // the subcommand, e.g. "ceilings"
  std::vector<std::string> argv;    // the whole command line
};

// Inserts a run in status 'running' and returns its id.
std::int64_t begin_run(Db& db, const RunInfo& info);
// Marks a run finished ('ok' when exit_code is 0, else 'failed').
void finish_run(Db& db, std::int64_t run_id, int exit_code, const std::string& message = {});

struct DeviceRecord {
  std::string kind;  // "cpu" or "gpu"
  int ordinal = 0;
  std::string name;
  std::string uuid;
  std::string spec_json;  // the device sheet
};
// Returns the id of the run's device row, inserting it on first use.
std::int64_t record_device(Db& db, std::int64_t run_id, const DeviceRecord& d);

struct MeasurementRecord {
  std::int64_t run_id = 0;
  std::optional<std::int64_t> device_id;
  std::string category;   // ceiling, sweep, bench, ...
  std::string name;       // e.g. "dram.read", "fp32.cuda", "sweep.fp32.k=10"
  std::string precision;
  std::string unit;       // unit of `value`
  double value = 0;
  std::optional<Summary> time;  // per-sample times in seconds
  std::optional<double> clock_mhz;
  int throttled = 0;
  std::string params_json;  // sizes, method, anything needed to reproduce
};
std::int64_t add_measurement(Db& db, const MeasurementRecord& m);

struct RunRow {
  std::int64_t id;
  std::string started_at, finished_at, command, argv, version, status, host;
  std::optional<std::int64_t> exit_code;
  std::int64_t measurements;
  std::string devices;  // names, comma-separated
};
std::vector<RunRow> list_runs(Db& db, int limit, const std::string& command = {});
// One run by id, if the store has it.
std::optional<RunRow> find_run(Db& db, std::int64_t run_id);
// The run's printed report (JSON, core/report.hpp's to_json) kept with it; the
// report of a run stored before schema v6, or of one that failed, is absent.
void save_run_report(Db& db, std::int64_t run_id, const std::string& report_json);
std::optional<std::string> run_report(Db& db, std::int64_t run_id);

// The latest measured value for (device name, measurement name), if any.
struct LatestValue {
  double value;
  std::string unit;
  std::int64_t run_id;
  std::string measured_at;
};
std::optional<LatestValue> latest_measurement(Db& db, const std::string& device_name,
                                              const std::string& name);

std::string hostname();

}  // namespace roofline::store
