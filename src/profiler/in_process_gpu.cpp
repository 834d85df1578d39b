#include <unistd.h>

#include <cstdint>
#include <mutex>

#include <cuda_runtime_api.h>

#include "roofline/cuda/runtime.hpp"
#include "src/profiler/cupti_collector.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/profiler/in_process.hpp"
#include "roofline/profiler/summary.hpp"

// NVTX finds its tool at the first NVTX call. roofline has no
// NVTX_INJECTION64_PATH, so it uses NVTX's static injection: this pointer
// (a strong definition overriding the weak null one in NVTX's headers) hands
// NVTX to CUPTI, whose callbacks then reach the tracer while it runs. Without
// a tracer CUPTI has no NVTX subscriber and the calls cost next to nothing.
extern "C" {
int InitializeInjectionNvtx2(const void* (*get_export_table)(std::uint32_t));  // in libcupti
__attribute__((visibility("default"))) int (*InitializeInjectionNvtx2_fnptr)(const void* (*)(std::uint32_t)) =
    &InitializeInjectionNvtx2;
}

namespace roofline::prof {

namespace {
std::mutex g_mu;
bool g_active = false;  // one tracer per process
}  // namespace

InProcessTracer::~InProcessTracer() {
  if (!running_) return;
  CuptiCollector::instance().stop();
  std::lock_guard<std::mutex> lock(g_mu);
  g_active = false;
}

void InProcessTracer::start(const Options& opt) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_active) throw_usage("a profiler trace is already running in this process", "stop it before starting another");
    g_active = true;
  }
  CuptiCollector& c = CuptiCollector::instance();
  c.clear();
  CollectorOptions co;
  co.api = opt.api;
  co.nvtx = opt.nvtx;
  co.trace_dir = opt.trace_dir;
  co.trace_limit = opt.trace_limit;
  co.command = "roofline (in-process)";
  if (!c.start(co)) {
    {
      std::lock_guard<std::mutex> lock(g_mu);
      g_active = false;
    }
    std::vector<std::string> w = c.warnings();
    std::string why = w.empty() ? std::string("CUPTI could not be started") : join(w, "; ");
    bool busy = contains(why, "another profiler");
    throw Error(ErrorKind::Device, "cannot trace the GPU work: " + why,
                busy ? "stop the other profiler (or run without --profile)"
                     : "check the NVIDIA driver (nvidia-smi) and that CUPTI matches it");
  }
  running_ = true;
}

ProfileData InProcessTracer::stop() {
  if (!running_) throw_usage("no profiler trace is running", "call start() first");
  CuptiCollector& c = CuptiCollector::instance();
  c.stop();  // flushes every buffer first
  ProfileData p = c.snapshot();
  running_ = false;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_active = false;
  }
  p.complete = true;
  p.command = "roofline (in-process)";
  p.exit_status = "in process";
  // CUPTI describes a device when a context is created on it, and in-process
  // tracing starts after that: name every visible GPU here, so that the
  // profile (and its kernels on the charts) belongs to its device.
  const int count = cuda::gpu_count();
  if (static_cast<int>(p.devices.size()) < count) {
    p.devices.resize(static_cast<size_t>(count));
    p.dram_peak_bps.resize(static_cast<size_t>(count), 0.0);  // unknown here
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (p.devices[static_cast<size_t>(i)].empty() && cudaGetDeviceProperties(&prop, i) == cudaSuccess)
      p.devices[static_cast<size_t>(i)] = prop.name;
  }
  fill_demangled(p);
  return p;
}

}  // namespace roofline::prof
