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

// `devices`: two or more, the first the reference (ratios are theirs over it).
Comparison compare_devices(store::Db& db, const std::vector<StoredDevice>& devices, const CompareOptions& o);

// The stored devices whose name contains `what` (case-insensitive), or whose
// kind is `what` ("cpu", "gpu"); throws Error(Usage) naming the stored ones
// when none or several match.
StoredDevice find_stored_device(store::Db& db, const std::string& what);

}  // namespace roofline::report
