#include "roofline/store/results.hpp"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "roofline/build_info.hpp"
#include "roofline/core/json_text.hpp"

namespace roofline::store {

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::int64_t begin_run(Db& db, const RunInfo& info) {
  Transaction tx(db);
  auto st = db.prepare(
      "INSERT INTO runs(started_at, command, argv, version, git_sha, host) VALUES (?,?,?,?,?,?)");
  st.bind(1, utc_now())
      .bind(2, info.command)
      .bind(3, json_text(nlohmann::json(info.argv)))
      .bind(4, std::string(build::kVersion))
      .bind(5, std::string(build::kGitSha))
      .bind(6, hostname());
  st.run();
  std::int64_t id = db.last_insert_id();
  tx.commit();
  return id;
}

void finish_run(Db& db, std::int64_t run_id, int exit_code, const std::string& message) {
  Transaction tx(db);
  auto st = db.prepare("UPDATE runs SET finished_at=?, status=?, exit_code=?, message=? WHERE id=?");
  st.bind(1, utc_now())
      .bind(2, exit_code == 0 ? "ok" : "failed")
      .bind(3, exit_code)
      .bind(4, message)
      .bind(5, run_id);
  st.run();
  tx.commit();
}

std::int64_t record_device(Db& db, std::int64_t run_id, const DeviceRecord& d) {
  {
    auto q = db.prepare("SELECT id FROM devices WHERE run_id=? AND kind=? AND ordinal=?");
    q.bind(1, run_id).bind(2, d.kind).bind(3, d.ordinal);
    if (q.step()) return q.i64(0);
  }
  Transaction tx(db);
  auto st = db.prepare("INSERT INTO devices(run_id, kind, ordinal, name, uuid, spec) VALUES (?,?,?,?,?,?)");
  st.bind(1, run_id).bind(2, d.kind).bind(3, d.ordinal).bind(4, d.name).bind(5, d.uuid).bind(6, d.spec_json);
  st.run();
  std::int64_t id = db.last_insert_id();
  tx.commit();
  return id;
}

std::int64_t add_measurement(Db& db, const MeasurementRecord& m) {
  auto st = db.prepare(
      "INSERT INTO measurements(run_id, device_id, category, name, precision, unit, value, median_s, min_s, "
      "max_s, q1_s, q3_s, samples, rel_stdev, clock_mhz, throttled, params, measured_at) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  st.bind(1, m.run_id).bind(2, m.device_id).bind(3, m.category).bind(4, m.name);
  if (m.precision.empty()) st.bind(5, std::nullopt);
  else st.bind(5, m.precision);
  st.bind(6, m.unit).bind(7, m.value);
  if (m.time) {
    st.bind(8, m.time->median).bind(9, m.time->min).bind(10, m.time->max).bind(11, m.time->q1);
    st.bind(12, m.time->q3).bind(13, static_cast<std::int64_t>(m.time->n)).bind(14, m.time->rel_stdev);
  } else {
    for (int i = 8; i <= 14; ++i) st.bind(i, std::nullopt);
  }
  st.bind(15, m.clock_mhz).bind(16, m.throttled);
  if (m.params_json.empty()) st.bind(17, std::nullopt);
  else st.bind(17, m.params_json);
  st.bind(18, utc_now());
  st.run();
  return db.last_insert_id();
}

namespace {
const char* kRunColumns =
    "SELECT r.id, r.started_at, COALESCE(r.finished_at,''), r.command, r.argv, r.version, r.status, "
    "COALESCE(r.host,''), r.exit_code, "
    "(SELECT COUNT(*) FROM measurements m WHERE m.run_id=r.id), "
    "COALESCE((SELECT group_concat(name, ', ') FROM devices d WHERE d.run_id=r.id),'') "
    "FROM runs r ";
RunRow run_row(Statement& st) {
  RunRow r;
  r.id = st.i64(0);
  r.started_at = st.text(1);
  r.finished_at = st.text(2);
  r.command = st.text(3);
  r.argv = st.text(4);
  r.version = st.text(5);
  r.status = st.text(6);
  r.host = st.text(7);
  if (!st.is_null(8)) r.exit_code = st.i64(8);
  r.measurements = st.i64(9);
  r.devices = st.text(10);
  return r;
}
}  // namespace

std::optional<RunRow> find_run(Db& db, std::int64_t run_id) {
  auto st = db.prepare(std::string(kRunColumns) + "WHERE r.id = ?");
  st.bind(1, run_id);
  if (!st.step()) return std::nullopt;
  return run_row(st);
}

void save_run_report(Db& db, std::int64_t run_id, const std::string& report_json) {
  auto st = db.prepare("UPDATE runs SET report = ? WHERE id = ?");
  st.bind(1, report_json).bind(2, run_id);
  st.run();
}

std::optional<std::string> run_report(Db& db, std::int64_t run_id) {
  auto st = db.prepare("SELECT report FROM runs WHERE id = ?");
  st.bind(1, run_id);
  if (!st.step() || st.is_null(0)) return std::nullopt;
  return st.text(0);
}

std::vector<RunRow> list_runs(Db& db, int limit, const std::string& command) {
  std::string sql = kRunColumns;
  if (!command.empty()) sql += "WHERE r.command=? ";
  sql += "ORDER BY r.id DESC LIMIT ?";
  auto st = db.prepare(sql);
  int i = 1;
  if (!command.empty()) st.bind(i++, command);
  st.bind(i, limit);
  std::vector<RunRow> rows;
  while (st.step()) rows.push_back(run_row(st));
  return rows;
}

std::optional<LatestValue> latest_measurement(Db& db, const std::string& device_name,
                                              const std::string& name) {
  auto st = db.prepare(
      "SELECT m.value, m.unit, m.run_id, m.measured_at FROM measurements m JOIN devices d ON d.id=m.device_id "
      "WHERE d.name=? AND m.name=? ORDER BY m.id DESC LIMIT 1");
  st.bind(1, device_name).bind(2, name);
  if (!st.step()) return std::nullopt;
  return LatestValue{st.f64(0), st.text(1), st.i64(2), st.text(3)};
}

}  // namespace roofline::store
