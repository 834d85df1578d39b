// Per-event records for `roofline profile --trace`, written by the profiled
// process as it goes (one JSON object per line), bounded by a limit, so that a
// long run never holds its trace in memory and a killed one leaves what was
// written up to its last flush. write_chrome_trace() (chrome_trace.hpp) turns
// the files of all processes into one Chrome-trace/Perfetto JSON.
//
// Line format (all times in ns, CUPTI's clock):
//   {"k":"process","pid":P,"s":T,"cmd":"..."}          first line of a file
//   {"k":"kernel","n":NAME,"s":S,"e":E,"d":DEV,"q":STREAM,"c":CORR,"g":[x,y,z],"b":[x,y,z],"r":REGS,"p":"nvtx/path"}
//   {"k":"memcpy"|"memset","n":KIND,"s":S,"e":E,"d":DEV,"q":STREAM,"c":CORR,"y":BYTES}
//   {"k":"api","n":NAME,"s":S,"e":E,"t":TID,"c":CORR}
//   {"k":"nvtx","n":PATH,"s":S,"e":E,"t":TID}
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace roofline::prof {

struct Activity;

class TraceWriter {
 public:
  TraceWriter() = default;
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Creates (truncates) `path`; false when it cannot be opened.
  bool open(const std::string& path, std::uint64_t limit, int pid, std::uint64_t start_ns, const std::string& command);
  bool is_open() const { return fd_ >= 0; }

  void activity(const Activity& a, const std::string& nvtx_path);
  void nvtx(const std::string& path, std::uint64_t start, std::uint64_t end, std::uint64_t thread);
  // Writes what is buffered to the file.
  void flush();
  void close();

  std::uint64_t written() const { return written_; }
  bool limit_hit() const { return dropped_ > 0; }
  std::uint64_t dropped() const { return dropped_; }

  // fork(): the child must neither write the parent's buffered lines nor
  // share its file; it drops both and opens its own file.
  void lock_for_fork() { mu_.lock(); }
  void unlock_after_fork() { mu_.unlock(); }
  void abandon_locked();

 private:
  void line(const std::string& text);  // with the lock held
  std::mutex mu_;
  int fd_ = -1;
  std::string buffer_;
  std::uint64_t limit_ = 0, written_ = 0, dropped_ = 0;
};

}  // namespace roofline::prof
