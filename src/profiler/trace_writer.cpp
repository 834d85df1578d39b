#include "roofline/profiler/trace_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "roofline/profiler/aggregator.hpp"
#include "roofline/core/json_text.hpp"

namespace roofline::prof {

namespace {
constexpr size_t kFlushBytes = 1 << 20;

void write_all(int fd, const std::string& data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // disk full or closed: the trace is best effort, the summary is not affected
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

const char* type_name(const Activity& a) {
  switch (a.type) {
    case Activity::Type::Kernel:
      return "kernel";
    case Activity::Type::Memcpy:
      return "memcpy";
    case Activity::Type::Memset:
      return "memset";
    default:
      return "api";
  }
}
}  // namespace

TraceWriter::~TraceWriter() { close(); }

bool TraceWriter::open(const std::string& path, std::uint64_t limit, int pid, std::uint64_t start_ns,
                       const std::string& command) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return false;
  limit_ = limit;
  written_ = dropped_ = 0;
  buffer_.clear();
  nlohmann::json j = {{"k", "process"}, {"pid", pid}, {"s", start_ns}, {"cmd", command}};
  buffer_ += json_text(j);
  buffer_ += '\n';
  return true;
}

void TraceWriter::line(const std::string& text) {
  if (written_ >= limit_) {
    ++dropped_;
    return;
  }
  ++written_;
  buffer_ += text;
  buffer_ += '\n';
  if (buffer_.size() >= kFlushBytes) {
    write_all(fd_, buffer_);
    buffer_.clear();
  }
}

void TraceWriter::activity(const Activity& a, const std::string& nvtx_path) {
  if (a.type == Activity::Type::UntimedKernel) return;  // no time: nothing to draw
  nlohmann::json j;
  j["k"] = type_name(a);
  j["s"] = a.start;
  j["e"] = a.end;
  j["c"] = a.correlation;
  switch (a.type) {
    case Activity::Type::Kernel:
      j["n"] = a.name ? a.name : "";
      j["d"] = a.device;
      j["q"] = a.stream;
      j["g"] = {a.grid[0], a.grid[1], a.grid[2]};
      j["b"] = {a.block[0], a.block[1], a.block[2]};
      j["r"] = a.registers;
      if (!nvtx_path.empty()) j["p"] = nvtx_path;
      break;
    case Activity::Type::Memcpy:
    case Activity::Type::Memset:
      j["n"] = a.type == Activity::Type::Memset ? "memset" : (a.copy_kind ? a.copy_kind : "");
      j["d"] = a.device;
      j["q"] = a.stream;
      j["y"] = a.bytes;
      break;
    default:
      j["n"] = a.name ? a.name : "";
      j["t"] = a.thread;
      break;
  }
  std::string text = json_text(j);
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ >= 0) line(text);
}

void TraceWriter::nvtx(const std::string& path, std::uint64_t start, std::uint64_t end, std::uint64_t thread) {
  nlohmann::json j = {{"k", "nvtx"}, {"n", path}, {"s", start}, {"e", end}, {"t", thread}};
  std::string text = json_text(j);
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ >= 0) line(text);
}

void TraceWriter::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0 || buffer_.empty()) return;
  write_all(fd_, buffer_);
  buffer_.clear();
}

void TraceWriter::close() {
  flush();
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void TraceWriter::abandon_locked() {
  buffer_.clear();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  written_ = dropped_ = 0;
}

}  // namespace roofline::prof
