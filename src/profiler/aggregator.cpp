#include "roofline/profiler/aggregator.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "roofline/profiler/nvtx_tracker.hpp"

namespace roofline::prof {

Aggregator::Aggregator() : Aggregator(Options{}) {}

Aggregator::Aggregator(Options o)
    : opt_(o),
      kernel_busy_(o.max_open_intervals, false),
      gpu_busy_(o.max_open_intervals, true),
      comm_busy_(o.max_open_intervals, false),
      compute_busy_(o.max_open_intervals, false),
      sequences_(o.sequence_capacity) {
  names_.push_back({"", false, false});  // id 0: no name
}

bool Aggregator::is_nccl_kernel(std::string_view n) {
  // CUPTI gives the mangled name: "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorage...";
  // the identifier starts after "_Z" and its length.
  if (n.size() > 3 && n[0] == '_' && n[1] == 'Z') {
    size_t i = 2;
    while (i < n.size() && n[i] >= '0' && n[i] <= '9') ++i;
    if (i > 2) n.remove_prefix(i);
  }
  for (const char* p : kNcclKernelPrefixes)
    if (n.rfind(p, 0) == 0) return true;
  return false;
}

bool Aggregator::is_launch_api(std::string_view n) {
  // cudaLaunchKernel, cudaLaunchKernelExC, cudaLaunchCooperativeKernel, their
  // _ptsz variants, cuLaunchKernel(Ex), cuLaunchCooperativeKernel, cuLaunchGrid.
  // Not host functions or graphs (a graph launch has many kernels).
  bool runtime = n.rfind("cudaLaunch", 0) == 0, driver = n.rfind("cuLaunch", 0) == 0;
  if (!runtime && !driver) return false;
  return n.find("HostFunc") == std::string_view::npos && n.find("Graph") == std::string_view::npos;
}

std::uint32_t Aggregator::intern(const char* name) {
  if (!name) return 0;
  auto it = by_pointer_.find(name);
  // The text is compared too: after a module unload the address may name another kernel.
  if (it != by_pointer_.end() && names_[it->second].text == name) return it->second;
  std::string text(name);
  auto jt = by_text_.find(text);
  std::uint32_t id;
  if (jt != by_text_.end()) {
    id = jt->second;
  } else {
    id = static_cast<std::uint32_t>(names_.size());
    names_.push_back({text, is_launch_api(text), is_nccl_kernel(text)});
    by_text_.emplace(std::move(text), id);
  }
  // CUPTI hands the same pointer for every record of a kernel; the pointer
  // cache saves hashing the (often long) name for each record.
  if (by_pointer_.size() < 100000) by_pointer_[name] = id;
  return id;
}

void Aggregator::set_gate(const CaptureGate* gate) {
  std::lock_guard<std::mutex> lock(mu_);
  gate_ = gate;
  for (BusyTracker* b : {&kernel_busy_, &gpu_busy_, &comm_busy_, &compute_busy_})
    b->set_windows(gate ? &windows_ : nullptr);
}

std::uint64_t Aggregator::busy_end(const Activity& a) const {
  return gate_ ? std::min(a.end, windows_.end_of(a.start)) : a.end;
}

void Aggregator::add(std::vector<Activity>& batch) {
  std::sort(batch.begin(), batch.end(), [](const Activity& a, const Activity& b) { return a.start < b.start; });
  std::lock_guard<std::mutex> lock(mu_);
  if (gate_) {
    // Every record here started before the gate's latest boundary was read
    // (its buffer completed after it ran), so the stretches known now decide
    // it exactly, whatever order the records come in. A launch without
    // timestamps (--counters replay, refused with a capture range) cannot be
    // judged and is kept.
    gate_->sync(windows_);
    const size_t before = batch.size();
    std::erase_if(batch, [&](const Activity& a) {
      return a.type != Activity::Type::UntimedKernel && !windows_.contains(a.start);
    });
    left_out_ += before - batch.size();
  }
  for (const auto& a : batch) add_one(a);
  records_ += batch.size();
  ++generation_;
}

void Aggregator::join_launch(std::uint32_t correlation, const PendingLaunch& part) {
  PendingLaunch& p = pending_[correlation];
  if (part.has_api) {
    p.has_api = true;
    p.api_start = part.api_start;
    p.api_end = part.api_end;
  }
  if (part.has_kernel) {
    p.has_kernel = true;
    p.k_start = part.k_start;
    p.k_end = part.k_end;
    p.kernel = part.kernel;
  }
  if (p.has_api && p.has_kernel) {
    LaunchAgg& l = launches_[p.kernel];
    double api = static_cast<double>(p.api_end - p.api_start);
    double kernel = static_cast<double>(p.k_end - p.k_start);
    // Queue time: from the launch call's return to the kernel's start (0 when
    // the kernel started before the call returned), as nsys defines it.
    double queue = p.k_start > p.api_end ? static_cast<double>(p.k_start - p.api_end) : 0.0;
    l.api.add(api);
    l.queue.add(queue);
    l.kernel.add(kernel);
    if (kernel < api) ++l.shorter;
    pending_.erase(correlation);
    return;
  }
  // Launches whose other half never comes (failed launches) must not pile up:
  // when there are too many, the older half (by correlation id) goes.
  max_correlation_ = std::max(max_correlation_, correlation);
  if (sweep_at_ == 0) sweep_at_ = opt_.max_pending_launches;
  if (pending_.size() > sweep_at_) {
    std::uint32_t keep = static_cast<std::uint32_t>(opt_.max_pending_launches / 2);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->first + keep < max_correlation_) {
        it = pending_.erase(it);
        ++unmatched_launches_;
      } else {
        ++it;
      }
    }
    // Never sweep on every call when most launches are recent (a deep queue).
    sweep_at_ = std::max(opt_.max_pending_launches, pending_.size() * 2);
  }
}

void Aggregator::add_one(const Activity& a) {
  switch (a.type) {
    case Activity::Type::UntimedKernel:
      ++untimed_[a.name ? a.name : ""];
      break;
    case Activity::Type::Kernel: {
      std::uint32_t name = intern(a.name);
      std::uint64_t key = (std::uint64_t{name} << 32) | a.nvtx_path;
      auto [it, inserted] = kernels_.try_emplace(key);
      KernelAgg& k = it->second;
      double dur = static_cast<double>(a.end - a.start);
      if (inserted) {
        k.name = name;
        k.path = a.nvtx_path;
        for (int i = 0; i < 3; ++i) {
          k.s.grid[i] = a.grid[i];
          k.s.block[i] = a.block[i];
        }
        k.s.registers = a.registers;
        k.s.static_smem = a.static_smem;
        k.s.dynamic_smem = a.dynamic_smem;
        k.s.device = static_cast<int>(a.device);
      }
      k.s.duration.add(dur);
      kernel_busy_.add(a.start, busy_end(a));
      gpu_busy_.add(a.start, busy_end(a));
      (names_[name].nccl ? comm_busy_ : compute_busy_).add(a.start, busy_end(a));
      if (names_[name].nccl && collectives_.size() < Timeline::kMaxCollectives)
        collectives_.push_back({a.start, a.end});
      sequences_.add((std::uint64_t{a.device} << 32) | a.stream, name, a.start, dur);
      if (a.nvtx_path) {
        RangeGpu& r = range_gpu_[a.nvtx_path];
        ++r.kernels;
        r.ns += dur;
      }
      if (!a.graph && a.correlation) {
        PendingLaunch part;
        part.has_kernel = true;
        part.k_start = a.start;
        part.k_end = a.end;
        part.kernel = name;
        join_launch(a.correlation, part);
      }
      break;
    }
    case Activity::Type::Memcpy:
    case Activity::Type::Memset: {
      std::string kind = a.type == Activity::Type::Memset ? "memset" : std::string(a.copy_kind ? a.copy_kind : "");
      MemcpySummary& m = memcpys_[kind];
      if (m.duration.count() == 0) {
        m.kind = kind;
        m.min_bytes = a.bytes;
      }
      m.duration.add(static_cast<double>(a.end - a.start));
      m.sizes.add(static_cast<double>(a.bytes));
      m.total_bytes += a.bytes;
      m.min_bytes = std::min(m.min_bytes, a.bytes);
      m.max_bytes = std::max(m.max_bytes, a.bytes);
      m.pageable += a.pageable ? 1 : 0;
      m.synchronous += a.synchronous ? 1 : 0;
      gpu_busy_.add(a.start, busy_end(a));
      break;
    }
    case Activity::Type::RuntimeApi:
    case Activity::Type::DriverApi: {
      std::uint32_t name = intern(a.name);
      ApiAgg& api = apis_[name];
      api.name = name;
      api.driver = a.type == Activity::Type::DriverApi;
      api.d.add(static_cast<double>(a.end - a.start));
      api.errors += a.failed ? 1 : 0;
      if (names_[name].launch && a.correlation) {
        PendingLaunch part;
        part.has_api = true;
        part.api_start = a.start;
        part.api_end = a.end;
        join_launch(a.correlation, part);
      }
      break;
    }
  }
}

void Aggregator::add_device(std::uint32_t ordinal, std::string name, double dram_peak_bps) {
  std::lock_guard<std::mutex> lock(mu_);
  devices_[ordinal] = {std::move(name), dram_peak_bps};
  ++generation_;
}

void Aggregator::warn(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  if (std::find(warnings_.begin(), warnings_.end(), text) == warnings_.end()) warnings_.push_back(text);
  ++generation_;
}

std::uint64_t Aggregator::generation() const {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

std::uint64_t Aggregator::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

ProfileData Aggregator::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  ProfileData p;
  auto path_name = [&](std::uint32_t id) { return nvtx_ && id ? nvtx_->path_name(id) : std::string(); };
  for (const auto& [key, k] : kernels_) {
    KernelSummary s = k.s;
    s.name = names_[k.name].text;
    s.nvtx_path = path_name(k.path);
    p.kernels[s.name + '\x1f' + s.nvtx_path] = std::move(s);
  }
  for (const auto& [id, a] : apis_) {
    ApiSummary s;
    s.name = names_[id].text;
    s.domain = a.driver ? "driver" : "runtime";
    s.duration = a.d;
    s.errors = a.errors;
    p.apis[s.name] = std::move(s);
  }
  p.memcpys = memcpys_;
  p.untimed_launches = untimed_;
  for (const auto& [id, l] : launches_) {
    LaunchSummary s;
    s.kernel = names_[id].text;
    s.api_ns = l.api;
    s.queue_ns = l.queue;
    s.kernel_ns = l.kernel;
    s.shorter_than_launch = l.shorter;
    p.launches[s.kernel] = std::move(s);
  }
  if (nvtx_) {
    nvtx_->snapshot(p.nvtx_ranges);
    // GPU time of a range includes the ranges nested in it.
    for (const auto& [id, g] : range_gpu_)
      for (std::uint32_t anc : nvtx_->lineage(id)) {
        std::string name = nvtx_->path_name(anc);
        NvtxRangeSummary& r = p.nvtx_ranges[name];
        r.path = name;
        r.kernels += g.kernels;
        r.kernel_ns += g.ns;
      }
  }
  Timeline& t = p.timeline;
  if (gate_) gate_->sync(windows_);
  t.first_gpu_ns = gpu_busy_.first_ns();
  t.last_gpu_ns = gpu_busy_.last_ns();
  if (gate_ && t.last_gpu_ns > t.first_gpu_ns)
    t.uncaptured_ns = (t.last_gpu_ns - t.first_gpu_ns) - windows_.covered_ns(t.first_gpu_ns, t.last_gpu_ns);
  p.capture.left_out = left_out_;
  t.kernel_busy_ns = kernel_busy_.busy_ns();
  t.gpu_busy_ns = gpu_busy_.busy_ns();
  t.comm_busy_ns = comm_busy_.busy_ns();
  t.collectives = collectives_;
  std::sort(t.collectives.begin(), t.collectives.end(),
            [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  t.compute_busy_ns = compute_busy_.busy_ns();
  // |comm ∩ compute| = |comm| + |compute| − |comm ∪ compute|, the last being every kernel's union.
  t.overlap_ns = t.comm_busy_ns + t.compute_busy_ns > t.kernel_busy_ns
                     ? t.comm_busy_ns + t.compute_busy_ns - t.kernel_busy_ns
                     : 0;
  t.largest_gaps = gpu_busy_.largest_gaps();
  t.gap_histogram = gpu_busy_.gap_histogram();
  t.gap_ns_histogram = gpu_busy_.gap_ns_histogram();
  t.late_records = gpu_busy_.late_records() + kernel_busy_.late_records();
  for (const auto& s : sequences_.top(opt_.top_sequences)) {
    KernelSequence ks;
    for (std::uint32_t id : s.kernels) ks.kernels.push_back(names_[id].text);
    ks.count = s.count;
    ks.total_ns = s.total_ns;
    p.sequences.push_back(std::move(ks));
  }
  for (const auto& [ordinal, d] : devices_) {
    if (p.devices.size() <= ordinal) {
      p.devices.resize(ordinal + 1);
      p.dram_peak_bps.resize(ordinal + 1, 0.0);
    }
    p.devices[ordinal] = d.first;
    p.dram_peak_bps[ordinal] = d.second;
  }
  p.warnings = warnings_;
  if (t.late_records > 0)
    p.warnings.push_back(std::to_string(t.late_records) +
                         " activity records arrived after their time window was closed; busy time may be "
                         "under-counted by up to " +
                         std::to_string((gpu_busy_.late_ns() + 999) / 1000) + " us");
  if (sequences_.prune_floor() > 0)
    p.warnings.push_back(
        "kernel sequence counts are approximate: rare sequences were dropped to bound memory (counts "
        "may be low by up to " +
        std::to_string(sequences_.prune_floor()) + ")");
  return p;
}

void Aggregator::reset_locked() {
  kernels_.clear();
  apis_.clear();
  memcpys_.clear();
  untimed_.clear();
  pending_.clear();
  max_correlation_ = 0;
  sweep_at_ = 0;
  launches_.clear();
  range_gpu_.clear();
  kernel_busy_ = BusyTracker(opt_.max_open_intervals, false);
  gpu_busy_ = BusyTracker(opt_.max_open_intervals, true);
  comm_busy_ = BusyTracker(opt_.max_open_intervals, false);
  compute_busy_ = BusyTracker(opt_.max_open_intervals, false);
  collectives_.clear();
  for (BusyTracker* b : {&kernel_busy_, &gpu_busy_, &comm_busy_, &compute_busy_})
    b->set_windows(gate_ ? &windows_ : nullptr);
  left_out_ = 0;
  sequences_ = SequenceCounter(opt_.sequence_capacity);
  warnings_.clear();
  records_ = 0;
  unmatched_launches_ = 0;
  ++generation_;
  // Names and devices stay: they describe the same program and GPUs.
}

}  // namespace roofline::prof
