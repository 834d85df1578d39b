// Chrome-trace/Perfetto JSON from the per-process event files that
// TraceWriter leaves (see trace_writer.hpp for their line format).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace roofline::prof {

// Converts the per-process line files into one Chrome-trace JSON (traceEvents
// with "X" events: kernels and copies on one track per GPU stream, API calls
// and NVTX ranges on one track per CPU thread). Times become microseconds
// from the earliest process start. At most `limit` events are written.
// Returns the number of events; lines that do not parse are counted in
// `bad_lines`. A path ending in ".gz" is written gzip-compressed (Perfetto and
// chrome://tracing open it as it is; a JSON trace shrinks about tenfold).
struct ChromeTraceResult {
  std::uint64_t events = 0, bad_lines = 0;
  bool truncated = false;
  bool compressed = false;
  std::uint64_t bytes = 0;  // the file's size on disk
};
// Throws Error(Input) when `out_path` could not be written (its folder is
// missing or not writable, or it is a folder): called before the program is
// started, so a bad path costs nothing.
void check_trace_path(const std::string& out_path);
ChromeTraceResult write_chrome_trace(const std::vector<std::string>& line_files, const std::string& out_path,
                                     std::uint64_t limit, const std::vector<std::string>& device_names);

}  // namespace roofline::prof
