#include "roofline/report/store_chart.hpp"

#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "roofline/measure/figure.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/hardware/datasheet.hpp"

namespace roofline::report {

std::vector<StoredDevice> stored_devices(store::Db& db, const std::string& kind) {
  auto st = db.prepare(
      "SELECT d.kind, d.name, "
      " (SELECT d2.spec FROM devices d2 WHERE d2.kind = d.kind AND d2.name = d.name ORDER BY d2.id DESC LIMIT 1), "
      " MAX(m.id) AS newest "
      "FROM devices d JOIN measurements m ON m.device_id = d.id "
      "WHERE m.category IN ('ceiling', 'sweep') AND (? = '' OR d.kind = ?) "
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

}  // namespace

DeviceChart device_chart(store::Db& db, const StoredDevice& dev) {
  DeviceChart out;
  Chart& c = out.chart;
  c.title = fmt::format("Roofline: {} ({})", dev.name, dev.kind == "gpu" ? "GPU" : "CPU");
  model::Roofline measured = measure::load_measured_roofline(db, dev.name);
  model::Roofline theoretical =
      dev.kind == "gpu" ? hw::reference_roofline(spec_gpu(dev))
                        : hw::reference_roofline(spec_cpu(dev));
  model::Roofline roof(dev.name);
  for (const auto& ce : measured.ceilings()) roof.add(ce), ++out.measured_ceilings;
  for (const auto& ce : theoretical.ceilings())
    if (ce.source != model::Source::Measured) roof.add(ce), ++out.theoretical_ceilings;
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
  c.roofs.push_back({dev.name, roof});
  c.subtitle = fmt::format("{} measured ceilings (solid), {} theoretical (dashed), {} sweep points",
                           out.measured_ceilings, out.theoretical_ceilings, c.point_count());
  return out;
}

}  // namespace roofline::report
