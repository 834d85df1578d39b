// Charts from the results store: a device's newest measured ceilings, its
// theoretical ones (hw::reference_roofline), its newest sweep points, and the
// layers and whole steps of its newest profiled network cells (bench
// --profile: one series per cell and pass, points sized by GPU time) and the
// kernels of its newest profile with counters (roofline profile --counters). The
// ceilings that matter for those points are drawn, the others hidden behind
// the legend's toggle (Chart::shown_ceilings).
#pragma once
#include <cstdint>
#include <optional>
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

// Devices with ceilings, sweep points, profiled layers or (GPUs) a profile
// with hardware counters in the store, most
// recently recorded first; `kind` "cpu" or "gpu" filters, empty keeps all.
std::vector<StoredDevice> stored_devices(store::Db& db, const std::string& kind = {});

// A device's ceilings: the newest measured ones and the theoretical ones
// (hw::reference_roofline from its stored sheet); counts of each when asked.
model::Roofline device_roofline(store::Db& db, const StoredDevice& device, int* measured = nullptr,
                                int* theoretical = nullptr);
// The ceiling of `id`: the measured one, else the theoretical one; null if neither.
const model::Ceiling* pick_ceiling(const model::Roofline& roof, const std::string& id);
// The ceilings a chart of this device draws by default for workloads of these
// precisions: DRAM and L2 (their measured read stream, else their fastest figure), fp32 (CUDA cores or CPU
// vector), and each precision's roof (model::compute_ceiling_id).
std::vector<std::string> default_ceilings(const model::Roofline& roof, const std::string& kind,
                                          const std::vector<std::string>& precisions);

// A profiled network cell on a device (bench --profile), its newest run.
struct StoredCell {
  std::string model, precision, mode;
  std::int64_t batch = 0, run = 0;
  std::string label() const;  // "resnet18 bf16 b128 train"
};
struct StoredLayer {
  std::string layer, op, pass;
  double flops = 0, bytes = 0, seconds = 0;  // paper costs; GPU time per step
  std::optional<double> counted_flops, counted_dram_bytes;  // bench --counters (store v7), where counted
};
std::vector<StoredCell> stored_cells(store::Db& db, const StoredDevice& device);
std::vector<StoredLayer> stored_layers(store::Db& db, const StoredDevice& device, const StoredCell& cell);

struct DeviceChart {
  Chart chart;
  int measured_ceilings = 0, theoretical_ceilings = 0;
};
DeviceChart device_chart(store::Db& db, const StoredDevice& device);

// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3".
std::string device_slug(const std::string& name);

}  // namespace roofline::report
