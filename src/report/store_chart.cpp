#include "roofline/report/store_chart.hpp"

#include <cctype>
#include <cmath>
#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "roofline/measure/figure.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "roofline/model/roofline.hpp"
#include "roofline/profiler/metrics.hpp"
#include "roofline/profiler/profile_store.hpp"

namespace roofline::report {

std::vector<StoredDevice> stored_devices(store::Db& db, const std::string& kind) {
  // Devices with ceilings or sweep points, a profiled network cell's layers, or (GPUs) a profile with counters.
  auto st = db.prepare(
      "SELECT d.kind, d.name, "
      " (SELECT d2.spec FROM devices d2 WHERE d2.kind = d.kind AND d2.name = d.name ORDER BY d2.id DESC LIMIT 1), "
      " MAX(d.id) AS newest "
      "FROM devices d WHERE (? = '' OR d.kind = ?) AND ("
      " EXISTS (SELECT 1 FROM measurements m WHERE m.device_id = d.id AND m.category IN ('ceiling', 'sweep')) OR "
      " EXISTS (SELECT 1 FROM layers l WHERE l.device_id = d.id) OR "
      " (d.kind = 'gpu' AND EXISTS (SELECT 1 FROM profiles p JOIN profile_counters pc ON pc.profile_id = p.id "
      "  WHERE instr(p.devices, '\"' || d.name || '\"') > 0))) "
      "GROUP BY d.kind, d.name ORDER BY newest DESC");
  st.bind(1, kind).bind(2, kind);
  std::vector<StoredDevice> out;
  while (st.step()) {
    StoredDevice d{st.text(0), st.text(1), nlohmann::json::parse(st.text(2), nullptr, false)};
    if (!d.spec.is_object()) d.spec = nlohmann::json::object();
    out.push_back(std::move(d));
  }
  return out;
}

std::string device_slug(const std::string& name) {
  std::string s;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!s.empty() && s.back() != '-') s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "device" : s;
}

namespace {

// The stored device sheet (older rows may lack fields; the name is always there).
hw::GpuInfo spec_gpu(const StoredDevice& dev) {
  hw::GpuInfo g = hw::GpuInfo::from_json(dev.spec);
  if (g.name.empty()) g.name = dev.name;
  return g;
}
hw::CpuInfo spec_cpu(const StoredDevice& dev) {
  hw::CpuInfo c = hw::CpuInfo::from_json(dev.spec);
  if (c.model_name.empty()) c.model_name = dev.name;
  return c;
}

std::string pct(double v) { return fmt::format("{:.1f}%", v); }

// A workload point's numbers, held against the precision's compute roof and DRAM.
void place_point(ChartPoint& pt, double flops, double bytes, double seconds, const model::Ceiling* compute,
                 const model::Ceiling* dram) {
  pt.ai = flops / bytes;
  pt.flops = flops / seconds;
  pt.bandwidth = bytes / seconds;
  pt.seconds = seconds;
  pt.fields.push_back({"FLOPs (paper)", format_si(flops, "FLOP", 4)});
  pt.fields.push_back({"Bytes (paper)", format_si(bytes, "B", 4)});
  if (!compute || !dram) return;
  const model::Placement pl = model::place(flops, bytes, seconds, *compute, *dram);
  pt.percent_of_roof = 100 * pl.efficiency;
  pt.fields.push_back({"Bound", model::classify(pl)});
  pt.fields.push_back({"Roof here", fmt::format("{} ({} at AI {}, ridge {})", format_si(pl.attainable, "FLOP/s", 3),
                                                pl.bound == model::Bound::Memory ? dram->id : compute->id,
                                                format_sig(pl.ai, 3), format_sig(pl.ridge, 3))});
}

// The newest profiled cell of each model, precision, mode and batch on this
// device (bench --profile): one series per pass of its layers, each point a
// layer sized by its GPU time, and the whole step as a point of "models".
void add_workloads(store::Db& db, const StoredDevice& dev, const model::Roofline& roof, Chart& c,
                   std::vector<std::string>& precisions) {
  ChartSeries models;
  models.name = "whole steps (paper FLOPs and bytes over the kernel time)";
  models.color_key = "step";
  bool first_cell = true;
  std::vector<std::string> without_flops;
  const model::Ceiling* dram = roof.memory("dram");  // the fastest measured DRAM figure, else the datasheet's
  for (const StoredCell& sc : stored_cells(db, dev)) {
    const std::string& precision = sc.precision;
    const std::int64_t run = sc.run;
    if (std::find(precisions.begin(), precisions.end(), precision) == precisions.end()) precisions.push_back(precision);
    const model::Ceiling* compute = pick_ceiling(roof, model::compute_ceiling_id(dev.kind, precision));
    const std::string cell = sc.label();
    std::map<std::string, ChartSeries> by_pass;  // this cell's
    std::vector<std::string> order;
    double flops = 0, bytes = 0, seconds = 0;
    int skipped = 0;
    for (const StoredLayer& x : stored_layers(db, dev, sc)) {
      const std::string &layer = x.layer, &op = x.op, &pass = x.pass;
      const double f = x.flops, b = x.bytes, t = x.seconds;
      seconds += t;
      if (!(f > 0 && b > 0 && t > 0)) {  // the optimizer, dropout: no FLOPs, or nothing ran
        skipped += t > 0 ? 1 : 0;
        continue;
      }
      flops += f, bytes += b;
      if (!by_pass.count(pass)) order.push_back(pass);
      ChartSeries& s = by_pass[pass];
      s.name = fmt::format("{} · {}", cell, pass);
      s.color_key = pass;                    // coloured by pass, whatever the cell
      s.visible = first_cell;                // the first cell drawn; the others behind their toggles
      ChartPoint pt;
      pt.name = fmt::format("{} ({})", layer, op);
      place_point(pt, f, b, t, compute, dram);
      pt.fields.push_back({"Run", std::to_string(run)});
      s.points.push_back(std::move(pt));
    }
    for (const auto& pass : order) c.series.push_back(std::move(by_pass[pass]));
    if (!order.empty()) first_cell = false;
    if (flops > 0 && bytes > 0 && seconds > 0) {
      ChartPoint pt;
      pt.name = cell;
      place_point(pt, flops, bytes, seconds, compute, dram);
      pt.fields.push_back({"Run", std::to_string(run)});
      models.points.push_back(std::move(pt));
    }
    if (skipped > 0) without_flops.push_back(cell);
  }
  if (!without_flops.empty())
    c.notes.push_back(fmt::format("layer passes without FLOPs (the optimizer, dropout) are not drawn; their time is in "
                                  "the whole step ({})", join(without_flops, ", ")));
  if (!models.points.empty()) {
    c.series.push_back(std::move(models));
    c.notes.push_back("layers and steps: the engine's paper FLOPs and bytes over the GPU time of their kernels "
                      "(bench --profile, per step); % of roof against the precision's compute roof and DRAM");
  }
}

// The newest profile of a program run under `roofline profile --counters` on
// this GPU: its kernels at counted FLOPs (work FLOPs: the compiler's register
// moves left out, as the profile's own table) over counted DRAM bytes, and
// counted FLOPs over their measured time, sized by it; each held against the
// roof of the precision most of its FLOPs ran in.
void add_kernels(store::Db& db, const StoredDevice& dev, const model::Roofline& roof, Chart& c,
                 std::vector<std::string>& roofs_used) {
  if (dev.kind != "gpu") return;
  auto st = db.prepare("SELECT DISTINCT profile_id FROM profile_counters ORDER BY profile_id DESC");
  std::optional<prof::ProfileData> newest;
  std::int64_t newest_id = 0;
  while (st.step() && !newest) {
    prof::ProfileData p = prof::load_profile(db, st.i64(0));
    if (std::find(p.devices.begin(), p.devices.end(), dev.name) != p.devices.end())
      newest = std::move(p), newest_id = st.i64(0);
  }
  if (!newest) return;
  ChartSeries s;
  s.name = fmt::format("kernels, counted (profile {}: {})", newest_id, shorten(newest->command, 60));
  s.color_key = "kernels";
  const model::Ceiling* dram = roof.memory("dram");
  int without = 0;
  for (const auto& k : newest->counters) {
    double cuda = 0, tensor = 0;
    std::string cuda_p, tensor_p;
    double cuda_max = 0, tensor_max = 0;
    for (const auto& [prec, v] : k.flops)
      if (cuda += v; v > cuda_max) cuda_max = v, cuda_p = prec;
    for (const auto& [prec, v] : k.tensor_flops)
      if (tensor += v; v > tensor_max) tensor_max = v, tensor_p = prec;
    cuda -= prof::fp16_register_move_flops(k);
    const double flops = std::max(0.0, cuda) + tensor, bytes = k.dram_bytes(), secs = k.duration_ns * 1e-9;
    if (!(flops > 0 && bytes > 0 && secs > 0)) {
      ++without;
      continue;
    }
    const std::string roof_id = tensor >= cuda ? tensor_p + ".tensor" : cuda_p + ".cuda";
    if (std::find(roofs_used.begin(), roofs_used.end(), roof_id) == roofs_used.end()) roofs_used.push_back(roof_id);
    ChartPoint pt;
    pt.name = shorten(k.kernel, 80);
    place_point(pt, flops, bytes, secs, pick_ceiling(roof, roof_id), dram);
    pt.fields[0].first = "FLOPs (counted)";
    pt.fields[1].first = "DRAM bytes (counted)";
    pt.fields.push_back({"Tensor-core share", pct(100 * tensor / flops)});
    pt.fields.push_back({"Held against", roof_id});
    if (!k.nvtx_path.empty()) pt.fields.push_back({"Range", k.nvtx_path});
    pt.fields.push_back({"Instances", std::to_string(k.instances)});
    s.points.push_back(std::move(pt));
  }
  if (s.points.empty()) return;
  c.series.push_back(std::move(s));
  c.notes.push_back(fmt::format("kernels: profile {}'s hardware counters (FLOPs by unit and precision, DRAM bytes) "
                                "over each kernel's measured time{}",
                                newest_id, without ? fmt::format("; {} without FLOPs or DRAM traffic not drawn", without)
                                                   : std::string()));
}

// Data-parallel training steps (bench --gpus) against the communication
// roof: per GPU, the step's FLOPs over the bytes its all-reduces put on the
// link (the gradients × 2(n−1)/n, nccl-tests' bus bytes), held against the
// measured all-reduce bus bandwidth (roofline ceilings on a machine of
// several GPUs): the third roof of a multi-GPU step. The newest row of each
// model, precision, batch and GPU count.
void add_data_parallel(store::Db& db, const StoredDevice& dev, const model::Roofline& roof, Chart& c,
                       std::vector<std::string>& roofs_used) {
  if (dev.kind != "gpu") return;
  auto st = db.prepare(
      "SELECT b.model, b.precision, b.batch, b.flops, b.step_median_s, b.params, b.run_id FROM bench_results b "
      "JOIN devices d ON d.id = b.device_id WHERE d.kind = 'gpu' AND d.name = ? AND b.peer IS NULL AND "
      "b.mode = 'train' AND b.precision IS NOT NULL ORDER BY b.run_id DESC, b.id DESC");
  st.bind(1, dev.name);
  const model::Ceiling* link = pick_ceiling(roof, "nccl.allreduce.busbw");
  ChartSeries s;
  s.name = "data-parallel steps (x: FLOPs per byte all-reduced, per GPU)";
  s.color_key = "data-parallel";
  std::vector<std::string> seen;
  while (st.step()) {
    const nlohmann::json p = nlohmann::json::parse(st.text(5), nullptr, false);
    if (!p.is_object() || !p.contains("gpus") || !p.contains("bucket_bytes")) continue;
    const int gpus = p["gpus"].get<int>();
    const std::string key = fmt::format("{} {} b{} x{}", st.text(0), st.text(1), st.i64(2), gpus);
    if (gpus < 2 || std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    const double flops = st.f64(3) / gpus, secs = st.f64(4);
    const double bus_bytes = p["bucket_bytes"].get<double>() * 2.0 * (gpus - 1) / gpus;
    if (!(flops > 0 && secs > 0 && bus_bytes > 0)) continue;
    const std::string roof_id = model::compute_ceiling_id("gpu", st.text(1));
    if (std::find(roofs_used.begin(), roofs_used.end(), roof_id) == roofs_used.end()) roofs_used.push_back(roof_id);
    ChartPoint pt;
    pt.name = fmt::format("{} {} b{}/GPU on {} GPUs", st.text(0), st.text(1), st.i64(2), gpus);
    place_point(pt, flops, bus_bytes, secs, pick_ceiling(roof, roof_id), link);
    pt.fields[0].first = "FLOPs per GPU (paper)";
    pt.fields[1].first = "All-reduce bus bytes per GPU";
    pt.fields.push_back({"Gradients", p.value("gradients", std::string("fp32"))});
    pt.fields.push_back({"Run", std::to_string(st.i64(6))});
    s.points.push_back(std::move(pt));
  }
  if (s.points.empty()) return;
  if (link && std::find(roofs_used.begin(), roofs_used.end(), link->id) == roofs_used.end())
    roofs_used.push_back(link->id);
  c.series.push_back(std::move(s));
  c.notes.push_back(link ? "data-parallel steps: x is FLOPs per byte the step's all-reduces move over the link, "
                           "held against the measured all-reduce bus bandwidth (nccl.allreduce.busbw), the "
                           "communication roof"
                         : "data-parallel steps: x is FLOPs per byte all-reduced; no all-reduce bandwidth is "
                           "measured on this machine (roofline ceilings on a machine of 2+ GPUs), so no "
                           "communication roof is drawn");
}

}  // namespace

model::Roofline device_roofline(store::Db& db, const StoredDevice& dev, int* measured_count, int* theoretical_count) {
  model::Roofline measured = measure::load_measured_roofline(db, dev.name);
  model::Roofline theoretical =
      dev.kind == "gpu" ? hw::reference_roofline(spec_gpu(dev)) : hw::reference_roofline(spec_cpu(dev));
  model::Roofline roof(dev.name);
  int m = 0, t = 0;
  for (const auto& ce : measured.ceilings()) roof.add(ce), ++m;
  for (const auto& ce : theoretical.ceilings())
    if (ce.source != model::Source::Measured) roof.add(ce), ++t;
  if (measured_count) *measured_count = m;
  if (theoretical_count) *theoretical_count = t;
  return roof;
}

const model::Ceiling* pick_ceiling(const model::Roofline& roof, const std::string& id) {
  if (const auto* c = roof.find(id, model::Source::Measured)) return c;
  return roof.find(id);
}

std::vector<std::string> default_ceilings(const model::Roofline& roof, const std::string& kind,
                                          const std::vector<std::string>& precisions) {
  std::vector<std::string> ids;
  // Memory levels by their measured read stream where there is one (the same id on every device of a
  // comparison), else their fastest figure (measured first, then the datasheet's "dram").
  for (const std::string level : {"dram", "l2"}) {
    if (roof.find(level + ".read", model::Source::Measured)) ids.push_back(level + ".read");
    else if (const auto* m = roof.memory(level)) ids.push_back(m->id);
  }
  ids.push_back(kind == "cpu" ? "fp32.simd" : "fp32.cuda");
  for (const auto& p : precisions) ids.push_back(model::compute_ceiling_id(kind, p));
  return ids;
}

std::string StoredCell::label() const { return fmt::format("{} {} b{} {}", model, precision, batch, mode); }

std::vector<StoredCell> stored_cells(store::Db& db, const StoredDevice& dev) {
  auto st = db.prepare(
      "SELECT l.model, l.precision, l.mode, l.batch, MAX(l.run_id) FROM layers l JOIN devices d ON d.id = l.device_id "
      "WHERE d.kind = ? AND d.name = ? AND l.precision IS NOT NULL GROUP BY l.model, l.precision, l.mode, l.batch "
      "ORDER BY l.model, l.precision, l.mode DESC, l.batch");
  st.bind(1, dev.kind).bind(2, dev.name);
  std::vector<StoredCell> out;
  while (st.step()) out.push_back({st.text(0), st.text(1), st.text(2), st.i64(3), st.i64(4)});
  return out;
}

std::vector<StoredLayer> stored_layers(store::Db& db, const StoredDevice& dev, const StoredCell& c) {
  auto st = db.prepare(
      "SELECT layer_name, op, pass, flops, bytes, seconds, counted_flops, counted_dram_bytes FROM layers l JOIN "
      "devices d ON d.id = l.device_id "
      "WHERE d.kind = ? AND d.name = ? AND l.run_id = ? AND l.model = ? AND l.precision = ? AND l.mode = ? "
      "AND l.batch = ? ORDER BY l.id");
  st.bind(1, dev.kind).bind(2, dev.name).bind(3, c.run).bind(4, c.model).bind(5, c.precision).bind(6, c.mode);
  st.bind(7, c.batch);
  std::vector<StoredLayer> out;
  while (st.step())
    out.push_back({st.text(0), st.text(1), st.text(2), st.f64(3), st.f64(4), st.f64(5), st.opt_f64(6), st.opt_f64(7)});
  return out;
}

DeviceChart device_chart(store::Db& db, const StoredDevice& dev) {
  DeviceChart out;
  Chart& c = out.chart;
  c.title = fmt::format("Roofline: {} ({})", dev.name, dev.kind == "gpu" ? "GPU" : "CPU");
  model::Roofline roof = device_roofline(db, dev, &out.measured_ceilings, &out.theoretical_ceilings);
  if (out.measured_ceilings == 0)
    c.notes.push_back(fmt::format("no measured ceilings for this device: run `roofline ceilings --device {}`", dev.kind));
  if (out.theoretical_ceilings == 0)
    c.notes.push_back("no theoretical ceilings: the hardware database has no figures for this device");

  // Newest sweep run per variant.
  auto st = db.prepare(
      "SELECT m.run_id, m.value, m.params, m.measured_at FROM measurements m JOIN devices d ON d.id = m.device_id "
      "WHERE d.kind = ? AND d.name = ? AND m.category = 'sweep' ORDER BY m.id");
  st.bind(1, dev.kind).bind(2, dev.name);
  struct Row {
    std::int64_t run;
    double value;
    nlohmann::json p;
    std::string at;
  };
  std::map<std::string, std::vector<Row>> by_variant;
  std::map<std::string, std::int64_t> newest_run;
  while (st.step()) {
    Row r{st.i64(0), st.f64(1), nlohmann::json::parse(st.text(2), nullptr, false), st.text(3)};
    if (!r.p.is_object()) continue;
    // One series per variant and kernel (older points have no kernel: the seed's).
    std::string v = r.p.value("variant", "?");
    const std::string kernel = r.p.value("kernel", "");
    if (!kernel.empty() && kernel != "seed" && kernel != "cpu") v += " " + kernel;
    newest_run[v] = std::max(newest_run[v], r.run);
    by_variant[v].push_back(std::move(r));
  }
  for (auto& [variant, rows] : by_variant) {
    ChartSeries s;
    s.name = fmt::format("sweep {} (run {})", variant, newest_run[variant]);
    double mix_peak = 0;
    bool mix_measured = false;
    std::string mix;
    for (const auto& r : rows) {
      if (r.run != newest_run[variant]) continue;
      const auto& p = r.p;
      ChartPoint pt;
      pt.name = fmt::format("k={}", p.value("k", 0));
      pt.ai = p.value("ai", 0.0);
      pt.flops = r.value;
      pt.bandwidth = p.value("bandwidth_gbs", 0.0) * 1e9;
      double ratio = p.value("ratio_to_predicted", 0.0);
      if (ratio > 0) pt.percent_of_roof = 100 * ratio;
      pt.fields = {{"k", std::to_string(p.value("k", 0))},
                   {"% of peak for the mix", pct(p.value("percent_peak", 0.0))},
                   {"Predicted", format_si(p.value("predicted_gflops", 0.0) * 1e9, "FLOP/s", 4)},
                   {"Ratio to predicted", format_sig(ratio, 3)},
                   {"Mean time", format_seconds(p.value("mean_s", 0.0))},
                   {"RMS", pct(p.value("rms_pct", 0.0))},
                   {"n", std::to_string(p.value("n", std::int64_t{0}))},
                   {"Measured", r.at}};
      s.points.push_back(std::move(pt));
      mix_peak = p.value("peak_flops", 0.0);
      mix_measured = p.value("peak_measured", false);
      mix = p.value("mix", "");
    }
    // The roof this series is held against (e.g. half the FFMA rate for FADD+FMUL).
    bool already = false;  // e.g. the CPU's add+mul peak is itself a stored ceiling
    for (const auto& ce : roof.ceilings())
      already |= ce.kind == model::CeilingKind::Compute && std::fabs(ce.value - mix_peak) <= 1e-9 * mix_peak;
    if (mix_peak > 0 && !already) {
      model::Ceiling mc;
      mc.id = "sweep." + variant + ".peak";
      mc.label = fmt::format("{} {} peak", variant, mix);
      mc.kind = model::CeilingKind::Compute;
      mc.value = mix_peak;
      mc.source = mix_measured ? model::Source::Measured : model::Source::Derived;
      mc.precision = variant;
      mc.unit = "mix";
      mc.note = "the peak for the sweep's instruction mix";
      roof.add(mc);
    }
    c.series.push_back(std::move(s));
  }
  const size_t sweep_points = c.point_count();
  std::vector<std::string> precisions, kernel_roofs;
  add_workloads(db, dev, roof, c, precisions);
  add_kernels(db, dev, roof, c, kernel_roofs);
  add_data_parallel(db, dev, roof, c, kernel_roofs);
  // Legible by default: the ceilings that matter for the points (default_ceilings) and each sweep's own;
  // every other ceiling behind the legend's toggle.
  c.shown_ceilings = default_ceilings(roof, dev.kind, precisions);
  for (const auto& id : kernel_roofs)
    if (std::find(c.shown_ceilings.begin(), c.shown_ceilings.end(), id) == c.shown_ceilings.end())
      c.shown_ceilings.push_back(id);
  for (const auto& ce : roof.ceilings())
    if (ce.id.rfind("sweep.", 0) == 0) c.shown_ceilings.push_back(ce.id);
  c.roofs.push_back({dev.name, roof});
  c.subtitle = fmt::format("{} measured ceilings (solid), {} theoretical (dashed); {} sweep points, {} workload points "
                           "(layers, steps, kernels)",
                           out.measured_ceilings, out.theoretical_ceilings, sweep_points, c.point_count() - sweep_points);
  return out;
}

}  // namespace roofline::report
