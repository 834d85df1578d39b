// Charts from the results store: a device's newest measured ceilings, its
// theoretical ones (hw::reference_roofline), its newest sweep points, and the
// layers and whole steps of its newest profiled network cells (bench
// --profile: one series per cell and pass, points sized by GPU time). The
// ceilings that matter for those points are drawn, the others hidden behind
// the legend's toggle (Chart::shown_ceilings).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "roofline/report/chart.hpp"
#include "roofline/store/db.hpp"

namespace roofline::report {

struct StoredDevice {
  std::string kind;  // "cpu" or "gpu"
  std::string name;
  nlohmann::json spec;  // the newest device sheet recorded for it
};

// Devices with ceilings, sweep points or profiled layers in the store, most
// recently recorded first; `kind` "cpu" or "gpu" filters, empty keeps all.
std::vector<StoredDevice> stored_devices(store::Db& db, const std::string& kind = {});

struct DeviceChart {
  Chart chart;
  int measured_ceilings = 0, theoretical_ceilings = 0;
};
DeviceChart device_chart(store::Db& db, const StoredDevice& device);

// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3".
std::string device_slug(const std::string& name);

}  // namespace roofline::report
