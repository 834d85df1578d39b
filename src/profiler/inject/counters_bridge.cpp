#include "src/profiler/inject/counters_bridge.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "roofline/profiler/pm_sampler.hpp"
#include "roofline/profiler/pm_series.hpp"
#include "roofline/profiler/range_profiler.hpp"
#include "src/profiler/cupti_collector.hpp"

namespace roofline::inject {

using prof::CuptiCollector;

namespace {

// Never freed: no destructor may run into CUPTI during the process's exit
// (static destructors run after the CUDA runtime and CUPTI began tearing down).
prof::RangeProfiler* g_rp = nullptr;
prof::PmSampler* g_pm = nullptr;
prof::PmSeries* g_series = nullptr;
// g_pm is started when the first context appears and stopped at exit or when a
// context is destroyed, each on the program's thread; g_pm_mu also covers the
// writer thread's snapshots of its samples.
std::mutex g_pm_mu;
bool g_pm_wanted = false, g_pm_tried = false, g_pm_done = false;
prof::PmSamplerOptions g_pm_options;  // from the configuration, set in counters_init
std::atomic<bool> g_rp_pending{false};  // attach at the first context
bool g_child = false;  // a forked child: g_pm_mu may have been held by the parent's writer at the fork

void forward(void* user, int domain, std::uint32_t cbid, const void* data) {
  static_cast<prof::RangeProfiler*>(user)->handle_callback(domain, cbid, data);
}

void stop_pm_at_exit();

// Starts PM sampling if asked, once (on_context_created, on the program's thread).
void start_pm() {
  std::lock_guard<std::mutex> lock(g_pm_mu);
  if (!g_pm_wanted || g_pm_tried || g_pm_done) return;
  g_pm_tried = true;
  auto* pm = new prof::PmSampler(g_pm_options);
  prof::CounterStatus s = pm->try_start();
  if (!s.ok()) {
    CuptiCollector::instance().add_warning("PM sampling did not start (tracing goes on without it): " + s.message());
    return;  // pm is leaked: its destructor would call into CUPTI
  }
  g_pm = pm;
}

// Inside CUPTI's context-created callback, on the creating thread, before
// the context's first launch. The range profiler is attached here rather
// than in InitializeInjection: cuptiProfilerInitialize fails (CUPTI error
// 999) while the driver is still inside cuInit, which is where
// InitializeInjection runs.
void on_context_created() {
  if (g_rp && g_rp_pending.exchange(false)) {
    CuptiCollector& c = CuptiCollector::instance();
    prof::CounterStatus s = g_rp->attach(c.subscriber());
    if (!s.ok()) c.add_warning("per-kernel counters: " + s.message());
  }
  if (g_pm_wanted) {
    // The sampler starts here, on the program's thread, before its first
    // launch, and the exit handler is registered after the start. Starting it
    // on the writer thread instead let a short program exit during the start:
    // exit handlers run newest first, so the static destructors of the
    // profiler libraries the start had just loaded (libnvperf_host) ran while
    // the start was still inside them (SIGSEGV in NVPW_CUDA_LoadDriver in
    // every run of the 0.4 s profile_target on an H100). Registered after
    // them, stop_pm_at_exit runs before them.
    static std::once_flag started;
    std::call_once(started, [] {
      start_pm();
      std::atexit(stop_pm_at_exit);
    });
  }
}

// Stops PM sampling (its decode thread, the hardware, CUPTI's PM object)
// while CUDA is still whole: before a context is destroyed, and at exit
// before the CUDA runtime's own exit handlers. The samples are kept for the
// final profile. Waits at most ~2 s for a start in progress on the writer
// thread (which could itself be waiting on CUPTI inside this callback).
void stop_pm(const char* when, bool at_exit) {
  if (g_child) return;
  std::unique_lock<std::mutex> lock(g_pm_mu, std::defer_lock);
  for (int i = 0; i < 200 && !lock.try_lock(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!lock.owns_lock()) return;
  g_pm_done = true;  // no (re)start after this
  if (!g_pm || !g_pm->running()) return;
  // At exit the sampler is stopped and drained but not disabled: the process's
  // end frees it (PmSampler::try_stop_at_exit says why).
  prof::CounterStatus s = at_exit ? g_pm->try_stop_at_exit() : g_pm->try_stop();
  if (!s.ok()) CuptiCollector::instance().add_warning(std::string("PM sampling (stopped ") + when + "): " + s.message());
}

void on_context_destroy() { stop_pm("as a CUDA context was destroyed", false); }

void stop_pm_at_exit() { stop_pm("at exit", true); }

}  // namespace

void counters_init(const prof::InjectionConfig& config) {
  CuptiCollector& c = CuptiCollector::instance();
  if ((config.counters || config.pm_sampling) && !c.subscriber()) {
    c.add_warning("hardware counters were not read: CUPTI is not available in this process (see the other warning)");
    return;
  }
  if (!config.counters && !config.pm_sampling) return;
  if (config.counters) {
    prof::RangeProfilerOptions o;
    o.device = config.device;
    o.max_instances_per_kernel = config.counters_limit;
    o.metrics = config.metrics;
    o.nvtx_path = [] { return CuptiCollector::instance().current_nvtx_path(); };
    g_rp = new prof::RangeProfiler(o);
    // The forward is set once, before any callback it needs is enabled; the
    // range profiler ignores callbacks until it is attached.
    c.set_forward(forward, g_rp);
    g_rp_pending.store(true);
  }
  if (config.pm_sampling) {
    // PM sampling needs an initialised driver and a context: it starts in the
    // context-created callback (on_context_created).
    g_pm_options.device = config.device;
    g_pm_options.interval_ns = config.pm_interval_ns;
    g_pm_wanted = true;
    g_series = new prof::PmSeries();
  }
  c.set_context_destroy_hook(on_context_destroy);
  c.set_context_hook(on_context_created);
}


void counters_fill(prof::ProfileData& p) {
  if (!g_child) {
    std::lock_guard<std::mutex> lock(g_pm_mu);
    if (g_pm && g_series) g_series->add(g_pm->take_samples(), g_pm->interval_ns());
  }
  if (g_series) {
    p.pm_samples = g_series->points();
    p.pm_interval_ns = g_series->step_ns();
  }
  if (g_rp) p.counters = g_rp->kernel_counters();
}

void counters_finish() {
  CuptiCollector& c = CuptiCollector::instance();
  stop_pm("at exit", true);
  {
    std::lock_guard<std::mutex> lock(g_pm_mu);
    if (g_pm) {
      if (!g_pm->status().ok()) c.add_warning("PM sampling: " + g_pm->status().message());
      if (const prof::PmStats st = g_pm->stats(); st.image_overruns > 0)
        c.add_warning("PM sampling: CUPTI wrote up to " + std::to_string(st.image_overrun_bytes) +
                      " bytes past the counter-data image in " + std::to_string(st.image_overruns) +
                      " decode(s); roofline's guard after the image caught them (docs/profiler.md)");
      if (g_pm->stats().hw_overflow || g_pm->stats().dropped_samples > 0)
        c.add_warning("PM sampling lost " + std::to_string(g_pm->stats().dropped_samples) +
                      " samples (buffer full): use a longer --pm-interval");
    } else if (g_pm_wanted && !g_pm_tried) {
      c.add_warning("PM sampling never started: the program created no CUDA context");
    }
  }
  if (g_rp) {
    if (g_rp_pending.load()) {
      c.add_warning("per-kernel counters: none read, the program created no CUDA context");
      return;
    }
    prof::CounterStatus s = g_rp->detach();
    if (!s.ok()) c.add_warning("per-kernel counters: " + s.message());
    if (!g_rp->status().ok()) c.add_warning("per-kernel counters: " + g_rp->status().message());
    prof::RangeProfilerStats st = g_rp->stats();
    if (std::string w = prof::replay_dram_write_warning(st, g_rp->metrics()); !w.empty()) c.add_warning(w);
    if (st.skipped_graphs + st.skipped_capture > 0)
      c.add_warning("per-kernel counters: kernels in CUDA graphs or stream capture were not measured (" +
                    std::to_string(st.skipped_graphs + st.skipped_capture) + " launches)");
  }
}

void counters_child_after_fork() {
  // The parent's sampler thread and counters are not the child's: the child
  // reports neither (no CUPTI call is made in it).
  g_child = true;
  g_pm = nullptr;
  g_series = nullptr;
  g_rp = nullptr;
  g_pm_wanted = false;
  g_pm_done = true;
  g_rp_pending.store(false);
}

}  // namespace roofline::inject
