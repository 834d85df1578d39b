#include "counters_bridge.hpp"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cupti_collector.hpp"

#if ROOFLINE_INJECT_COUNTERS
#include "roofline/profiler/pm_sampler.hpp"
#include "roofline/profiler/pm_series.hpp"
#include "roofline/profiler/range_profiler.hpp"
#endif

namespace roofline::inject {

using prof::CuptiCollector;

namespace {

std::string env(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

bool wanted(const char* name) { return env(name) == "1"; }

}  // namespace

#if ROOFLINE_INJECT_COUNTERS

namespace {

std::unique_ptr<prof::RangeProfiler> g_rp;
std::unique_ptr<prof::PmSampler> g_pm;
prof::PmSeries* g_series = nullptr;  // never freed: used until the process ends
bool g_pm_wanted = false, g_pm_tried = false;

void forward(void* user, int domain, std::uint32_t cbid, const void* data) {
  static_cast<prof::RangeProfiler*>(user)->handle_callback(domain, cbid, data);
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

}  // namespace

void counters_init(void (*wake_for_pm)()) {
  CuptiCollector& c = CuptiCollector::instance();
  bool counters = wanted("ROOFLINE_COUNTERS"), pm = wanted("ROOFLINE_PM");
  if ((counters || pm) && !c.subscriber()) {
    c.add_warning("hardware counters were not read: CUPTI is not available in this process (see the other warning)");
    return;
  }
  int device = std::atoi(env("ROOFLINE_DEVICE", "0").c_str());
  if (counters) {
    prof::RangeProfilerOptions o;
    o.device = device;
    o.max_instances_per_kernel =
        static_cast<std::uint32_t>(std::strtoul(env("ROOFLINE_COUNTERS_LIMIT", "1").c_str(), nullptr, 10));
    o.metrics = split_commas(env("ROOFLINE_METRICS"));
    o.nvtx_path = [] { return CuptiCollector::instance().current_nvtx_path(); };
    g_rp = std::make_unique<prof::RangeProfiler>(o);
    c.set_forward(forward, g_rp.get());
    prof::CounterStatus s = g_rp->attach(c.subscriber());
    if (!s.ok()) {
      c.add_warning("per-kernel counters: " + s.message());
      c.set_forward(nullptr, nullptr);
      g_rp.reset();
    }
  }
  if (pm) {
    // PM sampling needs an initialised driver and a context: it starts on the
    // writer thread once the program has created one.
    g_pm_wanted = true;
    g_series = new prof::PmSeries();
    c.set_context_hook(wake_for_pm);
  }
}

void counters_start_pm() {
  if (!g_pm_wanted || g_pm_tried) return;
  g_pm_tried = true;
  prof::PmSamplerOptions o;
  o.device = std::atoi(env("ROOFLINE_DEVICE", "0").c_str());
  o.interval_ns = std::strtoull(env("ROOFLINE_PM_INTERVAL_NS", "100000").c_str(), nullptr, 10);
  g_pm = std::make_unique<prof::PmSampler>(o);
  prof::CounterStatus s = g_pm->try_start();
  if (!s.ok()) {
    CuptiCollector::instance().add_warning("PM sampling: " + s.message());
    g_pm.reset();
  }
}

void counters_fill(prof::ProfileData& p) {
  if (g_pm && g_series) g_series->add(g_pm->take_samples(), g_pm->interval_ns());
  if (g_series) {
    p.pm_samples = g_series->points();
    p.pm_interval_ns = g_series->step_ns();
  }
  if (g_rp) p.counters = g_rp->kernel_counters();
}

void counters_finish() {
  CuptiCollector& c = CuptiCollector::instance();
  if (g_pm) {
    prof::CounterStatus s = g_pm->try_stop();
    if (!s.ok()) c.add_warning("PM sampling: " + s.message());
    if (!g_pm->status().ok()) c.add_warning("PM sampling: " + g_pm->status().message());
    if (g_pm->stats().hw_overflow || g_pm->stats().dropped_samples > 0)
      c.add_warning("PM sampling lost " + std::to_string(g_pm->stats().dropped_samples) +
                    " samples (buffer full): use a longer --pm-interval");
  } else if (g_pm_wanted && !g_pm_tried) {
    c.add_warning("PM sampling never started: the program created no CUDA context");
  }
  if (g_rp) {
    prof::CounterStatus s = g_rp->detach();
    if (!s.ok()) c.add_warning("per-kernel counters: " + s.message());
    if (!g_rp->status().ok()) c.add_warning("per-kernel counters: " + g_rp->status().message());
    prof::RangeProfilerStats st = g_rp->stats();
    if (st.skipped_graphs + st.skipped_capture > 0)
      c.add_warning("per-kernel counters: kernels in CUDA graphs or stream capture were not measured (" +
                    std::to_string(st.skipped_graphs + st.skipped_capture) + " launches)");
  }
}

#else

void counters_init(void (*)()) {
  if (wanted("ROOFLINE_COUNTERS") || wanted("ROOFLINE_PM"))
    CuptiCollector::instance().add_warning(
        "this injection library was built without hardware-counter support: --counters and --pm-sampling were ignored");
}
void counters_start_pm() {}
void counters_fill(prof::ProfileData&) {}
void counters_finish() {}

#endif

}  // namespace roofline::inject
