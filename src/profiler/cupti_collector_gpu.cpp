#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <chrono>
#include <cstdio>
#include <string_view>
#include <sys/syscall.h>
#include <time.h>

#include "roofline/core/env.hpp"
#include "src/profiler/cupti_collector.hpp"

namespace roofline::prof {

namespace {
constexpr const char* kL2EvictKernel = "roofline_l2_evict";  // counters/l2_evict_ptx.cpp
}  // namespace

namespace {

// Activity buffers are recycled: a new one is requested on the application's
// thread (inside a CUDA call), so it must cost nothing there. Fresh buffers
// come from calloc (large blocks are fresh zero pages from the kernel), used
// ones are zeroed on CUPTI's worker thread after their records are read, and
// CUPTI is told the buffers arrive zeroed (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_
// ACTIVITY_BUFFER), so it does not clear 16 MiB on the program's thread.
std::mutex g_pool_mu;
std::vector<std::uint8_t*>* g_pool = new std::vector<std::uint8_t*>();  // never freed: used during exit
constexpr size_t kPoolKeep = 8;                                          // buffers kept for reuse

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  size_t bytes = CuptiCollector::instance().buffer_bytes();
  *buffer = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_pool_mu);
    if (!g_pool->empty()) {
      *buffer = g_pool->back();
      g_pool->pop_back();
    }
  }
  // calloc aligns to 16 bytes (CUPTI wants 8); a failed allocation gives
  // CUPTI no buffer and it counts the records it had to drop (a warning).
  if (!*buffer) *buffer = static_cast<uint8_t*>(std::calloc(1, bytes));
  *size = *buffer ? bytes : 0;
  *max_records = 0;
}

// ROOFLINE_CUPTI_DEBUG=1: one stderr line per completed buffer (bytes, time
// spent folding its records, and whether that ran on the program's main
// thread), to see where the tracing overhead goes.
const bool g_debug_buffers = env::get(env::Var::CuptiDebug) == "1";

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) {
  if (!buffer) return;
  auto t0 = std::chrono::steady_clock::now();
  CuptiCollector::instance().on_buffer(buffer, valid, ctx, stream);
  if (g_debug_buffers) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "roofline-cupti: buffer %zu of %zu bytes folded in %.3f ms on the %s thread\n", valid, size,
                 ms, static_cast<pid_t>(syscall(SYS_gettid)) == getpid() ? "main" : "a CUPTI");
  }
  // Only buffers of the current size are reused (they all are, unless the
  // size changed between in-process traces).
  if (size == CuptiCollector::instance().buffer_bytes()) {
    std::memset(buffer, 0, size);
    std::lock_guard<std::mutex> lock(g_pool_mu);
    if (g_pool->size() < kPoolKeep) {
      g_pool->push_back(buffer);
      return;
    }
  }
  std::free(buffer);
}

void CUPTIAPI on_cupti_callback(void* user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  static_cast<CuptiCollector*>(user)->on_callback(static_cast<int>(domain), cbid, data);
}

const char* copy_kind_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "unknown";
  }
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" (the runtime's version tags
// are noise in a table; the driver's "_v2" is part of the function's name).
std::string strip_version(const char* name) {
  std::string s(name);
  size_t p = s.rfind("_v");
  if (p != std::string::npos && s.size() - p >= 6 &&
      std::all_of(s.begin() + static_cast<long>(p) + 2, s.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    s.erase(p);
  return s;
}

std::string cupti_error(int status) {
  const char* s = nullptr;
  if (cuptiGetResultString(static_cast<CUptiResult>(status), &s) != CUPTI_SUCCESS || !s) s = "unknown CUPTI error";
  return std::string(s) + " (" + std::to_string(status) + ")";
}

// What copy and memset records share (CUpti_ActivityMemcpy6,
// CUpti_ActivityMemcpyPtoP4, CUpti_ActivityMemset4): times, ids and bytes, and
// whether the API that issued it was synchronous (its record lacks `async_flag`).
template <class Record>
void transfer(Activity& a, const Record& m, Activity::Type type, unsigned async_flag) {
  a.type = type;
  a.start = m.start;
  a.end = m.end;
  a.correlation = m.correlationId;
  a.device = m.deviceId;
  a.stream = m.streamId;
  a.bytes = m.bytes;
  a.synchronous = !(m.flags & async_flag);
}

const CUpti_ActivityKind kGpuKinds[] = {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                        CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
                                        CUPTI_ACTIVITY_KIND_MEMSET};
const CUpti_ActivityKind kApiKinds[] = {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

// The capture gate's clock: CUPTI's, the clock of every activity record.
std::uint64_t cupti_now() {
  uint64_t t = 0;
  return cuptiGetTimestamp(&t) == CUPTI_SUCCESS ? t : 0;
}

bool is_profiler_api(int domain, std::uint32_t cbid, bool* start) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000 ||
                                                cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000)) {
    *start = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000;
    return true;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
      (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart || cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) {
    *start = cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
    return true;
  }
  return false;
}

}  // namespace

CuptiCollector& CuptiCollector::instance() {
  // Never destroyed: CUPTI may deliver a buffer during exit, after static
  // destructors would have run.
  static CuptiCollector* c = new CuptiCollector();
  return *c;
}

CuptiCollector::CuptiCollector() { aggregator_.set_nvtx(&nvtx_); }

void CuptiCollector::configure_capture(const CaptureSpec& spec, std::uint64_t program_start_monotonic_ns) {
  std::lock_guard<std::mutex> lock(capture_mu_);
  if (!spec.active() || capture_.load()) return;
  // The program's start on CUPTI's clock: now, less the time since it started.
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const std::uint64_t mono =
      static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
  const std::uint64_t now = cupti_now();
  const std::uint64_t since =
      program_start_monotonic_ns > 0 && program_start_monotonic_ns <= mono ? mono - program_start_monotonic_ns : 0;
  gate_.configure(spec, now - std::min(now, since), &cupti_now);
  aggregator_.set_gate(&gate_);
  nvtx_.set_gate(&gate_);
  capture_.store(true);  // last: NVTX events go through the gate once it has its clock
}

void CuptiCollector::warn(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  if (std::find(warnings_.begin(), warnings_.end(), text) == warnings_.end()) warnings_.push_back(text);
}

bool CuptiCollector::check(int status, const char* call) {
  if (status == CUPTI_SUCCESS) return true;
  warn(std::string("CUPTI call ") + call + " failed: " + cupti_error(status));
  return false;
}

std::vector<std::string> CuptiCollector::warnings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return warnings_;
}

std::uint64_t CuptiCollector::now_ns() const {
  uint64_t t = 0;
  if (cuptiGetTimestamp(&t) != CUPTI_SUCCESS) return 0;
  return t;
}

const char* CuptiCollector::api_name(bool driver, std::uint32_t cbid) const {
  const auto& v = driver ? driver_names_ : runtime_names_;
  if (cbid < v.size() && !v[cbid].empty()) return v[cbid].c_str();
  return driver ? "(driver API)" : "(runtime API)";
}

bool CuptiCollector::start(const CollectorOptions& opt) {
  if (running_.load()) return true;
  opt_ = opt;
  start_ns_ = now_ns();
  CUpti_SubscriberHandle sub = nullptr;
  CUptiResult st = cuptiSubscribe(&sub, reinterpret_cast<CUpti_CallbackFunc>(on_cupti_callback), this);
  if (st == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    warn(
        "another profiler (nsys, ncu, the PyTorch profiler, DCGM?) holds CUPTI in this process: roofline collected "
        "nothing from it (CUPTI allows one subscriber per process)");
    return false;
  }
  if (!check(st, "cuptiSubscribe")) return false;
  subscriber_ = sub;
  // API names by callback id, once, so records need no lookup.
  runtime_names_.assign(CUPTI_RUNTIME_TRACE_CBID_SIZE, std::string());
  driver_names_.assign(CUPTI_DRIVER_TRACE_CBID_SIZE, std::string());
  for (std::uint32_t i = 1; i < runtime_names_.size(); ++i) {
    const char* n = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, i, &n) == CUPTI_SUCCESS && n)
      runtime_names_[i] = strip_version(n);
  }
  for (std::uint32_t i = 1; i < driver_names_.size(); ++i) {
    const char* n = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, i, &n) == CUPTI_SUCCESS && n) driver_names_[i] = n;
  }
  cuptiGetLastError();  // unknown ids above leave an error behind
  std::uint8_t zeroed = 1;
  size_t zeroed_size = sizeof zeroed;
  check(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zeroed_size, &zeroed),
        "cuptiActivitySetAttribute(zeroed buffers)");
  if (!check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks")) {
    cuptiUnsubscribe(sub);
    subscriber_ = nullptr;
    return false;
  }
  if (!opt_.trace_dir.empty()) {
    std::string path = opt_.trace_dir + "/trace-" + std::to_string(getpid()) + ".jsonl";
    if (!trace_.open(path, opt_.trace_limit, getpid(), start_ns_, opt_.command))
      warn("cannot write the event trace " + path + ": " + std::strerror(errno));
    nvtx_.set_sink([this](std::uint32_t path_id, std::uint64_t s, std::uint64_t e, std::uint64_t tid) {
      trace_.nvtx(nvtx_.path_name(path_id), s, e, tid);
    });
  }
  bool kernels = false;
  for (CUpti_ActivityKind k : kGpuKinds) {
    bool ok = check(cuptiActivityEnable(k), "cuptiActivityEnable");
    kernels |= ok && k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  }
  if (opt_.api) {
    for (CUpti_ActivityKind k : kApiKinds) check(cuptiActivityEnable(k), "cuptiActivityEnable");
    // Name queries are not the program's work: CUPTI itself asks the driver
    // for each launched kernel's name (one cuKernelGetName per launch was
    // recorded), which filled the API table and the buffers. Not recorded.
    for (CUpti_CallbackId id : {CUPTI_DRIVER_TRACE_CBID_cuKernelGetName, CUPTI_DRIVER_TRACE_CBID_cuFuncGetName})
      check(cuptiActivityEnableDriverApi(id, 0), "cuptiActivityEnableDriverApi");
  }
  if (!kernels) warn("kernel tracing could not be enabled: the kernel tables are empty");
  if (opt_.nvtx) check(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_NVTX), "cuptiEnableDomain(NVTX)");
  // Buffers of a context are lost when it is destroyed: flush first. The
  // resource domain, not cudaDeviceReset/cuCtxDestroy API callbacks: no API
  // callback is enabled at all until the program pushes an NVTX range, so
  // CUPTI has no per-call callback work on the launch path.
  check(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING),
        "cuptiEnableCallback(context destroy)");
  if (opt_.flush_period_ms > 0) check(cuptiActivityFlushPeriod(opt_.flush_period_ms), "cuptiActivityFlushPeriod");
  running_.store(true);
  // Ranges pushed before CUDA started (NVTX hooks run without CUDA).
  if (nvtx_pushed_.load()) enable_launch_callbacks();
  if (capture_.load() && gate_.spec().range == CaptureSpec::Range::ProfilerApi) enable_profiler_api_callbacks();
  return true;
}

void CuptiCollector::enable_profiler_api_callbacks() {
  // Both the runtime's and the driver's: cudaProfilerStart calls
  // cuProfilerStart, and a second start (or stop) changes nothing. Two
  // callbacks, off the launch path.
  auto sub = static_cast<CUpti_SubscriberHandle>(subscriber_);
  check(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000),
        "cuptiEnableCallback(cudaProfilerStart)");
  check(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000),
        "cuptiEnableCallback(cudaProfilerStop)");
  check(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart),
        "cuptiEnableCallback(cuProfilerStart)");
  check(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop),
        "cuptiEnableCallback(cuProfilerStop)");
}

// With a capture range the gate stamps the time (under its lock), so a range
// that opens the gate starts exactly at the gate's opening and counts.
void CuptiCollector::nvtx_push(std::string_view name) {
  nvtx_.push(name, capture_.load(std::memory_order_relaxed) ? gate_.nvtx_push(name) : now_ns());
  nvtx_pushed_.store(true);
  if (!launch_callbacks_.load(std::memory_order_relaxed) && running_.load()) enable_launch_callbacks();
}

void CuptiCollector::nvtx_pop() {
  nvtx_.pop(capture_.load(std::memory_order_relaxed) ? gate_.nvtx_pop(nvtx_.current_name()) : now_ns());
}

void CuptiCollector::nvtx_start(std::uint64_t id, std::string_view name) {
  nvtx_.start_range(id, name, capture_.load(std::memory_order_relaxed) ? gate_.nvtx_start(id, name) : now_ns());
}

void CuptiCollector::nvtx_end(std::uint64_t id) {
  nvtx_.end_range(id, capture_.load(std::memory_order_relaxed) ? gate_.nvtx_end(id) : now_ns());
}

void CuptiCollector::enable_launch_callbacks() {
  if (launch_callbacks_.exchange(true)) return;
  auto sub = static_cast<CUpti_SubscriberHandle>(subscriber_);
  for (std::uint32_t i = 1; i < runtime_names_.size(); ++i)
    if (!runtime_names_[i].empty() && Aggregator::is_launch_api(runtime_names_[i]))
      check(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, i), "cuptiEnableCallback(launch)");
  for (std::uint32_t i = 1; i < driver_names_.size(); ++i)
    if (!driver_names_[i].empty() && Aggregator::is_launch_api(driver_names_[i]))
      check(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, i), "cuptiEnableCallback(launch)");
}

void CuptiCollector::flush(bool forced) {
  if (!running_.load()) return;
  check(cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0), "cuptiActivityFlushAll");
}

void CuptiCollector::stop() {
  if (!running_.exchange(false)) return;
  auto sub = static_cast<CUpti_SubscriberHandle>(subscriber_);
  check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  for (CUpti_ActivityKind k : kGpuKinds) check(cuptiActivityDisable(k), "cuptiActivityDisable");
  if (opt_.api)
    for (CUpti_ActivityKind k : kApiKinds) check(cuptiActivityDisable(k), "cuptiActivityDisable");
  check(cuptiActivityFlushAll(0), "cuptiActivityFlushAll");
  if (opt_.flush_period_ms > 0) check(cuptiActivityFlushPeriod(0), "cuptiActivityFlushPeriod");
  if (sub) check(cuptiUnsubscribe(sub), "cuptiUnsubscribe");
  subscriber_ = nullptr;
  launch_callbacks_.store(false);
  nvtx_.set_sink(nullptr);
  trace_.close();
}

void CuptiCollector::on_buffer(std::uint8_t* buffer, size_t valid, void* context, std::uint32_t stream) {
  thread_local std::vector<Activity> batch;
  batch.clear();
  CUpti_Activity* rec = nullptr;
  for (;;) {
    CUptiResult st = cuptiActivityGetNextRecord(buffer, valid, &rec);
    if (st == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
    if (!check(st, "cuptiActivityGetNextRecord")) break;
    Activity a;
    switch (rec->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
        // --counters: its L2 clean is the profiler's work, not the program's; a launch
        // it replayed has no timestamps (seen on the H100: start == end, so 0 ns).
        if (k->name && std::strcmp(k->name, kL2EvictKernel) == 0) continue;
        if (k->end <= k->start) {
          untimed_kernels_.fetch_add(1, std::memory_order_relaxed);
          a.type = Activity::Type::UntimedKernel;
          a.name = k->name;
          break;
        }
        a.type = Activity::Type::Kernel;
        a.start = k->start;
        a.end = k->end;
        a.correlation = k->correlationId;
        a.device = k->deviceId;
        a.stream = k->streamId;
        a.name = k->name;
        a.grid[0] = static_cast<std::uint32_t>(k->gridX);
        a.grid[1] = static_cast<std::uint32_t>(k->gridY);
        a.grid[2] = static_cast<std::uint32_t>(k->gridZ);
        a.block[0] = static_cast<std::uint32_t>(k->blockX);
        a.block[1] = static_cast<std::uint32_t>(k->blockY);
        a.block[2] = static_cast<std::uint32_t>(k->blockZ);
        a.registers = k->registersPerThread;
        a.static_smem = static_cast<std::uint64_t>(std::max(0, k->staticSharedMemory));
        a.dynamic_smem = static_cast<std::uint64_t>(std::max(0, k->dynamicSharedMemory));
        a.graph = k->graphId != 0;
        a.nvtx_path = nvtx_.path_of_launch(k->correlationId);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
        transfer(a, *m, Activity::Type::Memcpy, CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
        a.copy_kind = copy_kind_name(m->copyKind);
        a.pageable =
            m->srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE || m->dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY2:
        transfer(a, *reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(rec), Activity::Type::Memcpy,
                 CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
        a.copy_kind = "PtoP";
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        transfer(a, *reinterpret_cast<const CUpti_ActivityMemset4*>(rec), Activity::Type::Memset,
                 CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC);
        break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        auto* r = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
        bool driver = rec->kind == CUPTI_ACTIVITY_KIND_DRIVER;
        a.type = driver ? Activity::Type::DriverApi : Activity::Type::RuntimeApi;
        a.start = r->start;
        a.end = r->end;
        a.correlation = r->correlationId;
        a.thread = r->threadId;
        a.name = api_name(driver, r->cbid);
        // 600 is "not ready" in both APIs: the normal answer of a query.
        a.failed = r->returnValue != 0 && r->returnValue != 600;
        break;
      }
      case CUPTI_ACTIVITY_KIND_DEVICE: {
        auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(rec);
        aggregator_.add_device(d->id, d->name ? d->name : "", static_cast<double>(d->globalMemoryBandwidth) * 1e3);
        continue;
      }
      default:
        continue;
    }
    batch.push_back(a);
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(static_cast<CUcontext>(context), stream, &dropped) == CUPTI_SUCCESS && dropped)
    dropped_.fetch_add(dropped);
  // Folded first: with a capture range the aggregator leaves in the batch only
  // the captured records, which are all the trace gets.
  if (!batch.empty()) aggregator_.add(batch);
  if (trace_.is_open())
    for (const auto& a : batch) trace_.activity(a, a.nvtx_path ? nvtx_.path_name(a.nvtx_path) : std::string());
}

void CuptiCollector::set_forward(Forward fn, void* user) {
  forward_user_ = user;
  forward_ = fn;
}

void CuptiCollector::set_context_hook(void (*hook)()) {
  context_hook_ = hook;
  if (subscriber_)
    check(cuptiEnableCallback(1, static_cast<CUpti_SubscriberHandle>(subscriber_), CUPTI_CB_DOMAIN_RESOURCE,
                              CUPTI_CBID_RESOURCE_CONTEXT_CREATED),
          "cuptiEnableCallback(context created)");
}

void CuptiCollector::on_callback(int domain, std::uint32_t cbid, const void* data) {
  if (forward_) forward_(forward_user_, domain, cbid, data);
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED && context_hook_) context_hook_();
    // A context's buffers are lost when it is destroyed (cuCtxDestroy,
    // cudaDeviceReset, the primary context's release): flush them first.
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
      check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
      if (context_destroy_hook_) context_destroy_hook_();
    }
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    auto* d = static_cast<const CUpti_NvtxData*>(data);
    const void* p = d->functionParams;
    auto attr_text = [&](const nvtxEventAttributes_t* a) -> std::string {
      if (!a) return {};
      switch (a->messageType) {
        case NVTX_MESSAGE_TYPE_ASCII:
          return a->message.ascii ? a->message.ascii : "";
        case NVTX_MESSAGE_TYPE_UNICODE:
          return nvtx_narrow(a->message.unicode);
        case NVTX_MESSAGE_TYPE_REGISTERED: {
          std::lock_guard<std::mutex> lock(mu_);
          for (const auto& [h, s] : registered_strings_)
            if (h == a->message.registered) return s;
          return "(registered string)";
        }
        default:
          return {};
      }
    };
    switch (cbid) {
      case CUPTI_CBID_NVTX_nvtxRangePushA:
        nvtx_push(static_cast<const nvtxRangePushA_params*>(p)->message);
        break;
      case CUPTI_CBID_NVTX_nvtxRangePushW:
        nvtx_push(nvtx_narrow(static_cast<const nvtxRangePushW_params*>(p)->message));
        break;
      case CUPTI_CBID_NVTX_nvtxRangePushEx:
        nvtx_push(attr_text(static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib));
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
        nvtx_push(attr_text(static_cast<const nvtxDomainRangePushEx_params*>(p)->core.eventAttrib));
        break;
      case CUPTI_CBID_NVTX_nvtxRangePop:
      case CUPTI_CBID_NVTX_nvtxDomainRangePop:
        nvtx_pop();
        break;
      case CUPTI_CBID_NVTX_nvtxRangeStartA:
      case CUPTI_CBID_NVTX_nvtxRangeStartW:
      case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
        if (!d->functionReturnValue) break;
        auto id = *static_cast<const nvtxRangeId_t*>(d->functionReturnValue);
        std::string name;
        if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartA)
          name = static_cast<const nvtxRangeStartA_params*>(p)->message;
        else if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartW)
          name = nvtx_narrow(static_cast<const nvtxRangeStartW_params*>(p)->message);
        else if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartEx)
          name = attr_text(static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib);
        else
          name = attr_text(static_cast<const nvtxDomainRangeStartEx_params*>(p)->core.eventAttrib);
        nvtx_start(id, name);
        break;
      }
      case CUPTI_CBID_NVTX_nvtxRangeEnd:
        nvtx_end(static_cast<const nvtxRangeEnd_params*>(p)->id);
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
        nvtx_end(static_cast<const nvtxDomainRangeEnd_params*>(p)->core.id);
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
        auto* r = static_cast<const nvtxDomainRegisterStringA_params*>(p);
        if (d->functionReturnValue && r->string) {
          const void* h = *static_cast<const nvtxStringHandle_t*>(d->functionReturnValue);
          std::lock_guard<std::mutex> lock(mu_);
          registered_strings_.emplace_back(h, r->string);
        }
        break;
      }
      default:
        break;
    }
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (cb->callbackSite != CUPTI_API_ENTER) return;
    bool start = false;
    if (is_profiler_api(domain, cbid, &start)) {
      // On entry: what the program launched before the call has been
      // launched, what it launches after comes later.
      if (start)
        gate_.profiler_start();
      else
        gate_.profiler_stop();
      return;
    }
    nvtx_.note_launch(cb->correlationId);
  }
}

ProfileData CuptiCollector::snapshot() {
  ProfileData p = aggregator_.snapshot();
  p.pid = getpid();
  p.processes = {p.pid};
  p.timeline.process_start_ns = start_ns_;
  p.timeline.process_end_ns = now_ns();
  if (capture_.load()) {
    const CaptureSpec spec = gate_.spec();
    CaptureSummary& c = p.capture;
    c.range = spec.range_text();
    c.delay_ns = spec.delay_ns;
    c.duration_ns = spec.duration_ns;
    // A range still open ends now (at exit: with the program, as nsys ends it).
    c.ranges = gate_.windows().clipped(start_ns_, p.timeline.process_end_ns);
    c.opens = gate_.opens();
  }
  for (const auto& w : warnings())
    if (std::find(p.warnings.begin(), p.warnings.end(), w) == p.warnings.end()) p.warnings.push_back(w);
  if (std::uint64_t d = dropped_.load())
    p.warnings.push_back("CUPTI dropped " + std::to_string(d) + " activity records (its buffers were full)");
  if (std::uint64_t u = untimed_kernels_.load())
    p.warnings.push_back(std::to_string(u) +
                         " kernel launches came without timestamps (the launches --counters replayed): the kernel "
                         "tables give them the time of their measured runs; they have no place in the timeline, so "
                         "the time-based diagnoses are off (profile without --counters for those)");
  if (std::uint64_t u = nvtx_.unmatched_pops())
    p.warnings.push_back(std::to_string(u) +
                         " NVTX range ends had no matching start (ranges opened before tracing began)");
  if (trace_.limit_hit())
    p.warnings.push_back("the event trace reached its limit of " + std::to_string(trace_.written()) + " events; " +
                         std::to_string(trace_.dropped()) + " later events are in the summary but not in the trace");
  return p;
}

void CuptiCollector::clear() {
  aggregator_.lock_for_fork();
  aggregator_.reset_locked();
  aggregator_.unlock_after_fork();
  nvtx_.lock_for_fork();
  nvtx_.reset_locked();
  nvtx_.unlock_after_fork();
  std::lock_guard<std::mutex> lock(mu_);
  warnings_.clear();
  dropped_.store(0);
  untimed_kernels_.store(0);
}

void CuptiCollector::prepare_fork() {
  // No other thread may hold these at the fork, or the child would deadlock.
  aggregator_.lock_for_fork();
  nvtx_.lock_for_fork();
  gate_.lock_for_fork();
  trace_.lock_for_fork();
  mu_.lock();
}

void CuptiCollector::parent_after_fork() {
  mu_.unlock();
  trace_.unlock_after_fork();
  gate_.unlock_after_fork();
  nvtx_.unlock_after_fork();
  aggregator_.unlock_after_fork();
}

void CuptiCollector::child_after_fork() {
  // The child starts empty: what the parent collected is the parent's to write.
  aggregator_.reset_locked();
  nvtx_.reset_locked();
  bool tracing = trace_.is_open();
  trace_.abandon_locked();
  warnings_.clear();
  registered_strings_.clear();
  mu_.unlock();
  trace_.unlock_after_fork();
  gate_.unlock_after_fork();  // the child goes on with the parent's ranges (a range open at the fork stays open)
  nvtx_.unlock_after_fork();
  aggregator_.unlock_after_fork();
  dropped_.store(0);
  untimed_kernels_.store(0);
  if (tracing) {
    // No CUPTI call in the child (its CUPTI state is the parent's): the
    // parent's start time heads the file.
    std::string path = opt_.trace_dir + "/trace-" + std::to_string(getpid()) + ".jsonl";
    trace_.open(path, opt_.trace_limit, getpid(), start_ns_, opt_.command);
  }
}

}  // namespace roofline::prof
