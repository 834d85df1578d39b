// Two or more devices side by side from the store (`roofline compare`): their
// ceilings, and for each profiled network cell that ran on all of them the
// time per layer on each and where the difference comes from — layers under
// the DRAM slope on the first device should scale with the DRAM bandwidths,
// those under the compute roof with the compute peaks — plus one chart with
// every device's roofline and the same cell's layers on each (seed 001's
// figure).
#pragma once
#include <string>
#include <vector>

#include "roofline/core/report.hpp"
#include "roofline/report/chart.hpp"
#include "roofline/report/store_chart.hpp"
#include "roofline/store/db.hpp"

namespace roofline::report {

struct CompareOptions {
  std::string model, precision, mode;  // empty: every cell the devices share
  std::int64_t batch = 0;               // 0: any
  size_t top_layers = 12;               // rows of the per-layer table
};

struct Comparison {
  std::vector<Table> tables;  // compare.ceilings, compare.cells, compare.layers
  Chart chart;                // empty series when no cell is shared
  std::string chart_cell;     // the cell drawn on the chart
  std::vector<std::string> notes;
};

// The time model of `compare` ("model says"): a layer's predicted time on
// another device. The part of its measured time that its DRAM traffic or its
// FLOPs take at the first device's roof (the longer of bytes/dram0 and
// flops/compute0, at most the whole time; counted bytes and FLOPs where
// bench --counters stored them, else the paper's) scales with the roofs'
// ratio; the rest (latency, L2 traffic, launches) stays as it was.
double layer_time_model(const StoredLayer& l, double compute0, double dram0, double compute1, double dram1);

// `devices`: two or more, the first the reference (ratios are theirs over it).
Comparison compare_devices(store::Db& db, const std::vector<StoredDevice>& devices, const CompareOptions& o);

// Two runs of one workload (`roofline compare --runs A,B`): before and after a
// change, or two settings. For every profiled network cell both runs stored
// (same model, precision, mode and batch), the GPU time per step of its layers
// in each, and the layers whose time changed most, with their counted DRAM
// bytes where both runs counted them. Throws Error(Usage) naming a missing
// run, and each run's cells when they share none.
Comparison compare_runs(store::Db& db, std::int64_t run_a, std::int64_t run_b, const CompareOptions& o);

// The stored devices whose name contains `what` (case-insensitive), or whose
// kind is `what` ("cpu", "gpu"); throws Error(Usage) naming the stored ones
// when none or several match.
StoredDevice find_stored_device(store::Db& db, const std::string& what);

}  // namespace roofline::report
