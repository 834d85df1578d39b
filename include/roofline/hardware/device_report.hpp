// The tables of `roofline device`: a device's spec sheet, its theoretical
// peaks (dense and 2:4 sparse apart, each with source and basis), the
// datasheet match, the datasheet database and the number-format table.
#pragma once
#include <string>

#include "roofline/core/report.hpp"
#include "roofline/hardware/cpu_info.hpp"
#include "roofline/hardware/gpu_info.hpp"

namespace roofline::hw {

// Tables "cpu" and "cpu_peaks". `now_mhz`: the clock measured just now (0: not measured).
void add_cpu_sheet(Report& r, const CpuInfo& cpu, double now_mhz);
// Tables "gpu<N>", "gpu<N>_match", "gpu<N>_peaks".
void add_gpu_sheet(Report& r, const GpuInfo& gpu);
// Table "datasheets".
void add_datasheet_list(Report& r);
// Tables "datasheet", "datasheet_peaks", "datasheet_sources" for an entry
// given by id, name or a unique part of either; a usage Error otherwise.
void add_datasheet(Report& r, const std::string& query);
// Table "formats".
void add_formats(Report& r);

}  // namespace roofline::hw
