// roofline compare's library: see compare.hpp.
#include "roofline/report/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/model/roofline.hpp"
#include "roofline/store/results.hpp"

namespace roofline::report {

StoredDevice find_stored_device(store::Db& db, const std::string& what) {
  const auto all = stored_devices(db);
  std::vector<StoredDevice> hits;
  const std::string w = to_lower(trim(what));
  for (const auto& d : all)
    if (to_lower(d.name).find(w) != std::string::npos || d.kind == w) hits.push_back(d);
  std::vector<std::string> names;
  for (const auto& d : all) names.push_back(fmt::format("'{}'", d.name));
  if (hits.size() == 1) return hits[0];
  if (hits.empty())
    throw Error(ErrorKind::Usage, fmt::format("no device in the store matches '{}'", what),
                all.empty() ? "run `roofline ceilings` or `roofline bench … --profile` on each device first"
                            : "name one of " + join(names, ", ") + " (any part of the name)");
  names.clear();
  for (const auto& d : hits) names.push_back(fmt::format("'{}'", d.name));
  throw Error(ErrorKind::Usage, fmt::format("'{}' matches {} devices: {}", what, hits.size(), join(names, ", ")),
              "give more of the name");
}

namespace {

struct Dev {
  StoredDevice d;
  model::Roofline roof{""};
  std::vector<StoredCell> cells;
};

const StoredCell* find_cell(const Dev& d, const StoredCell& c) {
  for (const auto& x : d.cells)
    if (x.model == c.model && x.precision == c.precision && x.mode == c.mode && x.batch == c.batch) return &x;
  return nullptr;
}

bool wanted(const StoredCell& c, const CompareOptions& o) {
  return (o.model.empty() || c.model == o.model) && (o.precision.empty() || c.precision == o.precision) &&
         (o.mode.empty() || c.mode == o.mode) && (o.batch == 0 || c.batch == o.batch);
}

std::string short_name(const std::string& n) {  // "NVIDIA H100 80GB HBM3" -> "H100 80GB HBM3"
  return n.rfind("NVIDIA ", 0) == 0 ? n.substr(7) : n;
}

Cell ratio(double a, double b) { return a > 0 && b > 0 ? Cell(a / b) : Cell(); }

// "Within" for the time model's and the roofs' predicted speedups: the tighter and the looser figure.
constexpr double kModelTolerance = 0.05, kModelLooseTolerance = 0.10;

}  // namespace

double layer_time_model(const StoredLayer& l, double compute0, double dram0, double compute1, double dram1) {
  const double flops = l.counted_flops.value_or(l.flops), bytes = l.counted_dram_bytes.value_or(l.bytes);
  const double t_mem = bytes / dram0, t_comp = flops / compute0;
  const bool memory = t_mem >= t_comp;
  const double part = std::min(l.seconds, memory ? t_mem : t_comp);
  return l.seconds - part + part * (memory ? dram0 / dram1 : compute0 / compute1);
}

Comparison compare_devices(store::Db& db, const std::vector<StoredDevice>& devices, const CompareOptions& o) {
  if (devices.size() < 2)
    throw Error(ErrorKind::Usage, "compare needs two or more devices", "name them: roofline compare H100 H200");
  std::vector<Dev> devs;
  for (const auto& d : devices) {
    Dev x{d, device_roofline(db, d), stored_cells(db, d)};
    devs.push_back(std::move(x));
  }
  const Dev& ref = devs[0];
  Comparison out;

  // Ceilings side by side: the ids every device has, in the reference's order.
  {
    Table t("compare.ceilings", "Ceilings side by side (measured where measured, else the datasheet's)");
    t.col("ceiling", "Ceiling");
    for (const auto& d : devs) t.col("v_" + device_slug(d.d.name), short_name(d.d.name));
    for (size_t i = 1; i < devs.size(); ++i) t.col("r_" + device_slug(devs[i].d.name), "× " + short_name(ref.d.name), "", 2);
    std::vector<std::string> ids;
    for (const char* level : {"dram", "l2"})  // memory levels at their fastest figure on each device
      ids.push_back(level);
    for (const auto& c : ref.roof.ceilings())
      if (c.kind == model::CeilingKind::Compute && std::find(ids.begin(), ids.end(), c.id) == ids.end())
        ids.push_back(c.id);
    for (const auto& id : ids) {
      std::vector<const model::Ceiling*> cs;
      for (const auto& d : devs) cs.push_back(id == "dram" || id == "l2" ? d.roof.memory(id) : pick_ceiling(d.roof, id));
      if (std::find(cs.begin(), cs.end(), nullptr) != cs.end()) continue;
      const bool mem = cs[0]->kind == model::CeilingKind::Memory;
      std::vector<Cell> row = {id};
      for (const auto* c : cs)
        row.push_back(format_si(c->value, mem ? "B/s" : "FLOP/s", 3) + (c->source == model::Source::Measured ? "" : " (sheet)"));
      for (size_t i = 1; i < cs.size(); ++i) row.push_back(ratio(cs[i]->value, cs[0]->value));
      t.row(row);
    }
    t.note("× : each device's figure over the first's; (sheet): no measured figure, the datasheet's");
    out.tables.push_back(std::move(t));
  }

  // Cells every device ran, per class of layer on the reference device.
  Table cells("compare.cells", "Where the difference comes from: GPU time per step by where each layer sits on " +
                                   short_name(ref.d.name) + "'s roofline");
  cells.col("cell", "Cell").col("class", "Layers").col("n", "n");
  for (const auto& d : devs) cells.col("ms_" + device_slug(d.d.name), short_name(d.d.name), "ms", 3);
  for (size_t i = 1; i < devs.size(); ++i) {
    cells.col("x_" + device_slug(devs[i].d.name), "speedup", "×", 2);
    cells.col("roof_" + device_slug(devs[i].d.name), "roof says", "×", 2);
    cells.col("model_" + device_slug(devs[i].d.name), "model says", "×", 2);
  }
  struct LayerDiff {
    std::string cell, name, cls;
    std::vector<double> t;
    double expected = 0, modelled = 0;  // speedups on the second device: the roof's ratio; the time model's
  };
  // Second device, layers with FLOPs: how many each prediction gets within the tolerances.
  int model_layers = 0, model_within = 0, roof_within = 0, model_loose = 0, roof_loose = 0;
  std::vector<LayerDiff> diffs;
  const StoredCell* chart_cell = nullptr;
  for (const auto& c : ref.cells) {
    if (!wanted(c, o)) continue;
    std::vector<const StoredCell*> on;
    for (const auto& d : devs) on.push_back(find_cell(d, c));
    if (std::find(on.begin(), on.end(), nullptr) != on.end()) continue;
    if (!chart_cell) chart_cell = &c;
    // Layers by (layer, pass) on each device.
    std::vector<std::map<std::string, StoredLayer>> by;
    for (size_t i = 0; i < devs.size(); ++i) {
      by.emplace_back();
      for (const auto& l : stored_layers(db, devs[i].d, *on[i])) by.back()[l.layer + " " + l.pass] = l;
    }
    const model::Ceiling* compute0 = pick_ceiling(ref.roof, model::compute_ceiling_id(ref.d.kind, c.precision));
    const model::Ceiling* dram0 = ref.roof.memory("dram");
    if (!compute0 || !dram0) continue;
    struct Sum {
      int n = 0;
      std::vector<double> t;
      std::vector<double> roof_t;   // the reference's time scaled by the roof ratio
      std::vector<double> model_t;  // the time model's (layer_time_model)
    };
    std::map<std::string, Sum> sums;
    for (const auto& [key, l0] : by[0]) {
      if (!(l0.seconds > 0)) continue;
      std::vector<double> t = {l0.seconds};
      for (size_t i = 1; i < devs.size(); ++i) {
        const auto it = by[i].find(key);
        t.push_back(it == by[i].end() ? 0.0 : it->second.seconds);
      }
      std::string cls = "no FLOPs (optimizer, dropout)";
      std::vector<double> scale(devs.size(), 1.0), modelled(devs.size(), l0.seconds);
      if (l0.flops > 0 && l0.bytes > 0) {
        const model::Placement p = model::place(l0.flops, l0.bytes, l0.seconds, *compute0, *dram0);
        const bool memory = p.bound == model::Bound::Memory;
        cls = memory ? "under the DRAM slope" : "under the compute roof";
        for (size_t i = 1; i < devs.size(); ++i) {
          const model::Ceiling* ci = memory ? devs[i].roof.memory("dram")
                                            : pick_ceiling(devs[i].roof, model::compute_ceiling_id(devs[i].d.kind, c.precision));
          scale[i] = ci && ci->value > 0 ? (memory ? dram0->value : compute0->value) / ci->value : 0;
          const model::Ceiling* dram_i = devs[i].roof.memory("dram");
          const model::Ceiling* compute_i =
              pick_ceiling(devs[i].roof, model::compute_ceiling_id(devs[i].d.kind, c.precision));
          modelled[i] = dram_i && compute_i ? layer_time_model(l0, compute0->value, dram0->value, compute_i->value,
                                                               dram_i->value)
                                            : 0;
        }
        if (t.size() > 1 && t[1] > 0 && modelled[1] > 0) {
          const double measured = l0.seconds / t[1];
          ++model_layers;
          const double model_err = std::fabs(l0.seconds / modelled[1] / measured - 1);
          const double roof_err = scale[1] > 0 ? std::fabs(1 / scale[1] / measured - 1) : INFINITY;
          model_within += model_err <= kModelTolerance, model_loose += model_err <= kModelLooseTolerance;
          roof_within += roof_err <= kModelTolerance, roof_loose += roof_err <= kModelLooseTolerance;
        }
      }
      for (const std::string& k : {std::string("all"), cls}) {
        Sum& s = sums[k];
        if (s.t.empty())
          s.t.assign(devs.size(), 0.0), s.roof_t.assign(devs.size(), 0.0), s.model_t.assign(devs.size(), 0.0);
        ++s.n;
        for (size_t i = 0; i < devs.size(); ++i) {
          s.t[i] += t[i];
          s.roof_t[i] += l0.seconds * scale[i];
          s.model_t[i] += modelled[i];
        }
      }
      LayerDiff ld{c.label(), key, cls, t, scale.size() > 1 && scale[1] > 0 ? 1 / scale[1] : 0,
                   modelled.size() > 1 && modelled[1] > 0 ? l0.seconds / modelled[1] : 0};
      diffs.push_back(std::move(ld));
    }
    for (const std::string k : {"all", "under the DRAM slope", "under the compute roof", "no FLOPs (optimizer, dropout)"}) {
      const auto it = sums.find(k);
      if (it == sums.end()) continue;
      const Sum& s = it->second;
      std::vector<Cell> row = {k == "all" ? Cell(c.label()) : Cell(""), k == "all" ? "every layer" : k,
                               std::int64_t(s.n)};
      for (double v : s.t) row.push_back(v * 1e3);
      for (size_t i = 1; i < devs.size(); ++i) {
        row.push_back(ratio(s.t[0], s.t[i]));
        row.push_back(k.rfind("no FLOPs", 0) == 0 ? Cell() : ratio(s.roof_t[0], s.roof_t[i]));
        row.push_back(k.rfind("no FLOPs", 0) == 0 ? Cell() : ratio(s.model_t[0], s.model_t[i]));
      }
      cells.row(row);
    }
  }
  cells.note("speedup: the first device's time over each other's; roof says: what the ratio of the roofs the "
             "layers sit under predicts (DRAM bandwidth for those under the slope, the precision's compute peak "
             "for those under the roof; their place on the first device, measured ceilings first)");
  cells.note("model says: each layer's time on the first device split into the part its DRAM traffic or its "
             "FLOPs take at that device's roof (whichever is longer: bytes over DRAM bandwidth, FLOPs over the "
             "precision's peak; the counted DRAM bytes and FLOPs where bench --counters measured them, else the "
             "paper's) and the rest (latency, L2, launches), which stays; only the first part scales with the "
             "other device's roof");
  if (model_layers > 0)
    cells.note(fmt::format("{} against {}, {} layers with FLOPs: the time model is within {:.0f}% of the measured "
                           "speedup for {} ({:.0f}%) and within {:.0f}% for {} ({:.0f}%); the roofs' ratio alone for "
                           "{} and {}",
                           short_name(devs[1].d.name), short_name(ref.d.name), model_layers, 100 * kModelTolerance,
                           model_within, 100.0 * model_within / model_layers, 100 * kModelLooseTolerance, model_loose,
                           100.0 * model_loose / model_layers, roof_within, roof_loose));
  cells.note("GPU time: the kernels in each layer's NVTX range per step (bench --profile); the engine's paper "
             "FLOPs and bytes place the layers");
  if (cells.rows().empty())
    out.notes.push_back("no profiled network cell ran on every device" +
                        std::string(o.model.empty() && o.precision.empty() ? "" : " with these filters") +
                        ": run `roofline bench alexnet,resnet18 --device gpu --profile` on each, into one store");
  out.tables.push_back(std::move(cells));

  // The layers whose time differs most (first two devices).
  Table lt("compare.layers", fmt::format("Layers whose time differs most, {} against {}", short_name(devs[1].d.name),
                                         short_name(ref.d.name)));
  lt.col("cell", "Cell").col("layer", "Layer and pass").col("class", "On the roofline");
  lt.col("a", short_name(ref.d.name), "ms", 3).col("b", short_name(devs[1].d.name), "ms", 3);
  lt.col("x", "speedup", "×", 2).col("roof", "roof says", "×", 2).col("model", "model says", "×", 2);
  std::stable_sort(diffs.begin(), diffs.end(), [](const LayerDiff& a, const LayerDiff& b) {
    return std::fabs(a.t[0] - a.t[1]) > std::fabs(b.t[0] - b.t[1]);
  });
  for (size_t i = 0; i < diffs.size() && i < o.top_layers; ++i) {
    const auto& d = diffs[i];
    lt.row({d.cell, d.name, d.cls, d.t[0] * 1e3, d.t[1] * 1e3, ratio(d.t[0], d.t[1]),
            d.expected > 0 ? Cell(d.expected) : Cell(), d.modelled > 0 ? Cell(d.modelled) : Cell()});
  }
  if (!diffs.empty()) out.tables.push_back(std::move(lt));

  // One chart: every device's roofline and the first shared cell's layers on each.
  Chart& ch = out.chart;
  ch.title = "Roofline: " + [&] {
    std::vector<std::string> n;
    for (const auto& d : devs) n.push_back(d.d.name);
    return join(n, " vs ");
  }();
  std::vector<std::string> precisions;
  if (chart_cell) precisions.push_back(chart_cell->precision);
  for (const auto& d : devs) {
    ch.roofs.push_back({d.d.name, d.roof});
    for (const auto& id : default_ceilings(d.roof, d.d.kind, precisions))
      if (std::find(ch.shown_ceilings.begin(), ch.shown_ceilings.end(), id) == ch.shown_ceilings.end())
        ch.shown_ceilings.push_back(id);
  }
  if (chart_cell) {
    out.chart_cell = chart_cell->label();
    for (const auto& d : devs) {
      const StoredCell* c = find_cell(d, *chart_cell);
      ChartSeries s;
      s.name = fmt::format("{}: {}", short_name(d.d.name), chart_cell->label());
      s.color_key = d.d.name;
      for (const auto& l : stored_layers(db, d.d, *c)) {
        if (!(l.flops > 0 && l.bytes > 0 && l.seconds > 0)) continue;
        ChartPoint p;
        p.name = fmt::format("{} {} ({})", l.layer, l.pass, l.op);
        p.ai = l.flops / l.bytes;
        p.flops = l.flops / l.seconds;
        p.bandwidth = l.bytes / l.seconds;
        p.seconds = l.seconds;
        s.points.push_back(std::move(p));
      }
      ch.series.push_back(std::move(s));
    }
    ch.subtitle = fmt::format("{} on each device: every layer pass at its paper AI and FLOPs over its GPU time, sized "
                              "by that time; each device's ceilings in its colour",
                              chart_cell->label());
  }
  return out;
}


namespace {

struct RunCell {
  StoredCell cell;
  StoredDevice device;
};

// The profiled cells a run stored (layers with a precision), each with its device.
std::vector<RunCell> run_cells(store::Db& db, std::int64_t run) {
  auto st = db.prepare(
      "SELECT DISTINCT l.model, l.precision, l.mode, l.batch, d.kind, d.name FROM layers l JOIN devices d ON d.id = "
      "l.device_id WHERE l.run_id = ? AND l.precision IS NOT NULL ORDER BY l.model, l.precision, l.mode DESC, l.batch");
  st.bind(1, run);
  std::vector<RunCell> out;
  while (st.step()) {
    RunCell c;
    c.cell = {st.text(0), st.text(1), st.text(2), st.i64(3), run};
    c.device.kind = st.text(4);
    c.device.name = st.text(5);
    out.push_back(std::move(c));
  }
  return out;
}

std::string cell_list(const std::vector<RunCell>& cells) {
  if (cells.empty()) return "no profiled network cell (bench alexnet,resnet18 --device gpu --profile stores them)";
  std::vector<std::string> n;
  for (const auto& c : cells) n.push_back(c.cell.label() + " on " + c.device.name);
  return join(n, ", ");
}

}  // namespace

Comparison compare_runs(store::Db& db, std::int64_t run_a, std::int64_t run_b, const CompareOptions& o) {
  for (std::int64_t r : {run_a, run_b})
    if (!store::find_run(db, r))
      throw Error(ErrorKind::Usage, fmt::format("{} has no run {}", db.path(), r), "roofline runs lists the stored runs");
  if (run_a == run_b) throw Error(ErrorKind::Usage, "--runs names one run twice", "name two runs: --runs 12,15");
  const std::vector<RunCell> a = run_cells(db, run_a), b = run_cells(db, run_b);
  Comparison out;
  Table cells("compare.runs", fmt::format("Run {} against run {}: GPU time per step of each shared cell's layers",
                                          run_b, run_a));
  cells.col("cell", "Cell").col("device", "Device").col("n", "layers");
  cells.col("a", fmt::format("run {}", run_a), "ms", 3).col("b", fmt::format("run {}", run_b), "ms", 3);
  cells.col("x", "speedup", "×", 2);
  cells.col("dram_a", fmt::format("DRAM, run {}", run_a), "MB", 0).col("dram_b", fmt::format("DRAM, run {}", run_b), "MB", 0);
  struct Diff {
    std::string cell, layer;
    double ta = 0, tb = 0;
    std::optional<double> da, db;
  };
  std::vector<Diff> diffs;
  for (const RunCell& ca : a) {
    if (!wanted(ca.cell, o)) continue;
    const auto it = std::find_if(b.begin(), b.end(), [&](const RunCell& cb) {
      return cb.cell.model == ca.cell.model && cb.cell.precision == ca.cell.precision && cb.cell.mode == ca.cell.mode &&
             cb.cell.batch == ca.cell.batch && cb.device.name == ca.device.name;
    });
    if (it == b.end()) continue;
    std::map<std::string, StoredLayer> lb;
    for (const auto& l : stored_layers(db, it->device, it->cell)) lb[l.layer + " " + l.pass] = l;
    double ta = 0, tb = 0, da = 0, dbytes = 0;
    bool counted = true;
    int n = 0;
    for (const auto& l : stored_layers(db, ca.device, ca.cell)) {
      const auto m = lb.find(l.layer + " " + l.pass);
      if (m == lb.end() || !(l.seconds > 0 || m->second.seconds > 0)) continue;  // not timed in either run
      ++n;
      ta += l.seconds, tb += m->second.seconds;
      counted = counted && l.counted_dram_bytes && m->second.counted_dram_bytes;
      if (counted) da += *l.counted_dram_bytes, dbytes += *m->second.counted_dram_bytes;
      diffs.push_back({ca.cell.label(), l.layer + " " + l.pass, l.seconds, m->second.seconds, l.counted_dram_bytes,
                       m->second.counted_dram_bytes});
    }
    cells.row({ca.cell.label(), ca.device.name, std::int64_t(n), ta * 1e3, tb * 1e3, ratio(ta, tb),
               counted ? Cell(da * 1e-6) : Cell(), counted ? Cell(dbytes * 1e-6) : Cell()});
  }
  if (cells.rows().empty())
    throw Error(ErrorKind::Usage,
                fmt::format("runs {} and {} share no profiled cell{}: run {} has {}; run {} has {}", run_a, run_b,
                            o.model.empty() && o.precision.empty() && o.mode.empty() && o.batch == 0 ? ""
                                                                                                      : " with these filters",
                            run_a, cell_list(a), run_b, cell_list(b)),
                "compare two bench --profile runs of the same model, precision, mode and batch on one device");
  cells.note("speedup: run " + std::to_string(run_a) + "'s time over run " + std::to_string(run_b) +
             "'s (above 1: the second is faster); DRAM: counted bytes per step where both runs ran --counters");
  out.tables.push_back(std::move(cells));
  Table lt("compare.runs.layers", fmt::format("Layers whose time changed most, run {} against run {}", run_b, run_a));
  lt.col("cell", "Cell").col("layer", "Layer and pass");
  lt.col("a", fmt::format("run {}", run_a), "ms", 3).col("b", fmt::format("run {}", run_b), "ms", 3);
  lt.col("x", "speedup", "×", 2).col("dram_a", "DRAM a", "MB", 1).col("dram_b", "DRAM b", "MB", 1);
  std::stable_sort(diffs.begin(), diffs.end(),
                   [](const Diff& x, const Diff& y) { return std::fabs(x.ta - x.tb) > std::fabs(y.ta - y.tb); });
  for (size_t i = 0; i < diffs.size() && i < o.top_layers; ++i) {
    const Diff& d = diffs[i];
    lt.row({d.cell, d.layer, d.ta * 1e3, d.tb * 1e3, ratio(d.ta, d.tb), d.da ? Cell(*d.da * 1e-6) : Cell(),
            d.db ? Cell(*d.db * 1e-6) : Cell()});
  }
  out.tables.push_back(std::move(lt));
  return out;
}

}  // namespace roofline::report
