#include "roofline/profiler/profile_data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "roofline/core/error.hpp"
#include "roofline/core/json_text.hpp"

namespace roofline::prof {

// ------------------------------------------------------------ DurationStats

void DurationStats::add(double ns) {
  ++count_;
  total_ += ns;
  if (count_ == 1) {
    min_ = max_ = ns;
  } else {
    min_ = std::min(min_, ns);
    max_ = std::max(max_, ns);
  }
  double delta = ns - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (ns - mean_);
  // Reservoir sampling (Algorithm R) with a private xorshift generator, so the
  // result does not depend on anything else in the process.
  if (reservoir_.size() < kReservoir) {
    reservoir_.push_back(ns);
  } else {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    std::uint64_t j = rng_ % count_;
    if (j < kReservoir) reservoir_[j] = ns;
  }
}

void DurationStats::merge(const DurationStats& o) {
  if (o.count_ == 0) return;
  if (count_ == 0) {
    *this = o;
    return;
  }
  std::uint64_t n = count_ + o.count_;
  double delta = o.mean_ - mean_;
  m2_ += o.m2_ + delta * delta * static_cast<double>(count_) * static_cast<double>(o.count_) / static_cast<double>(n);
  mean_ = (mean_ * static_cast<double>(count_) + o.mean_ * static_cast<double>(o.count_)) / static_cast<double>(n);
  total_ += o.total_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
  // Keep a reservoir proportional to each side's share.
  std::vector<double> merged;
  size_t take_a = std::min(reservoir_.size(),
                           static_cast<size_t>(std::llround(double(kReservoir) * double(count_) / double(n))));
  size_t take_b = std::min(o.reservoir_.size(), kReservoir - take_a);
  merged.insert(merged.end(), reservoir_.begin(), reservoir_.begin() + static_cast<long>(take_a));
  merged.insert(merged.end(), o.reservoir_.begin(), o.reservoir_.begin() + static_cast<long>(take_b));
  reservoir_ = std::move(merged);
  count_ = n;
}

double DurationStats::stddev() const {
  return count_ > 1 ? std::sqrt(m2_ / static_cast<double>(count_ - 1)) : 0.0;
}

double DurationStats::median() const {
  if (reservoir_.empty()) return 0;
  std::vector<double> s = reservoir_;
  size_t mid = s.size() / 2;
  std::nth_element(s.begin(), s.begin() + static_cast<long>(mid), s.end());
  double hi = s[mid];
  if (s.size() % 2 == 1) return hi;
  double lo = *std::max_element(s.begin(), s.begin() + static_cast<long>(mid));
  return (lo + hi) / 2;
}

nlohmann::json DurationStats::to_json() const {
  return {{"count", count_}, {"total", total_}, {"min", min()}, {"max", max_},
          {"mean", mean_},   {"m2", m2_},       {"reservoir", reservoir_}};
}

namespace {

// Integers read from a profile file, checked: nlohmann converts a JSON float
// to an integer type with a plain cast, undefined for values out of range
// (a fuzzed 7.7e25 as a count). A malformed number is a malformed file.
template <class T>
T integer(const nlohmann::json& v) {
  using L = std::numeric_limits<T>;
  const auto max_u = static_cast<std::uint64_t>(L::max());
  if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() <= max_u) return static_cast<T>(v.get<std::uint64_t>());
  } else if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i >= 0 ? static_cast<std::uint64_t>(i) <= max_u : (L::is_signed && i >= static_cast<std::int64_t>(L::min())))
      return static_cast<T>(i);
  } else if (v.is_number_float()) {
    const double d = v.get<double>(), limit = std::ldexp(1.0, L::digits);  // 2^digits: the first value out of range
    if (d > -1.0 + (L::is_signed ? -limit + 1.0 : 0.0) && d < limit) return static_cast<T>(d);
  } else {
    throw Error(ErrorKind::Input, fmt::format("the profile file is malformed: {} is not a number", json_text(v)));
  }
  throw Error(ErrorKind::Input, fmt::format("the profile file is malformed: {} is out of range", json_text(v)));
}

// obj[key] as an integer, or `fallback` when the key is absent.
template <class T>
T integer_or(const nlohmann::json& obj, const char* key, T fallback) {
  if (!obj.is_object()) throw Error(ErrorKind::Input, "the profile file is malformed: an entry is not an object");
  const auto it = obj.find(key);
  return it == obj.end() ? fallback : integer<T>(*it);
}

template <class T>
std::vector<T> integers(const nlohmann::json& v) {
  std::vector<T> out;
  for (const auto& e : v.get_ref<const nlohmann::json::array_t&>()) out.push_back(integer<T>(e));
  return out;
}

std::map<std::string, std::uint64_t> integer_map(const nlohmann::json& v) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& [k, e] : v.get_ref<const nlohmann::json::object_t&>()) out[k] = integer<std::uint64_t>(e);
  return out;
}

}  // namespace

DurationStats DurationStats::from_json(const nlohmann::json& j) {
  DurationStats d;
  d.count_ = integer_or<std::uint64_t>(j, "count", 0);
  d.total_ = j.value("total", 0.0);
  d.min_ = j.value("min", 0.0);
  d.max_ = j.value("max", 0.0);
  d.mean_ = j.value("mean", 0.0);
  d.m2_ = j.value("m2", 0.0);
  if (j.contains("reservoir")) d.reservoir_ = j["reservoir"].get<std::vector<double>>();
  return d;
}

// ---------------------------------------------------------------- helpers

std::uint64_t Timeline::window_ns() const {
  if (last_gpu_ns <= first_gpu_ns) return 0;
  const std::uint64_t span = last_gpu_ns - first_gpu_ns;
  return span - std::min(span, uncaptured_ns);
}

double Timeline::busy_fraction() const {
  const std::uint64_t w = window_ns();
  return w > 0 ? static_cast<double>(kernel_busy_ns) / static_cast<double>(w) : 0.0;
}

std::uint64_t CaptureSummary::captured_ns() const {
  std::uint64_t n = 0;
  for (const auto& r : ranges) n += r.end_ns > r.start_ns ? r.end_ns - r.start_ns : 0;
  return n;
}

std::uint64_t CaptureSummary::covered_ns(std::uint64_t a, std::uint64_t b) const {
  std::uint64_t n = 0;
  for (const auto& r : ranges) {
    const std::uint64_t lo = std::max(a, r.start_ns), hi = std::min(b, r.end_ns);
    if (hi > lo) n += hi - lo;
  }
  return n;
}

std::string CaptureSummary::describe() const {
  std::string s;
  if (range == "cuda-profiler-api")
    s = "cudaProfilerStart/Stop";
  else if (range.rfind("nvtx:", 0) == 0)
    s = "NVTX ranges named " + range.substr(5);
  std::string when;
  if (delay_ns > 0) when = fmt::format("from {:.2f} s", static_cast<double>(delay_ns) * 1e-9);
  if (duration_ns > 0)
    when += fmt::format("{}for {:.2f} s", when.empty() ? "" : " ", static_cast<double>(duration_ns) * 1e-9);
  if (!when.empty()) s += (s.empty() ? "" : ", ") + when + " after the program started";
  return s;
}

void ProfileData::keep_captured_samples() {
  if (!capture.active()) return;
  std::erase_if(pm_samples, [&](const PmSample& x) {
    return std::none_of(capture.ranges.begin(), capture.ranges.end(),
                        [&](const Interval& r) { return x.t_ns >= r.start_ns && x.t_ns < r.end_ns; });
  });
}

double ProfileData::kernel_time_ns() const {
  double t = 0;
  for (const auto& [key, k] : kernels) t += k.duration.total();
  return t;
}

double KernelCounters::total_flops() const {
  double t = 0;
  for (const auto& [k, v] : flops) t += v;
  for (const auto& [k, v] : tensor_flops) t += v;
  return t;
}

std::vector<KernelCounters> replace_dram_bytes(std::vector<KernelCounters> all, const std::vector<KernelCounters>& dram,
                                               size_t* unmatched) {
  std::map<std::pair<std::string, std::string>, const KernelCounters*> by_key;
  for (const auto& k : dram) by_key[{k.kernel, k.nvtx_path}] = &k;
  size_t missing = 0;
  for (auto& k : all) {
    const auto it = by_key.find({k.kernel, k.nvtx_path});
    if (it == by_key.end()) {
      ++missing;
      continue;
    }
    k.dram_read_bytes = it->second->dram_read_bytes;
    k.dram_write_bytes = it->second->dram_write_bytes;
  }
  if (unmatched) *unmatched = missing;
  return all;
}

// ------------------------------------------------------------------- JSON

namespace {

nlohmann::json dims(const std::uint32_t d[3]) { return {d[0], d[1], d[2]}; }
void read_dims(const nlohmann::json& j, const char* key, std::uint32_t d[3]) {
  if (!j.contains(key)) return;
  const auto& a = j.at(key);
  for (int i = 0; i < 3; ++i) d[i] = integer<std::uint32_t>(a.at(i));
}

}  // namespace

nlohmann::json ProfileData::to_json() const {
  nlohmann::json j;
  j["pid"] = pid;
  j["command"] = command;
  j["exit_status"] = exit_status;
  j["exit_code"] = exit_code;
  j["complete"] = complete;
  j["devices"] = devices;
  j["dram_peak_bps"] = dram_peak_bps;
  j["processes"] = processes;
  j["wall_ns"] = wall_ns;
  auto& jk = j["kernels"] = nlohmann::json::array();
  for (const auto& [key, k] : kernels)
    jk.push_back({{"name", k.name},
                  {"demangled", k.demangled},
                  {"nvtx_path", k.nvtx_path},
                  {"duration", k.duration.to_json()},
                  {"grid", dims(k.grid)},
                  {"block", dims(k.block)},
                  {"registers", k.registers},
                  {"static_smem", k.static_smem},
                  {"dynamic_smem", k.dynamic_smem},
                  {"device", k.device}});
  auto& ja = j["apis"] = nlohmann::json::array();
  for (const auto& [key, a] : apis)
    ja.push_back({{"name", a.name}, {"domain", a.domain}, {"duration", a.duration.to_json()}, {"errors", a.errors}});
  auto& jm = j["memcpys"] = nlohmann::json::array();
  for (const auto& [key, m] : memcpys)
    jm.push_back({{"kind", m.kind},
                  {"duration", m.duration.to_json()},
                  {"total_bytes", m.total_bytes},
                  {"min_bytes", m.min_bytes},
                  {"max_bytes", m.max_bytes},
                  {"pageable", m.pageable},
                  {"synchronous", m.synchronous},
                  {"sizes", m.sizes.to_json()}});
  auto& jl = j["launches"] = nlohmann::json::array();
  for (const auto& [key, l] : launches)
    jl.push_back({{"kernel", l.kernel},
                  {"api_ns", l.api_ns.to_json()},
                  {"queue_ns", l.queue_ns.to_json()},
                  {"kernel_ns", l.kernel_ns.to_json()},
                  {"shorter_than_launch", l.shorter_than_launch}});
  auto& jn = j["nvtx_ranges"] = nlohmann::json::array();
  for (const auto& [key, r] : nvtx_ranges)
    jn.push_back({{"path", r.path}, {"cpu_ns", r.cpu_ns.to_json()}, {"kernels", r.kernels}, {"kernel_ns", r.kernel_ns}});
  nlohmann::json gaps = nlohmann::json::array();
  for (const auto& g : timeline.largest_gaps) gaps.push_back({g.start_ns, g.end_ns});
  j["timeline"] = {{"process_start_ns", timeline.process_start_ns},
                   {"process_end_ns", timeline.process_end_ns},
                   {"first_gpu_ns", timeline.first_gpu_ns},
                   {"last_gpu_ns", timeline.last_gpu_ns},
                   {"kernel_busy_ns", timeline.kernel_busy_ns},
                   {"gpu_busy_ns", timeline.gpu_busy_ns},
                   {"largest_gaps", gaps},
                   {"gap_histogram", timeline.gap_histogram},
                   {"gap_ns_histogram", timeline.gap_ns_histogram},
                   {"late_records", timeline.late_records}};
  if (!ranks.empty()) {
    nlohmann::json rows = nlohmann::json::array();
    for (const RankRow& r : ranks)
      rows.push_back({{"pid", r.pid}, {"rank", r.rank}, {"world", r.world}, {"local_rank", r.local_rank},
                      {"launcher", r.launcher}, {"kernel_ns", r.kernel_ns}, {"window_ns", r.window_ns},
                      {"kernel_busy_ns", r.kernel_busy_ns}, {"comm_busy_ns", r.comm_busy_ns},
                      {"compute_busy_ns", r.compute_busy_ns}, {"overlap_ns", r.overlap_ns}});
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (ranks[i].collectives.empty()) continue;
      nlohmann::json flat = nlohmann::json::array();  // start, end, start, end, ...
      for (const Interval& c : ranks[i].collectives) flat.push_back(c.start_ns), flat.push_back(c.end_ns);
      rows[i]["collectives"] = std::move(flat);
    }
    j["ranks"] = rows;
  }
  if (timeline.comm_busy_ns > 0) {  // runs with NCCL only: other profiles keep their form
    j["timeline"]["comm_busy_ns"] = timeline.comm_busy_ns;
    j["timeline"]["compute_busy_ns"] = timeline.compute_busy_ns;
    j["timeline"]["overlap_ns"] = timeline.overlap_ns;
  }
  // Only with a capture range: profiles without one are written as before.
  if (timeline.uncaptured_ns > 0) j["timeline"]["uncaptured_ns"] = timeline.uncaptured_ns;
  if (capture.active()) {
    nlohmann::json ranges = nlohmann::json::array();
    for (const auto& r : capture.ranges) ranges.push_back({r.start_ns, r.end_ns});
    j["capture"] = {{"range", capture.range},         {"delay_ns", capture.delay_ns},
                    {"duration_ns", capture.duration_ns}, {"ranges", ranges},
                    {"opens", capture.opens},           {"left_out", capture.left_out}};
  }
  j["pm_interval_ns"] = pm_interval_ns;
  auto& jp = j["pm_samples"] = nlohmann::json::array();
  for (const auto& s : pm_samples)
    jp.push_back({s.t_ns, s.gr_active, s.sm_active, s.tensor_active, s.dram_read_bps, s.dram_write_bps});
  auto& jc = j["counters"] = nlohmann::json::array();
  for (const auto& c : counters)
    jc.push_back({{"kernel", c.kernel},
                  {"nvtx_path", c.nvtx_path},
                  {"instances", c.instances},
                  {"duration_ns", c.duration_ns},
                  {"flops", c.flops},
                  {"tensor_flops", c.tensor_flops},
                  {"dram_read_bytes", c.dram_read_bytes},
                  {"dram_write_bytes", c.dram_write_bytes},
                  {"l2_read_bytes", c.l2_read_bytes},
                  {"l2_write_bytes", c.l2_write_bytes},
                  {"achieved_occupancy", c.achieved_occupancy},
                  {"raw", c.raw}});
  auto& js = j["sequences"] = nlohmann::json::array();
  for (const auto& s : sequences) js.push_back({{"kernels", s.kernels}, {"count", s.count}, {"total_ns", s.total_ns}});
  j["untimed_launches"] = untimed_launches;
  auto& jd = j["diagnoses"] = nlohmann::json::array();
  for (const auto& d : diagnoses)
    jd.push_back({{"rule", d.rule},
                  {"severity", d.severity},
                  {"title", d.title},
                  {"evidence", d.evidence},
                  {"suggestion", d.suggestion},
                  {"impact_ns", d.impact_ns}});
  j["warnings"] = warnings;
  return j;
}

namespace {

ProfileData read_profile(const nlohmann::json& j) {
  ProfileData p;
  p.pid = integer_or<int>(j, "pid", 0);
  p.command = j.value("command", "");
  p.exit_status = j.value("exit_status", "");
  p.exit_code = integer_or<int>(j, "exit_code", 0);
  p.complete = j.value("complete", false);
  if (j.contains("devices")) p.devices = j["devices"].get<std::vector<std::string>>();
  if (j.contains("dram_peak_bps")) p.dram_peak_bps = j["dram_peak_bps"].get<std::vector<double>>();
  if (j.contains("processes")) p.processes = integers<int>(j["processes"]);
  for (const auto& r : j.value("ranks", nlohmann::json::array())) {
    RankRow row;
    row.pid = integer_or<int>(r, "pid", 0);
    row.rank = integer_or<int>(r, "rank", -1);
    row.world = integer_or<int>(r, "world", 0);
    row.local_rank = integer_or<int>(r, "local_rank", -1);
    row.launcher = r.value("launcher", std::string());
    row.kernel_ns = r.value("kernel_ns", 0.0);
    row.window_ns = integer_or<std::uint64_t>(r, "window_ns", 0);
    row.kernel_busy_ns = integer_or<std::uint64_t>(r, "kernel_busy_ns", 0);
    row.comm_busy_ns = integer_or<std::uint64_t>(r, "comm_busy_ns", 0);
    row.compute_busy_ns = integer_or<std::uint64_t>(r, "compute_busy_ns", 0);
    row.overlap_ns = integer_or<std::uint64_t>(r, "overlap_ns", 0);
    if (r.contains("collectives")) {
      const auto flat = integers<std::uint64_t>(r["collectives"]);
      if (flat.size() % 2 != 0 || flat.size() / 2 > Timeline::kMaxCollectives)
        throw Error(ErrorKind::Input, "a rank's collectives are not (start, end) pairs", "the profile file is damaged");
      for (size_t i = 0; i < flat.size(); i += 2) row.collectives.push_back({flat[i], flat[i + 1]});
    }
    p.ranks.push_back(std::move(row));
  }
  p.wall_ns = j.value("wall_ns", 0.0);
  for (const auto& jk : j.value("kernels", nlohmann::json::array())) {
    KernelSummary k;
    k.name = jk.value("name", "");
    k.demangled = jk.value("demangled", "");
    k.nvtx_path = jk.value("nvtx_path", "");
    k.duration = DurationStats::from_json(jk.at("duration"));
    read_dims(jk, "grid", k.grid);
    read_dims(jk, "block", k.block);
    k.registers = integer_or<int>(jk, "registers", 0);
    k.static_smem = integer_or<std::uint64_t>(jk, "static_smem", 0);
    k.dynamic_smem = integer_or<std::uint64_t>(jk, "dynamic_smem", 0);
    k.device = integer_or<int>(jk, "device", 0);
    p.kernels[k.name + '\x1f' + k.nvtx_path] = std::move(k);
  }
  for (const auto& ja : j.value("apis", nlohmann::json::array())) {
    ApiSummary a;
    a.name = ja.value("name", "");
    a.domain = ja.value("domain", "");
    a.duration = DurationStats::from_json(ja.at("duration"));
    a.errors = integer_or<std::uint64_t>(ja, "errors", 0);
    p.apis[a.name] = std::move(a);
  }
  for (const auto& jm : j.value("memcpys", nlohmann::json::array())) {
    MemcpySummary m;
    m.kind = jm.value("kind", "");
    m.duration = DurationStats::from_json(jm.at("duration"));
    m.total_bytes = integer_or<std::uint64_t>(jm, "total_bytes", 0);
    m.min_bytes = integer_or<std::uint64_t>(jm, "min_bytes", 0);
    m.max_bytes = integer_or<std::uint64_t>(jm, "max_bytes", 0);
    m.pageable = integer_or<std::uint64_t>(jm, "pageable", 0);
    m.synchronous = integer_or<std::uint64_t>(jm, "synchronous", 0);
    if (jm.contains("sizes")) m.sizes = DurationStats::from_json(jm["sizes"]);
    p.memcpys[m.kind] = std::move(m);
  }
  for (const auto& jl : j.value("launches", nlohmann::json::array())) {
    LaunchSummary l;
    l.kernel = jl.value("kernel", "");
    l.api_ns = DurationStats::from_json(jl.at("api_ns"));
    l.queue_ns = DurationStats::from_json(jl.at("queue_ns"));
    l.kernel_ns = DurationStats::from_json(jl.at("kernel_ns"));
    l.shorter_than_launch = integer_or<std::uint64_t>(jl, "shorter_than_launch", 0);
    p.launches[l.kernel] = std::move(l);
  }
  for (const auto& jn : j.value("nvtx_ranges", nlohmann::json::array())) {
    NvtxRangeSummary r;
    r.path = jn.value("path", "");
    if (jn.contains("cpu_ns")) r.cpu_ns = DurationStats::from_json(jn["cpu_ns"]);
    r.kernels = integer_or<std::uint64_t>(jn, "kernels", 0);
    r.kernel_ns = jn.value("kernel_ns", 0.0);
    p.nvtx_ranges[r.path] = std::move(r);
  }
  if (j.contains("timeline")) {
    const auto& t = j["timeline"];
    p.timeline.process_start_ns = integer_or<std::uint64_t>(t, "process_start_ns", 0);
    p.timeline.process_end_ns = integer_or<std::uint64_t>(t, "process_end_ns", 0);
    p.timeline.first_gpu_ns = integer_or<std::uint64_t>(t, "first_gpu_ns", 0);
    p.timeline.last_gpu_ns = integer_or<std::uint64_t>(t, "last_gpu_ns", 0);
    p.timeline.kernel_busy_ns = integer_or<std::uint64_t>(t, "kernel_busy_ns", 0);
    p.timeline.gpu_busy_ns = integer_or<std::uint64_t>(t, "gpu_busy_ns", 0);
    p.timeline.comm_busy_ns = integer_or<std::uint64_t>(t, "comm_busy_ns", 0);
    p.timeline.compute_busy_ns = integer_or<std::uint64_t>(t, "compute_busy_ns", 0);
    p.timeline.overlap_ns = integer_or<std::uint64_t>(t, "overlap_ns", 0);
    for (const auto& g : t.value("largest_gaps", nlohmann::json::array()))
      p.timeline.largest_gaps.push_back({integer<std::uint64_t>(g.at(0)), integer<std::uint64_t>(g.at(1))});
    if (t.contains("gap_histogram"))
      p.timeline.gap_histogram = integer_map(t["gap_histogram"]);
    if (t.contains("gap_ns_histogram"))
      p.timeline.gap_ns_histogram = integer_map(t["gap_ns_histogram"]);
    p.timeline.late_records = integer_or<std::uint64_t>(t, "late_records", 0);
    p.timeline.uncaptured_ns = integer_or<std::uint64_t>(t, "uncaptured_ns", 0);
  }
  if (j.contains("capture")) {
    const auto& c = j["capture"];
    CaptureSummary& s = p.capture;
    s.range = c.value("range", "");
    s.delay_ns = integer_or<std::uint64_t>(c, "delay_ns", 0);
    s.duration_ns = integer_or<std::uint64_t>(c, "duration_ns", 0);
    for (const auto& r : c.value("ranges", nlohmann::json::array()))
      s.ranges.push_back({integer<std::uint64_t>(r.at(0)), integer<std::uint64_t>(r.at(1))});
    s.opens = integer_or<std::uint64_t>(c, "opens", 0);
    s.left_out = integer_or<std::uint64_t>(c, "left_out", 0);
  }
  p.pm_interval_ns = j.value("pm_interval_ns", 0.0);
  for (const auto& s : j.value("pm_samples", nlohmann::json::array()))
    p.pm_samples.push_back({integer<std::uint64_t>(s.at(0)), s.at(1).get<double>(), s.at(2).get<double>(),
                            s.at(3).get<double>(), s.at(4).get<double>(), s.at(5).get<double>()});
  for (const auto& jc : j.value("counters", nlohmann::json::array())) {
    KernelCounters c;
    c.kernel = jc.value("kernel", "");
    c.nvtx_path = jc.value("nvtx_path", "");
    c.instances = integer_or<std::uint64_t>(jc, "instances", 0);
    c.duration_ns = jc.value("duration_ns", 0.0);
    c.flops = jc.value("flops", std::map<std::string, double>{});
    c.tensor_flops = jc.value("tensor_flops", std::map<std::string, double>{});
    c.dram_read_bytes = jc.value("dram_read_bytes", 0.0);
    c.dram_write_bytes = jc.value("dram_write_bytes", 0.0);
    c.l2_read_bytes = jc.value("l2_read_bytes", 0.0);
    c.l2_write_bytes = jc.value("l2_write_bytes", 0.0);
    c.achieved_occupancy = jc.value("achieved_occupancy", 0.0);
    c.raw = jc.value("raw", std::map<std::string, double>{});
    p.counters.push_back(std::move(c));
  }
  for (const auto& js : j.value("sequences", nlohmann::json::array()))
    p.sequences.push_back({js.value("kernels", std::vector<std::string>{}), integer_or<std::uint64_t>(js, "count", 0),
                           js.value("total_ns", 0.0)});
  if (j.contains("untimed_launches")) p.untimed_launches = integer_map(j["untimed_launches"]);
  for (const auto& jd : j.value("diagnoses", nlohmann::json::array()))
    p.diagnoses.push_back({jd.value("rule", ""), jd.value("severity", ""), jd.value("title", ""),
                           jd.value("evidence", ""), jd.value("suggestion", ""), jd.value("impact_ns", 0.0)});
  if (j.contains("warnings")) p.warnings = j["warnings"].get<std::vector<std::string>>();
  return p;
}

}  // namespace

ProfileData ProfileData::from_json(const nlohmann::json& j) {
  // Every access below checks its type and bounds (value(), at(), get<>):
  // a malformed file throws nlohmann's exception, turned here into an input
  // error that names the problem, never undefined behaviour.
  try {
    if (!j.is_object())
      throw Error(ErrorKind::Input, "the profile file is malformed: it is not a JSON object",
                  "give a file written by `roofline profile --json` or `--output-dir`, unchanged");
    return read_profile(j);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::Input, fmt::format("the profile file is malformed: {}", e.what()),
                "give a file written by `roofline profile --json` or `--output-dir`, unchanged");
  }
}

std::uint64_t ProfileData::untimed_launch_count() const {
  std::uint64_t n = 0;
  for (const auto& [name, count] : untimed_launches) n += count;
  return n;
}

std::uint64_t ProfileData::time_replayed_launches() {
  std::uint64_t added = 0;
  for (const auto& [name, count] : untimed_launches) {
    // The kernel's measured runs, over every NVTX path it was measured in.
    double ns = 0;
    std::uint64_t runs = 0;
    const KernelCounters* first = nullptr;
    for (const auto& c : counters)
      if (c.kernel == name && c.instances > 0 && c.duration_ns > 0) {
        ns += c.duration_ns;
        runs += c.instances;
        if (!first) first = &c;
      }
    if (!first) continue;
    KernelSummary& k = kernels[name + '\x1f' + first->nvtx_path];
    if (k.name.empty()) {
      k.name = name;
      k.nvtx_path = first->nvtx_path;
    }
    for (std::uint64_t i = 0; i < count; ++i) k.duration.add(ns / static_cast<double>(runs));
    added += count;
  }
  return added;
}

void ProfileData::merge_capture(const CaptureSummary& o) {
  if (!o.active()) return;
  if (!capture.active()) {
    // The processes share one configuration: the other's request stands for both.
    capture.range = o.range;
    capture.delay_ns = o.delay_ns;
    capture.duration_ns = o.duration_ns;
  }
  // Each process has its own ranges (its own cudaProfilerStart calls); on the
  // one clock they share, the profile covers their union.
  std::vector<Interval> all = capture.ranges;
  all.insert(all.end(), o.ranges.begin(), o.ranges.end());
  std::sort(all.begin(), all.end(), [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  capture.ranges.clear();
  for (const auto& r : all) {
    if (!capture.ranges.empty() && r.start_ns <= capture.ranges.back().end_ns)
      capture.ranges.back().end_ns = std::max(capture.ranges.back().end_ns, r.end_ns);
    else
      capture.ranges.push_back(r);
  }
  capture.opens += o.opens;
  capture.left_out += o.left_out;
}

void ProfileData::add_rank_row(int rank, int world, int local_rank, const std::string& launcher) {
  RankRow r;
  r.pid = pid;
  r.rank = rank, r.world = world, r.local_rank = local_rank, r.launcher = launcher;
  r.kernel_ns = kernel_time_ns();
  r.window_ns = timeline.window_ns();
  r.kernel_busy_ns = timeline.kernel_busy_ns;
  r.comm_busy_ns = timeline.comm_busy_ns;
  r.compute_busy_ns = timeline.compute_busy_ns;
  r.overlap_ns = timeline.overlap_ns;
  r.collectives = timeline.collectives;
  ranks.push_back(std::move(r));
}

void ProfileData::merge(const ProfileData& o) {
  ranks.insert(ranks.end(), o.ranks.begin(), o.ranks.end());
  for (const auto& [key, k] : o.kernels) {
    auto [it, inserted] = kernels.try_emplace(key, k);
    if (!inserted) it->second.duration.merge(k.duration);
  }
  for (const auto& [key, a] : o.apis) {
    auto [it, inserted] = apis.try_emplace(key, a);
    if (!inserted) {
      it->second.duration.merge(a.duration);
      it->second.errors += a.errors;
    }
  }
  for (const auto& [key, m] : o.memcpys) {
    auto [it, inserted] = memcpys.try_emplace(key, m);
    if (!inserted) {
      auto& d = it->second;
      d.duration.merge(m.duration);
      d.min_bytes = std::min(d.min_bytes, m.min_bytes);
      d.max_bytes = std::max(d.max_bytes, m.max_bytes);
      d.total_bytes += m.total_bytes;
      d.pageable += m.pageable;
      d.synchronous += m.synchronous;
      d.sizes.merge(m.sizes);
    }
  }
  for (const auto& [key, l] : o.launches) {
    auto [it, inserted] = launches.try_emplace(key, l);
    if (!inserted) {
      it->second.api_ns.merge(l.api_ns);
      it->second.queue_ns.merge(l.queue_ns);
      it->second.kernel_ns.merge(l.kernel_ns);
      it->second.shorter_than_launch += l.shorter_than_launch;
    }
  }
  for (const auto& [key, r] : o.nvtx_ranges) {
    auto [it, inserted] = nvtx_ranges.try_emplace(key, r);
    if (!inserted) {
      it->second.cpu_ns.merge(r.cpu_ns);
      it->second.kernels += r.kernels;
      it->second.kernel_ns += r.kernel_ns;
    }
  }
  // Timelines of different processes overlap; busy time adds up only as an
  // upper bound, so the merged figure is the sum clipped to the joint span.
  auto& t = timeline;
  const auto& u = o.timeline;
  merge_capture(o.capture);
  if (u.last_gpu_ns > 0) {
    t.first_gpu_ns = t.first_gpu_ns ? std::min(t.first_gpu_ns, u.first_gpu_ns) : u.first_gpu_ns;
    t.last_gpu_ns = std::max(t.last_gpu_ns, u.last_gpu_ns);
  }
  // With a capture range, the joint window leaves out what neither process captured.
  if (capture.active() && t.last_gpu_ns > t.first_gpu_ns)
    t.uncaptured_ns = (t.last_gpu_ns - t.first_gpu_ns) - capture.covered_ns(t.first_gpu_ns, t.last_gpu_ns);
  if (u.last_gpu_ns > 0) {
    std::uint64_t span = t.window_ns();
    t.kernel_busy_ns = std::min(span, t.kernel_busy_ns + u.kernel_busy_ns);
    t.gpu_busy_ns = std::min(span, t.gpu_busy_ns + u.gpu_busy_ns);
  }
  // Each process's own communication and overlap add up (ranks run side by side on their own GPUs).
  t.comm_busy_ns += u.comm_busy_ns;
  t.compute_busy_ns += u.compute_busy_ns;
  t.overlap_ns += u.overlap_ns;
  t.process_start_ns = t.process_start_ns ? std::min(t.process_start_ns, u.process_start_ns) : u.process_start_ns;
  t.process_end_ns = std::max(t.process_end_ns, u.process_end_ns);
  for (const auto& [k, v] : u.gap_histogram) t.gap_histogram[k] += v;
  for (const auto& [k, v] : u.gap_ns_histogram) t.gap_ns_histogram[k] += v;
  t.late_records += u.late_records;
  for (const auto& [name, n] : o.untimed_launches) untimed_launches[name] += n;
  // Gaps are per process (another process may have kept the GPU busy in one
  // process's gap); the longest of either side are kept.
  t.largest_gaps.insert(t.largest_gaps.end(), u.largest_gaps.begin(), u.largest_gaps.end());
  std::stable_sort(t.largest_gaps.begin(), t.largest_gaps.end(), [](const Interval& a, const Interval& b) {
    return a.end_ns - a.start_ns > b.end_ns - b.start_ns;
  });
  size_t keep_gaps = std::max<size_t>(10, std::max(t.largest_gaps.size() - u.largest_gaps.size(), u.largest_gaps.size()));
  if (t.largest_gaps.size() > keep_gaps) t.largest_gaps.resize(keep_gaps);
  // Sequences: counts add up per kernel sequence; the list keeps the most frequent.
  size_t keep_seq = std::max(sequences.size(), o.sequences.size());
  for (const auto& s : o.sequences) {
    auto it = std::find_if(sequences.begin(), sequences.end(), [&](const KernelSequence& x) { return x.kernels == s.kernels; });
    if (it == sequences.end()) sequences.push_back(s);
    else {
      it->count += s.count;
      it->total_ns += s.total_ns;
    }
  }
  std::stable_sort(sequences.begin(), sequences.end(), [](const KernelSequence& a, const KernelSequence& b) {
    return a.count != b.count ? a.count > b.count : a.kernels.size() > b.kernels.size();
  });
  if (sequences.size() > keep_seq) sequences.resize(keep_seq);
  if (o.devices.size() > devices.size()) {
    devices = o.devices;
    if (o.dram_peak_bps.size() > dram_peak_bps.size()) dram_peak_bps = o.dram_peak_bps;
  }
  if (processes.empty() && pid) processes.push_back(pid);
  std::vector<int> theirs = o.processes;
  if (theirs.empty() && o.pid) theirs.push_back(o.pid);
  for (int p : theirs)
    if (std::find(processes.begin(), processes.end(), p) == processes.end()) processes.push_back(p);
  diagnoses.insert(diagnoses.end(), o.diagnoses.begin(), o.diagnoses.end());
  pm_samples.insert(pm_samples.end(), o.pm_samples.begin(), o.pm_samples.end());
  counters.insert(counters.end(), o.counters.begin(), o.counters.end());
  for (const auto& w : o.warnings) warnings.push_back(w);
  complete = complete && o.complete;
}

}  // namespace roofline::prof
