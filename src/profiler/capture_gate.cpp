#include "roofline/profiler/capture_gate.hpp"

namespace roofline::prof {

namespace {

constexpr std::string_view kProfilerApi = "cuda-profiler-api";
constexpr std::string_view kNvtxPrefix = "nvtx:";

}  // namespace

// ------------------------------------------------------------ CaptureSpec

std::string CaptureSpec::range_text() const {
  switch (range) {
    case Range::ProfilerApi:
      return std::string(kProfilerApi);
    case Range::Nvtx:
      return std::string(kNvtxPrefix) + nvtx_name;
    case Range::None:
      break;
  }
  return {};
}

std::string CaptureSpec::problem(const std::string& text) {
  if (text == kProfilerApi) return {};
  if (text.rfind(kNvtxPrefix, 0) == 0)
    return text.size() > kNvtxPrefix.size() ? std::string() : "nvtx: needs the range's name, as in nvtx:train_step";
  return "'" + text + "' is not a capture range: give cuda-profiler-api or nvtx:NAME";
}

std::optional<CaptureSpec> CaptureSpec::parse_range(const std::string& text) {
  if (!problem(text).empty()) return std::nullopt;
  CaptureSpec s;
  if (text == kProfilerApi) {
    s.range = Range::ProfilerApi;
  } else {
    s.range = Range::Nvtx;
    s.nvtx_name = text.substr(kNvtxPrefix.size());
  }
  return s;
}

// --------------------------------------------------------- CaptureWindows

size_t CaptureWindows::first_ending_after(std::uint64_t t) const {
  auto it = std::upper_bound(closed_.begin(), closed_.end(), t,
                             [](std::uint64_t v, const Interval& s) { return v < s.end_ns; });
  return static_cast<size_t>(it - closed_.begin());
}

bool CaptureWindows::contains(std::uint64_t t) const {
  // Most records are recent: the open stretch first.
  if (tail_ && t >= tail_->start_ns) return t < tail_->end_ns;
  size_t i = first_ending_after(t);
  return i < closed_.size() && closed_[i].start_ns <= t;
}

std::uint64_t CaptureWindows::end_of(std::uint64_t t) const {
  size_t i = first_ending_after(t);
  if (i >= size()) return t;
  const Interval s = at(i);
  return s.start_ns <= t && t < s.end_ns ? s.end_ns : t;
}

std::uint64_t CaptureWindows::covered_ns(std::uint64_t a, std::uint64_t b) const {
  std::uint64_t n = 0;
  each_part(a, b, [&](std::uint64_t lo, std::uint64_t hi) { n += hi - lo; });
  return n;
}

std::vector<Interval> CaptureWindows::clipped(std::uint64_t from, std::uint64_t now) const {
  std::vector<Interval> out;
  each_part(from, now, [&](std::uint64_t lo, std::uint64_t hi) { out.push_back({lo, hi}); });
  return out;
}

// ------------------------------------------------------------ CaptureGate

void CaptureGate::configure(const CaptureSpec& spec, std::uint64_t origin_ns, Clock clock) {
  std::lock_guard<std::mutex> lock(mu_);
  if (configured_) return;
  configured_ = true;
  spec_ = spec;
  clock_ = clock;
  window_start_ = origin_ns + spec.delay_ns;
  window_end_ = spec.duration_ns > 0 ? window_start_ + spec.duration_ns : CaptureWindows::kOpen;
  // Without an event range, the event side is open for the whole run.
  if (spec.range == CaptureSpec::Range::None) open_since_ = 0;
}

bool CaptureGate::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return configured_ && spec_.active();
}

CaptureSpec CaptureGate::spec() const {
  std::lock_guard<std::mutex> lock(mu_);
  return spec_;
}

void CaptureGate::open_locked(std::uint64_t t) {
  if (open_since_) return;
  open_since_ = t;
  ++opens_;
}

void CaptureGate::close_locked(std::uint64_t t) {
  if (!open_since_) return;
  // The clock never goes back, but a stamp equal to the open one makes an
  // empty range, which is dropped.
  if (t > *open_since_) events_.push_back({*open_since_, t});
  open_since_.reset();
}

std::uint64_t CaptureGate::profiler_start() {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint64_t t = now_locked();
  if (configured_ && spec_.range == CaptureSpec::Range::ProfilerApi) open_locked(t);
  return t;
}

std::uint64_t CaptureGate::profiler_stop() {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint64_t t = now_locked();
  if (configured_ && spec_.range == CaptureSpec::Range::ProfilerApi) close_locked(t);
  return t;
}

std::uint64_t CaptureGate::nvtx_push(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint64_t t = now_locked();
  if (configured_ && spec_.range == CaptureSpec::Range::Nvtx && name == spec_.nvtx_name && nvtx_depth_++ == 0)
    open_locked(t);
  return t;
}

std::uint64_t CaptureGate::nvtx_pop(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint64_t t = now_locked();
  // A pop of a NAME range pushed before the gate started finds depth 0.
  if (configured_ && spec_.range == CaptureSpec::Range::Nvtx && name == spec_.nvtx_name && nvtx_depth_ > 0 &&
      --nvtx_depth_ == 0)
    close_locked(t);
  return t;
}

std::uint64_t CaptureGate::nvtx_start(std::uint64_t id, std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint64_t t = now_locked();
  if (configured_ && spec_.range == CaptureSpec::Range::Nvtx && name == spec_.nvtx_name &&
      nvtx_ids_.insert(id).second && nvtx_depth_++ == 0)
    open_locked(t);
  return t;
}

std::uint64_t CaptureGate::nvtx_end(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint64_t t = now_locked();
  if (nvtx_ids_.erase(id) > 0 && nvtx_depth_ > 0 && --nvtx_depth_ == 0) close_locked(t);
  return t;
}

bool CaptureGate::captures(std::uint64_t t) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!configured_) return true;
  if (t < window_start_ || t >= window_end_) return false;
  if (open_since_ && t >= *open_since_) return true;
  auto it = std::upper_bound(events_.begin(), events_.end(), t,
                             [](std::uint64_t v, const Interval& s) { return v < s.end_ns; });
  return it != events_.end() && it->start_ns <= t;
}

void CaptureGate::sync(CaptureWindows& w) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!configured_) {
    w.tail_ = Interval{0, CaptureWindows::kOpen};  // not started: nothing is left out
    return;
  }
  auto add = [&](std::uint64_t a, std::uint64_t b) {
    a = std::max(a, window_start_);
    b = std::min(b, window_end_);
    if (b <= a) return;
    if (!w.closed_.empty() && w.closed_.back().end_ns >= a)
      w.closed_.back().end_ns = std::max(w.closed_.back().end_ns, b);
    else
      w.closed_.push_back({a, b});
  };
  for (; w.synced_events_ < events_.size(); ++w.synced_events_)
    add(events_[w.synced_events_].start_ns, events_[w.synced_events_].end_ns);
  w.tail_.reset();
  if (open_since_) {
    const std::uint64_t a = std::max(*open_since_, window_start_);
    if (a < window_end_) w.tail_ = Interval{a, window_end_};
  }
}

CaptureWindows CaptureGate::windows() const {
  CaptureWindows w;
  sync(w);
  return w;
}

std::uint64_t CaptureGate::opens() const {
  std::lock_guard<std::mutex> lock(mu_);
  return opens_;
}

}  // namespace roofline::prof
