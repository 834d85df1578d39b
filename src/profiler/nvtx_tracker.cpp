#include "roofline/profiler/nvtx_tracker.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "roofline/profiler/capture_gate.hpp"

namespace roofline::prof {

namespace {

std::atomic<std::uint64_t> g_instances{1};

struct ThreadStack {
  std::uint64_t owner = 0;                                      // the tracker instance the frames belong to
  std::vector<std::pair<std::uint32_t, std::uint64_t>> frames;  // path id, start
};
thread_local ThreadStack t_stack;

ThreadStack& stack_for(std::uint64_t instance) {
  if (t_stack.owner != instance) {
    t_stack.owner = instance;
    t_stack.frames.clear();
  }
  return t_stack;
}

std::uint64_t thread_id() { return static_cast<std::uint64_t>(syscall(SYS_gettid)); }

}  // namespace

NvtxTracker::NvtxTracker(size_t ring_size)
    : instance_(g_instances.fetch_add(1)), ring_size_(std::max<size_t>(ring_size, 16)) {
  paths_.push_back({0, "", ""});
  path_ids_.emplace("", 0);
}

NvtxTracker::~NvtxTracker() = default;

void NvtxTracker::ensure_ring() {
  if (ring_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (ring_storage_) return;
  // Zero-initialised: correlation ids start at 1, so an empty slot never matches.
  ring_storage_.reset(new std::atomic<std::uint64_t>[ring_size_]());
  ring_.store(ring_storage_.get(), std::memory_order_release);
}

std::uint32_t NvtxTracker::child_path(std::uint32_t parent, std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string full = parent == 0 ? std::string(name) : paths_[parent].name + "/" + std::string(name);
  auto it = path_ids_.find(full);
  if (it != path_ids_.end()) return it->second;
  auto id = static_cast<std::uint32_t>(paths_.size());
  paths_.push_back({parent, full, std::string(name)});
  path_ids_.emplace(std::move(full), id);
  return id;
}

void NvtxTracker::push(std::string_view name, std::uint64_t now_ns) {
  ensure_ring();
  ThreadStack& s = stack_for(instance_);
  std::uint32_t parent = s.frames.empty() ? 0 : s.frames.back().first;
  s.frames.emplace_back(child_path(parent, name.empty() ? std::string_view("(unnamed)") : name), now_ns);
}

void NvtxTracker::pop(std::uint64_t now_ns) {
  ThreadStack& s = stack_for(instance_);
  if (s.frames.empty()) {
    // A pop without a push we saw: the range opened before tracing began.
    unmatched_pops_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  auto [path, start] = s.frames.back();
  s.frames.pop_back();
  close(path, start, now_ns);
}

void NvtxTracker::start_range(std::uint64_t id, std::string_view name, std::uint64_t now_ns) {
  std::uint32_t path = child_path(0, name.empty() ? std::string_view("(unnamed)") : name);
  std::lock_guard<std::mutex> lock(mu_);
  started_[id] = {path, now_ns};
}

void NvtxTracker::end_range(std::uint64_t id, std::uint64_t now_ns) {
  std::pair<std::uint32_t, std::uint64_t> r;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = started_.find(id);
    if (it == started_.end()) {
      unmatched_pops_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    r = it->second;
    started_.erase(it);
  }
  close(r.first, r.second, now_ns);
}

void NvtxTracker::close(std::uint32_t path, std::uint64_t start, std::uint64_t end) {
  Sink sink;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (gate_ && !gate_->captures(start)) return;
    closed_[path].add(static_cast<double>(end > start ? end - start : 0));
    sink = sink_;
  }
  if (sink) sink(path, start, end, thread_id());
}

std::uint32_t NvtxTracker::current_path() const {
  if (t_stack.owner != instance_ || t_stack.frames.empty()) return 0;
  return t_stack.frames.back().first;
}

std::string NvtxTracker::current_name() const {
  const std::uint32_t id = current_path();
  if (id == 0) return {};
  std::lock_guard<std::mutex> lock(mu_);
  return id < paths_.size() ? paths_[id].leaf : std::string();
}

void NvtxTracker::set_gate(const CaptureGate* gate) {
  std::lock_guard<std::mutex> lock(mu_);
  gate_ = gate;
}

void NvtxTracker::note_launch(std::uint32_t correlation) {
  std::atomic<std::uint64_t>* ring = ring_.load(std::memory_order_acquire);
  if (!ring) return;
  std::uint32_t path = current_path();
  if (path == 0) return;  // an empty slot (or a stale one) reads as "no range"
  ring[correlation % ring_size_].store((std::uint64_t{correlation} << 32) | path, std::memory_order_relaxed);
}

std::uint32_t NvtxTracker::path_of_launch(std::uint32_t correlation) const {
  std::atomic<std::uint64_t>* ring = ring_.load(std::memory_order_acquire);
  if (!ring) return 0;
  std::uint64_t v = ring[correlation % ring_size_].load(std::memory_order_relaxed);
  if ((v >> 32) != correlation) return 0;
  return static_cast<std::uint32_t>(v & 0xffffffffu);
}

std::string NvtxTracker::path_name(std::uint32_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return id < paths_.size() ? paths_[id].name : std::string();
}

std::vector<std::uint32_t> NvtxTracker::lineage(std::uint32_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::uint32_t> out;
  while (id != 0 && id < paths_.size()) {
    out.push_back(id);
    id = paths_[id].parent;
  }
  return out;
}

void NvtxTracker::snapshot(std::map<std::string, NvtxRangeSummary>& out) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, stats] : closed_) {
    NvtxRangeSummary& r = out[paths_[id].name];
    r.path = paths_[id].name;
    r.cpu_ns = stats;
  }
}

void NvtxTracker::set_sink(Sink sink) {
  std::lock_guard<std::mutex> lock(mu_);
  sink_ = std::move(sink);
}

void NvtxTracker::reset_locked() {
  // Called with the lock held (between lock_for_fork and unlock_after_fork).
  closed_.clear();
  started_.clear();
  unmatched_pops_.store(0);
  // The forking thread's open ranges stay open in the child (its stack is
  // thread-local and is kept); paths stay interned so ids remain valid.
}

std::string nvtx_narrow(const wchar_t* w) {
  std::string s;
  if (!w) return s;
  for (; *w; ++w) s += (*w >= 32 && *w < 127) ? static_cast<char>(*w) : '?';
  return s;
}

}  // namespace roofline::prof
