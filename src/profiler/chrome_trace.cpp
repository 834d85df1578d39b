#include "roofline/profiler/chrome_trace.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "roofline/core/error.hpp"
#include "roofline/core/json_text.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/profiler/short_names.hpp"

namespace roofline::prof {

namespace {

// GPU tracks get their own "process" ids, far above real pids.
constexpr std::int64_t kGpuPidBase = 1'000'000'000;

std::string us(std::uint64_t t_ns, std::uint64_t base_ns) {
  std::uint64_t d = t_ns > base_ns ? t_ns - base_ns : 0;
  return fmt::format("{}.{:03}", d / 1000, d % 1000);
}

}  // namespace

namespace {
[[noreturn]] void cannot_write(const std::string& out_path) {
  throw Error(ErrorKind::Input, fmt::format("cannot write the trace file '{}'", out_path),
              "check that its folder exists and is writable");
}
}  // namespace

namespace {
// The trace's bytes, plain or gzip-compressed (zlib, as the IDX reader uses).
class TraceFile {
 public:
  TraceFile(const std::string& path, bool gzip) : path_(path) {
    if (gzip) {
      gz_ = gzopen(path.c_str(), "wb6");
      if (!gz_) cannot_write(path);
    } else {
      f_ = std::fopen(path.c_str(), "wb");
      if (!f_) cannot_write(path);
    }
  }
  ~TraceFile() {
    if (gz_) gzclose(gz_);
    if (f_) std::fclose(f_);
  }
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
  bool compressed() const { return gz_ != nullptr; }
  TraceFile& operator<<(std::string_view s) {
    if (s.empty()) return *this;
    const bool ok = gz_ ? gzwrite(gz_, s.data(), static_cast<unsigned>(s.size())) == static_cast<int>(s.size())
                        : std::fwrite(s.data(), 1, s.size(), f_) == s.size();
    if (!ok) failed();
    return *this;
  }
  void close() {
    const bool ok = gz_ ? gzclose(gz_) == Z_OK : std::fclose(f_) == 0;
    gz_ = nullptr;
    f_ = nullptr;
    if (!ok) failed();
  }

 private:
  [[noreturn]] void failed() const {
    throw Error(ErrorKind::Input, fmt::format("writing the trace file '{}' failed", path_), "check the free disk space");
  }
  std::string path_;
  gzFile gz_ = nullptr;
  std::FILE* f_ = nullptr;
};
}  // namespace

void check_trace_path(const std::string& out_path) {
  namespace fs = std::filesystem;
  const fs::path p = fs::absolute(out_path);
  std::error_code ec;
  if (out_path.empty() || fs::is_directory(p, ec) || !fs::is_directory(p.parent_path(), ec) ||
      ::access(p.parent_path().c_str(), W_OK) != 0 || (fs::exists(p, ec) && ::access(p.c_str(), W_OK) != 0))
    cannot_write(out_path);
}

ChromeTraceResult write_chrome_trace(const std::vector<std::string>& line_files, const std::string& out_path,
                                     std::uint64_t limit, const std::vector<std::string>& device_names) {
  ChromeTraceResult r;
  // The earliest process start is time zero (first line of each file).
  std::uint64_t base = 0;
  for (const auto& f : line_files) {
    std::ifstream in(f);
    std::string first;
    if (!std::getline(in, first)) continue;
    try {
      auto j = nlohmann::json::parse(first);
      if (j.value("k", "") == "process") {
        std::uint64_t s = j.value("s", std::uint64_t{0});
        if (s && (base == 0 || s < base)) base = s;
      }
    } catch (const nlohmann::json::exception&) {
    }
  }
  TraceFile out(out_path, ends_with(out_path, ".gz"));
  r.compressed = out.compressed();
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first_event = true;
  auto emit = [&](const nlohmann::json& e) {
    if (!first_event) out << ",\n";
    first_event = false;
    out << json_text(e);
  };
  std::set<std::pair<std::int64_t, std::uint64_t>> tracks;  // (pid, tid) seen
  std::set<std::uint32_t> gpus;
  std::map<std::int64_t, std::string> processes;
  for (const auto& f : line_files) {
    std::ifstream in(f);
    std::string text;
    std::int64_t pid = 0;
    while (std::getline(in, text)) {
      if (text.empty()) continue;
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(text);
      } catch (const nlohmann::json::exception&) {
        ++r.bad_lines;  // a line cut by a kill
        continue;
      }
      std::string k = j.value("k", "");
      if (k == "process") {
        pid = j.value("pid", 0);
        processes[pid] = j.value("cmd", "");
        continue;
      }
      if (r.events >= limit) {
        r.truncated = true;
        break;
      }
      std::uint64_t s = j.value("s", std::uint64_t{0}), e = j.value("e", std::uint64_t{0});
      nlohmann::json ev;
      ev["ph"] = "X";
      // Raw strings: the microsecond values keep ns precision without float rounding.
      ev["ts"] = nlohmann::json::parse(us(s, base));
      ev["dur"] = nlohmann::json::parse(us(e, s));
      std::string name = j.value("n", "");
      if (k == "kernel" || k == "memcpy" || k == "memset") {
        std::uint32_t dev = j.value("d", 0u);
        gpus.insert(dev);
        ev["pid"] = kGpuPidBase + dev;
        ev["tid"] = j.value("q", 0u);
        ev["cat"] = k;
        nlohmann::json args = {{"correlation", j.value("c", 0u)}};
        if (k == "kernel") {
          ev["name"] = short_kernel_name(name);
          args["name"] = demangle(name);
          args["grid"] = j.value("g", nlohmann::json::array());
          args["block"] = j.value("b", nlohmann::json::array());
          args["registers"] = j.value("r", 0);
          if (j.contains("p")) args["nvtx"] = j["p"];
        } else {
          ev["name"] = k == "memset" ? "memset" : "memcpy " + name;
          args["bytes"] = j.value("y", std::uint64_t{0});
        }
        ev["args"] = std::move(args);
        tracks.insert({kGpuPidBase + dev, j.value("q", 0u)});
      } else {
        ev["pid"] = pid;
        ev["tid"] = j.value("t", std::uint64_t{0});
        ev["cat"] = k == "nvtx" ? "nvtx" : "cuda_api";
        ev["name"] = k == "nvtx" ? name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1) : name;
        if (k == "nvtx")
          ev["args"] = {{"path", name}};
        else
          ev["args"] = {{"correlation", j.value("c", 0u)}};
      }
      emit(ev);
      ++r.events;
    }
    if (r.truncated) break;
  }
  // Names of the tracks.
  for (const auto& [pid, cmd] : processes)
    emit({{"ph", "M"},
          {"name", "process_name"},
          {"pid", pid},
          {"args", {{"name", fmt::format("{} (pid {})", cmd, pid)}}}});
  for (std::uint32_t d : gpus) {
    std::string name = d < device_names.size() && !device_names[d].empty() ? device_names[d] : "GPU";
    emit({{"ph", "M"},
          {"name", "process_name"},
          {"pid", kGpuPidBase + d},
          {"args", {{"name", fmt::format("GPU {}: {}", d, name)}}}});
  }
  for (const auto& [pid, tid] : tracks)
    emit({{"ph", "M"},
          {"name", "thread_name"},
          {"pid", pid},
          {"tid", tid},
          {"args", {{"name", fmt::format("stream {}", tid)}}}});
  out << "\n]}\n";
  out.close();
  std::error_code ec;
  r.bytes = std::filesystem::file_size(out_path, ec);
  return r;
}

}  // namespace roofline::prof
