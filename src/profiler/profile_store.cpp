#include "roofline/profiler/profile_store.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "roofline/core/error.hpp"
#include "roofline/core/json_text.hpp"

namespace roofline::prof {

namespace {

void bind_stats(store::Statement& st, int first, const DurationStats& d) {
  st.bind(first, static_cast<std::int64_t>(d.count()))
      .bind(first + 1, d.total())
      .bind(first + 2, d.mean())
      .bind(first + 3, d.median())
      .bind(first + 4, d.min())
      .bind(first + 5, d.max())
      .bind(first + 6, d.stddev());
}

}  // namespace

std::int64_t store_profile(store::Db& db, std::int64_t run_id, const ProfileData& p, const std::string& label) {
  store::Transaction tx(db);
  const Timeline& t = p.timeline;
  double window = static_cast<double>(t.window_ns());  // captured time only, with a capture range
  auto st = db.prepare(
      "INSERT INTO profiles(run_id, command, label, exit_status, exit_code, complete, wall_s, gpu_window_s, "
      "kernel_time_s, kernel_busy_s, gpu_busy_s, busy_fraction, processes, devices, data, created_at) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  st.bind(1, run_id).bind(2, p.command);
  if (label.empty())
    st.bind(3, std::nullopt);
  else
    st.bind(3, label);
  st.bind(4, p.exit_status).bind(5, p.exit_code).bind(6, p.complete ? 1 : 0);
  if (p.wall_ns > 0)
    st.bind(7, p.wall_ns * 1e-9);
  else
    st.bind(7, std::nullopt);
  st.bind(8, window * 1e-9)
      .bind(9, p.kernel_time_ns() * 1e-9)
      .bind(10, static_cast<double>(t.kernel_busy_ns) * 1e-9)
      .bind(11, static_cast<double>(t.gpu_busy_ns) * 1e-9)
      .bind(12, t.busy_fraction())
      .bind(13, static_cast<std::int64_t>(std::max<size_t>(p.processes.size(), 1)))
      .bind(14, json_text(p.devices))
      .bind(15, json_text(p.to_json()))
      .bind(16, store::utc_now());
  st.run();
  std::int64_t id = db.last_insert_id();

  auto k = db.prepare(
      "INSERT INTO profile_kernels(profile_id, name, demangled, nvtx_path, instances, total_ns, avg_ns, med_ns, "
      "min_ns, "
      "max_ns, stddev_ns, grid, block, registers, static_smem, dynamic_smem, device) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& [key, s] : p.kernels) {
    k.reset();
    k.bind(1, id).bind(2, s.name).bind(3, s.demangled).bind(4, s.nvtx_path);
    bind_stats(k, 5, s.duration);
    k.bind(12, json_text({s.grid[0], s.grid[1], s.grid[2]}))
        .bind(13, json_text({s.block[0], s.block[1], s.block[2]}))
        .bind(14, s.registers)
        .bind(15, static_cast<std::int64_t>(s.static_smem))
        .bind(16, static_cast<std::int64_t>(s.dynamic_smem))
        .bind(17, s.device);
    k.run();
  }
  auto a = db.prepare(
      "INSERT INTO profile_apis(profile_id, name, domain, calls, total_ns, avg_ns, med_ns, min_ns, max_ns, stddev_ns, "
      "errors) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& [key, s] : p.apis) {
    a.reset();
    a.bind(1, id).bind(2, s.name).bind(3, s.domain);
    bind_stats(a, 4, s.duration);
    a.bind(11, static_cast<std::int64_t>(s.errors));
    a.run();
  }
  auto m = db.prepare(
      "INSERT INTO profile_memcpys(profile_id, kind, count, total_ns, avg_ns, med_ns, min_ns, max_ns, stddev_ns, "
      "total_bytes, min_bytes, max_bytes, pageable, synchronous) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& [key, s] : p.memcpys) {
    m.reset();
    m.bind(1, id).bind(2, s.kind);
    bind_stats(m, 3, s.duration);
    m.bind(10, static_cast<std::int64_t>(s.total_bytes))
        .bind(11, static_cast<std::int64_t>(s.min_bytes))
        .bind(12, static_cast<std::int64_t>(s.max_bytes))
        .bind(13, static_cast<std::int64_t>(s.pageable))
        .bind(14, static_cast<std::int64_t>(s.synchronous));
    m.run();
  }
  auto sm = db.prepare(
      "INSERT INTO profile_samples(profile_id, t_ns, gr_active, sm_active, tensor_active, dram_read_bps, "
      "dram_write_bps) VALUES (?,?,?,?,?,?,?)");
  for (const auto& s : p.pm_samples) {
    sm.reset();
    sm.bind(1, id)
        .bind(2, static_cast<std::int64_t>(s.t_ns))
        .bind(3, s.gr_active)
        .bind(4, s.sm_active)
        .bind(5, s.tensor_active)
        .bind(6, s.dram_read_bps)
        .bind(7, s.dram_write_bps);
    sm.run();
  }
  auto c = db.prepare(
      "INSERT INTO profile_counters(profile_id, kernel, nvtx_path, instances, duration_ns, flops, tensor_flops, "
      "dram_read_bytes, dram_write_bytes, l2_read_bytes, l2_write_bytes, achieved_occupancy, detail) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& s : p.counters) {
    double cuda = 0, tensor = 0;
    for (const auto& [prec, v] : s.flops) cuda += v;
    for (const auto& [prec, v] : s.tensor_flops) tensor += v;
    c.reset();
    c.bind(1, id)
        .bind(2, s.kernel)
        .bind(3, s.nvtx_path)
        .bind(4, static_cast<std::int64_t>(s.instances))
        .bind(5, s.duration_ns)
        .bind(6, cuda)
        .bind(7, tensor)
        .bind(8, s.dram_read_bytes)
        .bind(9, s.dram_write_bytes)
        .bind(10, s.l2_read_bytes)
        .bind(11, s.l2_write_bytes)
        .bind(12, s.achieved_occupancy)
        .bind(13, json_text({{"flops", s.flops}, {"tensor_flops", s.tensor_flops}, {"raw", s.raw}}));
    c.run();
  }
  auto d = db.prepare(
      "INSERT INTO profile_diagnoses(profile_id, rule, severity, title, evidence, suggestion, impact_ns) "
      "VALUES (?,?,?,?,?,?,?)");
  for (const auto& s : p.diagnoses) {
    d.reset();
    d.bind(1, id).bind(2, s.rule).bind(3, s.severity).bind(4, s.title).bind(5, s.evidence).bind(6, s.suggestion);
    d.bind(7, s.impact_ns);
    d.run();
  }
  tx.commit();
  return id;
}

ProfileData load_profile(store::Db& db, std::int64_t profile_id) {
  auto st = db.prepare("SELECT data FROM profiles WHERE id=?");
  st.bind(1, profile_id);
  if (!st.step())
    throw Error(ErrorKind::Input, fmt::format("no profile {} in {}", profile_id, db.path()),
                "list the stored profiles with `roofline runs --command profile`");
  try {
    return ProfileData::from_json(nlohmann::json::parse(st.text(0)));
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::Store, fmt::format("profile {} in {} is damaged: {}", profile_id, db.path(), e.what()),
                "profile the program again");
  }
}

std::vector<ProfileRow> list_profiles(store::Db& db, std::int64_t run_id, int limit) {
  auto st = db.prepare(
      "SELECT p.id, p.run_id, p.command, COALESCE(p.label,''), p.exit_status, p.exit_code, p.complete, "
      "COALESCE(p.wall_s,0), COALESCE(p.busy_fraction,0), COALESCE(p.kernel_time_s,0), p.created_at, "
      "(SELECT COUNT(DISTINCT name) FROM profile_kernels k WHERE k.profile_id=p.id) "
      "FROM profiles p WHERE (?=0 OR p.run_id=?) ORDER BY p.id DESC LIMIT ?");
  st.bind(1, run_id).bind(2, run_id).bind(3, limit);
  std::vector<ProfileRow> out;
  while (st.step()) {
    ProfileRow r;
    r.id = st.i64(0);
    r.run_id = st.i64(1);
    r.command = st.text(2);
    r.label = st.text(3);
    r.exit_status = st.text(4);
    r.exit_code = static_cast<int>(st.i64(5));
    r.complete = st.i64(6) != 0;
    r.wall_s = st.f64(7);
    r.busy_fraction = st.f64(8);
    r.kernel_time_s = st.f64(9);
    r.created_at = st.text(10);
    r.kernels = st.i64(11);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace roofline::prof
