// The CUPTI range profiler around each kernel launch. The flow per profiled
// launch follows NVIDIA's profiling_injection sample for CUDA 13: on the
// launch's API entry cuptiRangeProfilerStart, on its exit Stop, DecodeData
// (which synchronizes the context), evaluate range 0; the counter-data image is
// initialized afresh before each Start. Kernel replay runs the passes inside the
// launch call, so isAllPassSubmitted is 1 after Stop. With the DRAM pass
// (RangeProfilerOptions::dram_pass) a context has two configurations, and the
// launch after each full-set one reads the DRAM bytes alone (launch_plan.hpp).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>

#include "src/profiler/counters/cupti_host.hpp"
#include "src/profiler/counters/l2_cleaner.hpp"
#include "src/profiler/counters/launch_callbacks.hpp"
#include "src/profiler/counters/launch_plan.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/profiler/range_profiler.hpp"

namespace roofline::prof {

namespace {

using detail::is_graph_launch;
using detail::is_kernel_launch;
using detail::kLaunchCbids;
using detail::launch_stream;

// Depth of the profiler's own CUDA calls on this thread (the L2 clean): their
// launch callbacks are ignored, by us and, through internal_call(), by the host.
thread_local int tl_internal = 0;
struct InternalCall {
  InternalCall() { ++tl_internal; }
  ~InternalCall() { --tl_internal; }
  InternalCall(const InternalCall&) = delete;
  InternalCall& operator=(const InternalCall&) = delete;
};

// One metric configuration: its host object (which built the config image and
// evaluates the counter data), images and metric names.
struct Config {
  cupti::HostObject host;
  std::vector<std::uint8_t> image;         // must outlive the range profiler object
  std::vector<std::uint8_t> counter_data;  // one range
  std::vector<std::string> metrics;
  std::vector<const char*> names;  // into `metrics`
  std::size_t passes = 0;

  CounterStatus build(const std::string& chip, const std::vector<std::uint8_t>& avail,
                      std::vector<std::string> wanted) {
    metrics = std::move(wanted);
    names.clear();
    for (const auto& m : metrics) names.push_back(m.c_str());
    ROOFLINE_STATUS_TRY(host.init(CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip, avail));
    ROOFLINE_STATUS_TRY(host.add_metrics(metrics));
    ROOFLINE_STATUS_TRY(host.config_image(image));
    return cupti::num_passes(image, passes);
  }
};

// One CUDA context being profiled.
struct CtxState {
  CUcontext ctx = nullptr;
  int device = 0;
  std::string chip;
  Config full;                      // the metric set
  std::unique_ptr<Config> dram;     // the one-pass DRAM set (RangeProfilerOptions::dram_pass), or null
  Config* current = nullptr;        // the configuration set on `rp`
  CUpti_RangeProfiler_Object* rp = nullptr;
  detail::L2Cleaner l2;

  ~CtxState() {
    disable();
    InternalCall internal;
    l2.release();
  }
  void disable() noexcept {
    if (!rp) return;
    auto p = ROOFLINE_CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
    p.pRangeProfilerObject = rp;
    (void)cuptiRangeProfilerDisable(&p);  // teardown: nothing more to do if it fails
    rp = nullptr;
    current = nullptr;
  }
  CounterStatus enable() {
    auto p = ROOFLINE_CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
    p.ctx = ctx;
    ROOFLINE_CUPTI_TRY(cuptiRangeProfilerEnable(&p));
    rp = p.pRangeProfilerObject;
    return CounterStatus::success();
  }
  // (Re)initializes c's counter-data image. The range profiler object keeps the
  // metric list of its last GetCounterDataSize call and initializes any image for
  // that list, so with two configurations the size call comes first every time
  // (without it, on the H100 with CUPTI 13.0, the full set's image was set up for
  // the DRAM set's two metrics and every other metric evaluated to NaN).
  CounterStatus reset_counter_data(Config& c) {
    auto sp = ROOFLINE_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
    sp.pRangeProfilerObject = rp;
    sp.pMetricNames = c.names.data();
    sp.numMetrics = c.names.size();
    sp.maxNumOfRanges = 1;  // one kernel per Start/Stop
    sp.maxNumRangeTreeNodes = 1;
    ROOFLINE_CUPTI_TRY(cuptiRangeProfilerGetCounterDataSize(&sp));
    if (c.counter_data.size() != sp.counterDataSize) c.counter_data.assign(sp.counterDataSize, 0);
    auto p = ROOFLINE_CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
    p.pRangeProfilerObject = rp;
    p.counterDataSize = c.counter_data.size();
    p.pCounterData = c.counter_data.data();
    ROOFLINE_CUPTI_TRY(cuptiRangeProfilerCounterDataImageInitialize(&p));
    return CounterStatus::success();
  }
  // Makes `c` the configuration of the next Start (auto range, kernel replay),
  // with its counter-data image freshly initialized. Another configuration is
  // set on a new range profiler object (disable, enable): a second SetConfig on
  // the same object is accepted but leaves replay in the old set's state (H100,
  // CUPTI 13.0: a 7-pass set set after a 1-pass one replayed a kernel without
  // restoring its memory, so `y += x` ran 7 times, and counted instructions of
  // launches outside its range).
  CounterStatus use(Config& c, bool* switched = nullptr) {
    if (switched) *switched = current && current != &c;
    if (current && current != &c) {
      disable();
      ROOFLINE_STATUS_TRY(enable());
    }
    ROOFLINE_STATUS_TRY(reset_counter_data(c));
    if (current == &c) return CounterStatus::success();
    auto p = ROOFLINE_CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
    p.pRangeProfilerObject = rp;
    p.configSize = c.image.size();
    p.pConfig = c.image.data();
    p.counterDataImageSize = c.counter_data.size();
    p.pCounterDataImage = c.counter_data.data();
    p.range = CUPTI_AutoRange;
    p.replayMode = CUPTI_KernelReplay;
    p.maxRangesPerPass = 1;
    p.numNestingLevels = 1;  // auto range: must be 1
    p.minNestingLevel = 1;
    p.passIndex = 0;
    p.targetNestingLevel = 1;
    ROOFLINE_CUPTI_TRY(cuptiRangeProfilerSetConfig(&p));
    current = &c;
    return CounterStatus::success();
  }
  CounterStatus start() {
    auto p = ROOFLINE_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
    p.pRangeProfilerObject = rp;
    ROOFLINE_CUPTI_TRY(cuptiRangeProfilerStart(&p));
    return CounterStatus::success();
  }
  // Ends the range and decodes it into the current configuration's image.
  CounterStatus stop_and_decode(std::size_t& dropped) {
    auto sp = ROOFLINE_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
    sp.pRangeProfilerObject = rp;
    ROOFLINE_CUPTI_TRY(cuptiRangeProfilerStop(&sp));
    auto dp = ROOFLINE_CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
    dp.pRangeProfilerObject = rp;
    ROOFLINE_CUPTI_TRY(cuptiRangeProfilerDecodeData(&dp));
    dropped = dp.numOfRangeDropped;
    return CounterStatus::success();
  }
};

// The first range on a newly enabled range profiler object leaves ~3 MB of dirty
// lines in L2 after the clean before it (H100, CUPTI 13.0: the read-only kernel's
// one-pass DRAM writes read 3.0-3.2 MB after a switch, 0.1 MB without one), so a
// switch to the one-pass DRAM set first profiles the L2 clean's own kernel once,
// outside any record, and throws that range away.
CounterStatus prime(CtxState& cs, Config& c) {
  if (cs.l2.mode() != L2Clean::Evict) return CounterStatus::success();  // no kernel of our own to run
  InternalCall internal;
  ROOFLINE_STATUS_TRY(cs.start());
  CounterStatus cleaned = cs.l2.clean();
  std::size_t dropped = 0;
  ROOFLINE_STATUS_TRY(cs.stop_and_decode(dropped));
  ROOFLINE_STATUS_TRY(cleaned);
  return cs.reset_counter_data(c);
}

// What the entry callback leaves for the exit callback of the same launch (on
// the same thread: launches do not nest).
struct Pending {
  bool locked = false;    // this launch holds launch_mu
  bool profiled = false;  // the range profiler was started for it
  CtxState* cs = nullptr;
  Config* cfg = nullptr;  // the configuration it was started with
  detail::LaunchPlanner::Plan plan;
  std::string kernel, nvtx;
};
thread_local Pending tl_pending;

}  // namespace

struct RangeProfiler::Impl {
  RangeProfilerOptions opts;
  std::atomic<bool> active{false};
  bool acquired = false;                     // holds a cupti::acquire_profiler() reference
  CUpti_SubscriberHandle own_sub = nullptr;  // start(): our own subscriber
  bool attached = false;                     // attach(): the host's subscriber

  // Held from the entry to the exit callback of every launch while active, so a
  // profiled kernel's Start..Stop window never contains another launch, and
  // guarding the context states.
  std::mutex launch_mu;
  std::map<CUcontext, std::unique_ptr<CtxState>> ctxs;

  mutable std::mutex mu;  // everything below
  detail::LaunchPlanner planner;
  std::vector<RangeRecord> records;
  RangeProfilerStats st;
  CounterStatus status;
  std::vector<std::string> metrics_used, unavailable;

  void fail(const CounterStatus& s) {
    std::lock_guard<std::mutex> lock(mu);
    if (status.ok()) status = s;
    active = false;  // stop profiling; the program (and the host's tracing) carries on
  }
  // A problem that leaves profiling running (reported by status()).
  void warn(const CounterStatus& s) {
    std::lock_guard<std::mutex> lock(mu);
    if (status.ok()) status = s;
  }
  void clean_l2(CtxState& cs);

  CounterStatus ensure_context(CUcontext ctx, CtxState*& out);
  void on_enter(CUpti_CallbackId cbid, const CUpti_CallbackData* cb);
  void on_exit(CUpti_CallbackId cbid, const CUpti_CallbackData* cb);
  void on_context_destroy(CUcontext ctx);
  void handle(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) noexcept;
  CounterStatus enable_callbacks(CUpti_SubscriberHandle sub);
  void teardown_contexts();
};

namespace {
void CUPTIAPI trampoline(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  static_cast<RangeProfiler::Impl*>(userdata)->handle(domain, cbid, data);
}
}  // namespace

CounterStatus RangeProfiler::Impl::ensure_context(CUcontext ctx, CtxState*& out) {
  out = nullptr;
  if (!ctx) return CounterStatus::make(CounterProblem::Failed, "a kernel launch has no current CUDA context");
  if (auto it = ctxs.find(ctx); it != ctxs.end()) {
    out = it->second.get();
    return CounterStatus::success();
  }
  auto cs = std::make_unique<CtxState>();
  cs->ctx = ctx;
  std::uint32_t dev = 0;
  ROOFLINE_CUPTI_TRY(cuptiGetDeviceId(ctx, &dev));
  cs->device = static_cast<int>(dev);
  ROOFLINE_STATUS_TRY(cupti::device_supported(cs->device, CUPTI_PROFILER_RANGE_PROFILING));
  ROOFLINE_STATUS_TRY(cupti::chip_name(cs->device, cs->chip));

  // Counter availability must be read before the range profiler is enabled on
  // the context; it is also where ERR_NVGPUCTRPERM first shows.
  std::vector<std::uint8_t> avail;
  {
    auto p = ROOFLINE_CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
    p.ctx = ctx;
    ROOFLINE_CUPTI_TRY(cuptiProfilerGetCounterAvailability(&p));
    avail.assign(p.counterAvailabilityImageSize, 0);
    p.pCounterAvailabilityImage = avail.data();
    ROOFLINE_CUPTI_TRY(cuptiProfilerGetCounterAvailability(&p));
  }

  // The metric list: required names must exist; optional ones are dropped (and
  // listed) where this chip lacks them.
  MetricSet wanted;
  if (opts.metrics.empty()) {
    auto [major, minor] = chip_compute_capability(cs->chip);
    wanted = default_range_metrics(major, minor);
    if (opts.verification) {
      auto v = verification_metrics(major);
      wanted.optional.insert(wanted.optional.end(), v.begin(), v.end());
    }
  } else {
    wanted.required = opts.metrics;
  }
  std::vector<std::string> use, unknown, dropped;
  {
    cupti::HostObject probe;
    ROOFLINE_STATUS_TRY(probe.init(CUPTI_PROFILER_TYPE_RANGE_PROFILER, cs->chip, avail));
    for (const auto& m : wanted.required) (probe.knows(m) ? use : unknown).push_back(m);
    for (const auto& m : wanted.optional) (probe.knows(m) ? use : dropped).push_back(m);
  }
  if (!unknown.empty())
    return CounterStatus::make(
        CounterProblem::BadMetric,
        fmt::format("metric{} not available on {} (GPU {}): {}", unknown.size() > 1 ? "s" : "", cs->chip, cs->device,
                    join(unknown, ", ")),
        fmt::format("check the names (with their rollup, e.g. dram__bytes_read.sum) against `ncu --query-metrics "
                    "--chip {}`",
                    to_lower(cs->chip)));
  if (use.empty()) return CounterStatus::make(CounterProblem::BadMetric, "no metrics to collect");
  ROOFLINE_STATUS_TRY(cs->full.build(cs->chip, avail, std::move(use)));
  // The one-pass DRAM set, when the full set is replayed and counts DRAM bytes.
  if (opts.dram_pass && cs->full.passes > 1) {
    std::vector<std::string> dram;
    for (const char* m : {metric::kDramRead, metric::kDramWrite})
      if (std::find(cs->full.metrics.begin(), cs->full.metrics.end(), m) != cs->full.metrics.end()) dram.push_back(m);
    if (!dram.empty()) {
      cs->dram = std::make_unique<Config>();
      ROOFLINE_STATUS_TRY(cs->dram->build(cs->chip, avail, std::move(dram)));
      if (cs->dram->passes != 1)
        return CounterStatus::make(CounterProblem::Failed,
                                   fmt::format("the DRAM byte counts alone need {} passes on {}, not one",
                                               cs->dram->passes, cs->chip),
                                   "profile with dram_pass off (known_flops --no-dram-pass)");
    }
  }

  // The L2 clean's scratch buffer and kernel, before the range profiler is enabled.
  // Without them profiling goes on (with a warning): the counts stay right but for
  // DRAM writes, which may include earlier work's dirty lines.
  if (opts.l2_clean != L2Clean::None) {
    InternalCall internal;
    if (CounterStatus s = cs->l2.init(ctx, opts.l2_clean); !s.ok()) warn(s);
  }

  ROOFLINE_STATUS_TRY(cs->enable());
  ROOFLINE_STATUS_TRY(cs->use(cs->full));
  {
    std::lock_guard<std::mutex> lock(mu);
    st.passes = std::max<int>(st.passes, static_cast<int>(cs->full.passes));
    metrics_used = cs->full.metrics;
    for (const auto& d : dropped)
      if (std::find(unavailable.begin(), unavailable.end(), d) == unavailable.end()) unavailable.push_back(d);
  }
  out = cs.get();
  ctxs.emplace(ctx, std::move(cs));
  return CounterStatus::success();
}

void RangeProfiler::Impl::on_enter(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  Pending& pend = tl_pending;
  pend = Pending{};
  launch_mu.lock();
  pend.locked = true;
  if (!active) return;  // stopped (or failed) meanwhile: the exit callback just unlocks
  if (is_graph_launch(cbid)) {
    std::lock_guard<std::mutex> lock(mu);
    ++st.skipped_graphs;
    return;
  }
  // A launch into a capturing stream only records a graph node: nothing runs.
  bool ptsz = false;
  CUstream stream = launch_stream(cbid, cb->functionParams, ptsz);
  if (const cupti::Driver* d = cupti::driver()) {
    CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_NONE;
    auto fn = ptsz ? d->stream_is_capturing_ptsz : d->stream_is_capturing;
    if (fn(stream, &cap) == CUDA_SUCCESS && cap != CU_STREAM_CAPTURE_STATUS_NONE) {
      std::lock_guard<std::mutex> lock(mu);
      ++st.skipped_capture;
      return;
    }
  }
  pend.kernel = cb->symbolName ? cb->symbolName : (cb->functionName ? cb->functionName : "(unknown kernel)");
  {
    std::lock_guard<std::mutex> lock(mu);
    ++st.launches;
    pend.plan = planner.next(pend.kernel);
    if (pend.plan.kind == detail::LaunchPlanner::Kind::Skip) {
      ++st.skipped_limit;
      return;
    }
  }
  CtxState* cs = nullptr;
  CounterStatus s = ensure_context(cb->context, cs);
  if (!s.ok()) {
    fail(s);
    return;
  }
  Config* cfg = &cs->full;
  if (pend.plan.kind == detail::LaunchPlanner::Kind::Dram) {
    if (!cs->dram) return;  // another context without a DRAM set: leave this launch alone
    cfg = cs->dram.get();
  }
  const auto t0 = std::chrono::steady_clock::now();
  bool switched = false;
  CounterStatus u = cs->use(*cfg, &switched);
  if (switched) {
    if (u.ok() && cfg != &cs->full) u = prime(*cs, *cfg);
    std::lock_guard<std::mutex> lock(mu);
    ++st.config_switches;
    st.config_switch_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  if (!u.ok()) {
    if (cfg == &cs->full) return fail(u);
    // The DRAM set cannot be switched to: go on with the full set only (the
    // records keep their replayed DRAM counts, and the warning says so).
    warn(u);
    cs->dram.reset();
    if (CounterStatus f = cs->use(cs->full); !f.ok()) fail(f);
    return;
  }
  if (opts.nvtx_path && cfg == &cs->full) {
    try {
      pend.nvtx = opts.nvtx_path();
    } catch (...) {
      pend.nvtx.clear();  // a failing path provider must not break the launch
    }
  }
  clean_l2(*cs);
  if (CounterStatus r = cs->start(); !r.ok()) return fail(r);
  pend.cs = cs;
  pend.cfg = cfg;
  pend.profiled = true;
}

// Right before the range starts, so nothing the program queued earlier can leave
// dirty lines in L2 for the kernel's range to count (RangeProfilerOptions::l2_clean).
void RangeProfiler::Impl::clean_l2(CtxState& cs) {
  if (cs.l2.mode() == L2Clean::None) return;
  const auto t0 = std::chrono::steady_clock::now();
  CounterStatus s;
  {
    InternalCall internal;
    s = cs.l2.clean();
    if (!s.ok()) cs.l2.release();  // once is enough to know: profile the rest without cleaning
  }
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!s.ok()) return warn(s);
  std::lock_guard<std::mutex> lock(mu);
  ++st.l2_cleans;
  st.l2_clean_seconds += dt;
}

void RangeProfiler::Impl::on_exit(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  Pending& pend = tl_pending;
  if (!pend.locked) return;  // entry came before we were active
  struct Unlock {
    Impl* self;
    Pending& p;
    ~Unlock() {
      p.locked = false;
      p.profiled = false;
      self->launch_mu.unlock();
    }
  } unlock{this, pend};
  if (!pend.profiled) return;
  CtxState* cs = pend.cs;

  std::size_t dropped = 0;
  if (CounterStatus r = cs->stop_and_decode(dropped); !r.ok()) return fail(r);

  const bool launch_failed =
      cb->functionReturnValue && *static_cast<const CUresult*>(cb->functionReturnValue) != CUDA_SUCCESS;
  Config& cfg = *pend.cfg;
  auto ip = ROOFLINE_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  ip.pCounterDataImage = cfg.counter_data.data();
  ip.counterDataImageSize = cfg.counter_data.size();
  if (CUptiResult r = cuptiRangeProfilerGetCounterDataInfo(&ip); r != CUPTI_SUCCESS)
    return fail(cupti::status(r, "cuptiRangeProfilerGetCounterDataInfo"));

  std::vector<std::map<std::string, double>> got;
  if (!launch_failed) {
    for (std::size_t i = 0; i < ip.numTotalRanges; ++i) {
      std::vector<double> values;
      CounterStatus s = cfg.host.evaluate(cfg.counter_data, i, cfg.names, values);
      if (!s.ok()) return fail(s);
      auto& v = got.emplace_back();
      for (std::size_t k = 0; k < values.size(); ++k)
        if (std::isfinite(values[k])) v[cfg.metrics[k]] = values[k];
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    if (launch_failed)
      ++st.failed_launches;
    else if (got.empty())
      ++st.empty_ranges;
    // More than one range would mean another launch slipped into the window;
    // launch_mu rules that out, so keep only the first if it ever happens.
    if (!got.empty() && &cfg == cs->dram.get()) {
      RangeRecord& into = records.at(pend.plan.record);
      if (into.device == cs->device) {
        detail::merge_dram_pass(into, got.front(), pend.plan.instance);
        ++st.dram_passes;
      }
    } else if (!got.empty()) {
      RangeRecord rec;
      rec.kernel = pend.kernel;
      rec.nvtx_path = pend.nvtx;
      rec.instance = rec.dram_instance = pend.plan.instance;
      rec.device = cs->device;
      rec.values = std::move(got.front());
      rec.dram_replayed = cfg.passes > 1 && (rec.values.count(metric::kDramRead) || rec.values.count(metric::kDramWrite));
      records.push_back(std::move(rec));
      ++st.profiled;
      if (cs->dram) planner.await_dram(pend.kernel, records.size() - 1);
    }
    if (dropped > 0 && status.ok())
      status = CounterStatus::make(CounterProblem::Failed,
                                   fmt::format("{} range(s) dropped while decoding counters", dropped));
  }
}

void RangeProfiler::Impl::on_context_destroy(CUcontext ctx) {
  std::lock_guard<std::mutex> lock(launch_mu);
  auto it = ctxs.find(ctx);
  if (it == ctxs.end()) return;
  it->second->disable();  // while the context still exists
  ctxs.erase(it);
}

void RangeProfiler::Impl::handle(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) noexcept {
  if (tl_internal > 0) return;  // our own L2 clean (its launch would re-enter launch_mu)
  try {
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && (is_kernel_launch(cbid) || is_graph_launch(cbid))) {
      const auto* cb = static_cast<const CUpti_CallbackData*>(data);
      if (cb->callbackSite == CUPTI_API_ENTER) {
        if (active) on_enter(cbid, cb);
      } else {
        on_exit(cbid, cb);
      }
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
      on_context_destroy(static_cast<const CUpti_ResourceData*>(data)->context);
    }
  } catch (const std::exception& e) {
    fail(CounterStatus::make(CounterProblem::Failed, std::string("counter collection failed: ") + e.what()));
  } catch (...) {
    fail(CounterStatus::make(CounterProblem::Failed, "counter collection failed"));
  }
}

CounterStatus RangeProfiler::Impl::enable_callbacks(CUpti_SubscriberHandle sub) {
  for (CUpti_CallbackId id : kLaunchCbids)
    ROOFLINE_CUPTI_TRY(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, id));
  ROOFLINE_CUPTI_TRY(
      cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
  return CounterStatus::success();
}

void RangeProfiler::Impl::teardown_contexts() {
  std::lock_guard<std::mutex> lock(launch_mu);  // waits for a launch in flight
  ctxs.clear();                                 // disables each range profiler object
}

// ------------------------------------------------------------------ public

RangeProfiler::RangeProfiler(RangeProfilerOptions opts) : impl_(std::make_unique<Impl>()) {
  impl_->planner = detail::LaunchPlanner(opts.max_instances_per_kernel);
  impl_->opts = std::move(opts);
}

RangeProfiler::~RangeProfiler() {
  if (impl_->own_sub)
    (void)try_stop();
  else if (impl_->attached)
    (void)detach();
}

CounterStatus RangeProfiler::try_start() noexcept {
  Impl& im = *impl_;
  if (im.own_sub || im.attached)
    return CounterStatus::make(CounterProblem::Failed, "the range profiler is already running");
  auto fail_start = [&](CounterStatus s) {
    if (im.own_sub) {
      cuptiUnsubscribe(im.own_sub);
      im.own_sub = nullptr;
    }
    im.teardown_contexts();
    if (im.acquired) cupti::release_profiler();
    im.acquired = false;
    return s;
  };
  try {
    if (cuda::gpu_count() == 0)
      return CounterStatus::make(CounterProblem::NoGpu, "no GPU for counters: " + cuda::gpu_unavailable_reason(),
                                 "run on a machine with an NVIDIA GPU");
    if (im.opts.device < 0 || im.opts.device >= cuda::gpu_count())
      return CounterStatus::make(CounterProblem::BadOption, fmt::format("GPU {} does not exist", im.opts.device),
                                 fmt::format("use a device between 0 and {}", cuda::gpu_count() - 1));
    // Make the device's primary context current, then prepare it at once.
    int prev = 0;
    if (cudaGetDevice(&prev) != cudaSuccess) prev = im.opts.device;
    if (cudaSetDevice(im.opts.device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess)
      return fail_start(CounterStatus::make(CounterProblem::Failed,
                                            fmt::format("cannot create a CUDA context on GPU {}", im.opts.device)));
    const cupti::Driver* d = cupti::driver();
    CUcontext ctx = nullptr;
    if (!d || d->ctx_get_current(&ctx) != CUDA_SUCCESS || !ctx)
      return fail_start(CounterStatus::make(CounterProblem::Failed, "cannot find the current CUDA context"));
    if (prev != im.opts.device) cudaSetDevice(prev);

    // Subscribe first: it is how CUPTI tells that another tool (ncu, nsys, a
    // second profiler in this process) already holds it.
    if (CUptiResult r = cuptiSubscribe(&im.own_sub, trampoline, &im); r != CUPTI_SUCCESS) {
      im.own_sub = nullptr;
      return fail_start(cupti::status(r, "cuptiSubscribe"));
    }
    if (CounterStatus s = cupti::acquire_profiler(); !s.ok()) return fail_start(s);
    im.acquired = true;
    if (CounterStatus s = im.enable_callbacks(im.own_sub); !s.ok()) return fail_start(s);
    CounterStatus prepared;
    {
      std::lock_guard<std::mutex> lock(im.launch_mu);
      CtxState* cs = nullptr;
      prepared = im.ensure_context(ctx, cs);
    }
    if (!prepared.ok()) return fail_start(prepared);
    im.active = true;
    return CounterStatus::success();
  } catch (const std::exception& e) {
    return fail_start(
        CounterStatus::make(CounterProblem::Failed, std::string("range profiler start failed: ") + e.what()));
  }
}

void RangeProfiler::start() { try_start().throw_if_error(); }

CounterStatus RangeProfiler::try_stop() noexcept {
  Impl& im = *impl_;
  if (!im.own_sub) return status();
  im.active = false;
  im.teardown_contexts();
  cuptiUnsubscribe(im.own_sub);
  im.own_sub = nullptr;
  if (im.acquired) cupti::release_profiler();
  im.acquired = false;
  return status();
}

void RangeProfiler::stop() { try_stop().throw_if_error(); }

CounterStatus RangeProfiler::attach(void* subscriber) noexcept {
  Impl& im = *impl_;
  if (im.own_sub || im.attached)
    return CounterStatus::make(CounterProblem::Failed, "the range profiler is already running");
  if (!subscriber) return CounterStatus::make(CounterProblem::Failed, "attach() needs the host's CUPTI subscriber");
  try {
    ROOFLINE_STATUS_TRY(cupti::acquire_profiler());
    im.acquired = true;
    if (CounterStatus s = im.enable_callbacks(static_cast<CUpti_SubscriberHandle>(subscriber)); !s.ok()) {
      cupti::release_profiler();
      im.acquired = false;
      return s;
    }
    im.attached = true;
    im.active = true;  // contexts are prepared at their first launch
    return CounterStatus::success();
  } catch (const std::exception& e) {
    return CounterStatus::make(CounterProblem::Failed, std::string("range profiler attach failed: ") + e.what());
  }
}

void RangeProfiler::handle_callback(int domain, std::uint32_t cbid, const void* cbdata) noexcept {
  if (!impl_->attached || !cbdata) return;
  impl_->handle(static_cast<CUpti_CallbackDomain>(domain), static_cast<CUpti_CallbackId>(cbid), cbdata);
}

CounterStatus RangeProfiler::detach() noexcept {
  Impl& im = *impl_;
  if (!im.attached) return status();
  im.active = false;
  im.teardown_contexts();
  im.attached = false;
  if (im.acquired) cupti::release_profiler();
  im.acquired = false;
  return status();
}

bool RangeProfiler::active() const { return impl_->active; }

bool RangeProfiler::internal_call() noexcept { return tl_internal > 0; }

CounterStatus RangeProfiler::status() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->status;
}

std::vector<RangeRecord> RangeProfiler::records() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->records;
}

std::size_t RangeProfiler::record_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->records.size();
}

std::vector<KernelCounters> RangeProfiler::instance_counters() const {
  std::vector<KernelCounters> out;
  for (const auto& r : records()) out.push_back(derive(r.values, r.kernel, r.nvtx_path));
  return out;
}

std::vector<KernelCounters> RangeProfiler::kernel_counters() const { return aggregate(instance_counters()); }

std::vector<std::string> RangeProfiler::metrics() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->metrics_used;
}

std::vector<std::string> RangeProfiler::unavailable_metrics() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->unavailable;
}

RangeProfilerStats RangeProfiler::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  RangeProfilerStats st = impl_->st;
  st.dram_replayed = 0;
  for (const auto& r : impl_->records) st.dram_replayed += r.dram_replayed ? 1 : 0;
  return st;
}

}  // namespace roofline::prof
