#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>
#include <type_traits>
#include <utility>

#include "src/profiler/counters/cupti_host.hpp"

namespace roofline::prof::cupti {

CounterStatus status(CUptiResult r, const char* call) {
  if (r == CUPTI_SUCCESS) return CounterStatus::success();
  const char* text = nullptr;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS) text = nullptr;
  // Strip the argument list: "cuptiRangeProfilerStart(&p)" -> "cuptiRangeProfilerStart".
  std::string name = call ? call : "";
  if (auto paren = name.find('('); paren != std::string::npos) name.resize(paren);
  return CounterStatus::from_cupti(static_cast<int>(r), name, text ? text : "");
}

// ------------------------------------------------------------- initialization

namespace {
std::mutex g_init_mu;
bool g_initialized = false;
int g_init_users = 0;
}  // namespace

// Initialized once per process and never deinitialized: the range profiler and
// the PM sampler start and stop several times in one process (the tests do), and
// CUPTI does not document re-initialization after cuptiProfilerDeInitialize.
CounterStatus acquire_profiler() {
  std::lock_guard<std::mutex> lock(g_init_mu);
  if (!g_initialized) {
    auto p = ROOFLINE_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
    ROOFLINE_CUPTI_TRY(cuptiProfilerInitialize(&p));
    g_initialized = true;
  }
  ++g_init_users;
  return CounterStatus::success();
}

void release_profiler() noexcept {
  std::lock_guard<std::mutex> lock(g_init_mu);
  if (g_init_users > 0) --g_init_users;
}

CounterStatus device_supported(int device, CUpti_Profiler_API api) {
  auto p = ROOFLINE_CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
  p.cuDevice = static_cast<CUdevice>(device);
  p.api = api;
  ROOFLINE_CUPTI_TRY(cuptiProfilerDeviceSupported(&p));
  if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return CounterStatus::success();
  std::string why;
  auto note = [&](CUpti_Profiler_Support_Level level, const char* what) {
    if (level == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED || level == CUPTI_PROFILER_CONFIGURATION_DISABLED)
      why += (why.empty() ? "" : ", ") + std::string(what) +
             (level == CUPTI_PROFILER_CONFIGURATION_DISABLED ? " (disabled)" : "");
  };
  note(p.architecture, "GPU architecture older than Turing");
  note(p.sli, "SLI");
  note(p.vGpu, "vGPU without profiling enabled");
  note(p.confidentialCompute, "confidential computing");
  note(p.cmp, "crypto-mining processor");
  note(p.wsl, "WSL");
  if (why.empty()) why = "reason not reported";
  return CounterStatus::make(
      CounterProblem::Unsupported,
      fmt::format("GPU {} does not support CUPTI {}: {}", device,
                  api == CUPTI_PROFILER_PM_SAMPLING ? "PM sampling" : "range profiling", why),
      "use a Turing or newer GPU without these restrictions; tracing carries on without counters");
}

CounterStatus chip_name(int device, std::string& out) {
  auto p = ROOFLINE_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  p.deviceIndex = static_cast<size_t>(device);
  ROOFLINE_CUPTI_TRY(cuptiDeviceGetChipName(&p));
  out = p.pChipName ? p.pChipName : "";
  return CounterStatus::success();
}

// ------------------------------------------------------------- host object

HostObject::~HostObject() { reset(); }
HostObject::HostObject(HostObject&& o) noexcept : obj_(std::exchange(o.obj_, nullptr)) {}
HostObject& HostObject::operator=(HostObject&& o) noexcept {
  if (this != &o) {
    reset();
    obj_ = std::exchange(o.obj_, nullptr);
  }
  return *this;
}

void HostObject::reset() noexcept {
  if (!obj_) return;
  auto p = ROOFLINE_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
  p.pHostObject = obj_;
  (void)cuptiProfilerHostDeinitialize(&p);
  obj_ = nullptr;
}

CounterStatus HostObject::init(CUpti_ProfilerType type, const std::string& chip,
                               const std::vector<std::uint8_t>& availability) {
  reset();
  auto p = ROOFLINE_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  p.profilerType = type;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  ROOFLINE_CUPTI_TRY(cuptiProfilerHostInitialize(&p));
  obj_ = p.pHostObject;
  return CounterStatus::success();
}

bool HostObject::knows(const std::string& metric) const {
  auto p = ROOFLINE_CUPTI_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
  p.pHostObject = obj_;
  p.pMetricName = metric.c_str();
  return cuptiProfilerHostGetMetricProperties(&p) == CUPTI_SUCCESS;
}

CounterStatus HostObject::base_metrics(std::set<std::string>& out) const {
  for (CUpti_MetricType t : {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
    auto p = ROOFLINE_CUPTI_PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params);
    p.pHostObject = obj_;
    p.metricType = t;
    ROOFLINE_CUPTI_TRY(cuptiProfilerHostGetBaseMetrics(&p));
    for (size_t i = 0; i < p.numMetrics; ++i)
      if (p.ppMetricNames && p.ppMetricNames[i]) out.insert(p.ppMetricNames[i]);
  }
  return CounterStatus::success();
}

CounterStatus HostObject::add_metrics(const std::vector<std::string>& metrics) {
  std::vector<const char*> names;
  names.reserve(metrics.size());
  for (const auto& m : metrics) names.push_back(m.c_str());
  auto p = ROOFLINE_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  p.pHostObject = obj_;
  p.ppMetricNames = names.data();
  p.numMetrics = names.size();
  ROOFLINE_CUPTI_TRY(cuptiProfilerHostConfigAddMetrics(&p));
  return CounterStatus::success();
}

CounterStatus HostObject::config_image(std::vector<std::uint8_t>& out) const {
  auto sp = ROOFLINE_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  sp.pHostObject = obj_;
  ROOFLINE_CUPTI_TRY(cuptiProfilerHostGetConfigImageSize(&sp));
  out.assign(sp.configImageSize, 0);
  auto ip = ROOFLINE_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  ip.pHostObject = obj_;
  ip.configImageSize = out.size();
  ip.pConfigImage = out.data();
  ROOFLINE_CUPTI_TRY(cuptiProfilerHostGetConfigImage(&ip));
  return CounterStatus::success();
}

CounterStatus HostObject::evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t index,
                                   const std::vector<const char*>& names, std::vector<double>& values) const {
  return evaluate(counter_data.data(), counter_data.size(), index, names, values);
}

CounterStatus HostObject::evaluate(const std::uint8_t* image, std::size_t image_size, std::size_t index,
                                   const std::vector<const char*>& names, std::vector<double>& values) const {
  values.assign(names.size(), 0.0);
  auto p = ROOFLINE_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  p.pHostObject = obj_;
  p.pCounterDataImage = image;
  p.counterDataImageSize = image_size;
  p.rangeIndex = index;
  p.ppMetricNames = const_cast<const char**>(names.data());
  p.numMetrics = names.size();
  p.pMetricValues = values.data();
  ROOFLINE_CUPTI_TRY(cuptiProfilerHostEvaluateToGpuValues(&p));
  return CounterStatus::success();
}

CounterStatus num_passes(std::vector<std::uint8_t>& config, std::size_t& passes) {
  auto p = ROOFLINE_CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  p.configImageSize = config.size();
  p.pConfigImage = config.data();
  ROOFLINE_CUPTI_TRY(cuptiProfilerHostGetNumOfPasses(&p));
  passes = p.numOfPasses;
  return CounterStatus::success();
}

std::string base_name(const std::string& metric) {
  auto dot = metric.find('.');
  return dot == std::string::npos ? metric : metric.substr(0, dot);
}

// ------------------------------------------------------------- driver

bool Driver::can_clean_l2() const {
  return ctx_push_current && ctx_pop_current && ctx_synchronize && ctx_get_device && device_get_attribute &&
         mem_alloc && mem_free && memset_d8 && module_load_data && module_unload && module_get_function &&
         launch_kernel;
}

const Driver* driver() noexcept {
  static std::mutex mu;
  static Driver d;
  static bool ok = false;
  std::lock_guard<std::mutex> lock(mu);
  if (ok) return &d;
  // RTLD_NOLOAD: only find the libcuda the CUDA runtime (or the application) loaded.
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return nullptr;
  d.ctx_get_current = reinterpret_cast<decltype(d.ctx_get_current)>(dlsym(h, "cuCtxGetCurrent"));
  d.stream_is_capturing = reinterpret_cast<decltype(d.stream_is_capturing)>(dlsym(h, "cuStreamIsCapturing"));
  d.stream_is_capturing_ptsz =
      reinterpret_cast<decltype(d.stream_is_capturing_ptsz)>(dlsym(h, "cuStreamIsCapturing_ptsz"));
  auto sym = [h](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
  };
  sym(d.ctx_push_current, "cuCtxPushCurrent_v2");
  sym(d.ctx_pop_current, "cuCtxPopCurrent_v2");
  sym(d.ctx_synchronize, "cuCtxSynchronize");
  sym(d.ctx_get_device, "cuCtxGetDevice");
  sym(d.device_get_attribute, "cuDeviceGetAttribute");
  sym(d.mem_alloc, "cuMemAlloc_v2");
  sym(d.mem_free, "cuMemFree_v2");
  sym(d.memset_d8, "cuMemsetD8_v2");
  sym(d.module_load_data, "cuModuleLoadData");
  sym(d.module_unload, "cuModuleUnload");
  sym(d.module_get_function, "cuModuleGetFunction");
  sym(d.launch_kernel, "cuLaunchKernel");
  sym(d.get_error_name, "cuGetErrorName");
  dlclose(h);  // drops our reference only; the library stays loaded for the process
  if (!d.ctx_get_current || !d.stream_is_capturing) return nullptr;
  if (!d.stream_is_capturing_ptsz) d.stream_is_capturing_ptsz = d.stream_is_capturing;
  ok = true;
  return &d;
}

}  // namespace roofline::prof::cupti
