#include "roofline/measure/figure.hpp"

#include "roofline/store/results.hpp"
#include "roofline/core/json_text.hpp"

namespace roofline::measure {

std::optional<model::Ceiling> Figure::ceiling() const {
  model::Ceiling c;
  c.id = name;
  c.label = label;
  c.value = value;
  c.source = model::Source::Measured;
  c.note = method;
  if (unit == "B/s") {
    c.kind = model::CeilingKind::Memory;
    c.unit = level;
  } else if (unit == "FLOP/s" || unit == "OP/s") {
    c.kind = model::CeilingKind::Compute;
    c.precision = precision;
    c.unit = level;
  } else {
    return std::nullopt;
  }
  return c;
}

std::int64_t store_figure(store::Db& db, std::int64_t run_id, std::optional<std::int64_t> device_id,
                          const std::string& category, const Figure& f) {
  store::MeasurementRecord r;
  r.run_id = run_id;
  r.device_id = device_id;
  r.category = category;
  r.name = f.name;
  r.precision = f.precision;
  r.unit = f.unit;
  r.value = f.value;
  if (!f.measurement.samples.empty()) r.time = f.measurement.time;
  if (f.measurement.clock_median_mhz > 0) r.clock_mhz = f.measurement.clock_median_mhz;
  r.throttled = f.measurement.throttled_count;
  nlohmann::json p = f.params;
  p["label"] = f.label;
  p["level"] = f.level;
  p["method"] = f.method;
  if (f.reference) {
    p["reference"] = *f.reference;
    p["reference_label"] = f.reference_label;
  }
  if (!f.notes.empty()) p["notes"] = f.notes;
  if (!f.measurement.samples.empty()) p["measurement"] = f.measurement.to_json();
  r.params_json = json_text(p);
  return store::add_measurement(db, r);
}

model::Roofline load_measured_roofline(store::Db& db, const std::string& device_name) {
  model::Roofline roof(device_name);
  // The newest row of each ceiling name for this device.
  auto st = db.prepare(
      "SELECT m.name, m.unit, m.value, m.precision, m.params FROM measurements m "
      "JOIN devices d ON d.id = m.device_id "
      "WHERE d.name = ? AND m.category = 'ceiling' AND m.id IN "
      "(SELECT MAX(m2.id) FROM measurements m2 JOIN devices d2 ON d2.id = m2.device_id "
      " WHERE d2.name = ? AND m2.category = 'ceiling' GROUP BY m2.name)");
  st.bind(1, device_name).bind(2, device_name);
  while (st.step()) {
    Figure f;
    f.name = st.text(0);
    f.unit = st.text(1);
    f.value = st.f64(2);
    f.precision = st.text(3);
    auto params = nlohmann::json::parse(st.text(4), nullptr, false);
    if (params.is_object()) {
      f.label = params.value("label", f.name);
      f.level = params.value("level", "");
      f.method = params.value("method", "");
    }
    if (auto c = f.ceiling()) roof.add(*c);
  }
  return roof;
}

}  // namespace roofline::measure
