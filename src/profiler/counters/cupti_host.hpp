// Private helpers shared by the range profiler and the PM sampler: CUPTI status
// conversion, process-wide profiler initialization, the profiler host object
// (metric validation, config images, evaluation) and the few driver functions
// we call, resolved from the already loaded libcuda. Included only from
// *_gpu.cpp files (it includes the CUPTI headers).
#pragma once
#include <cuda.h>
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "roofline/profiler/counter_status.hpp"

namespace roofline::prof::cupti {

// A zeroed CUPTI parameter struct with its structSize set (no -Wextra noise from
// brace-initializing only the first member).
template <class T>
T make_params(std::size_t struct_size) {
  T p{};
  p.structSize = struct_size;
  return p;
}
#define ROOFLINE_CUPTI_PARAMS(Type) ::roofline::prof::cupti::make_params<Type>(Type##_STRUCT_SIZE)

// A CUPTI result as a CounterStatus (success when r == CUPTI_SUCCESS).
CounterStatus status(CUptiResult r, const char* call);

// Returns the status from the enclosing function (which returns CounterStatus)
// when a CUPTI call fails.
#define ROOFLINE_CUPTI_TRY(call)                                                \
  do {                                                                          \
    CUptiResult r_ = (call);                                                    \
    if (r_ != CUPTI_SUCCESS) return ::roofline::prof::cupti::status(r_, #call); \
  } while (0)
#define ROOFLINE_STATUS_TRY(expr)                \
  do {                                           \
    ::roofline::prof::CounterStatus s_ = (expr); \
    if (!s_.ok()) return s_;                     \
  } while (0)

// cuptiProfilerInitialize, once per process (users are counted, but CUPTI is
// never deinitialized: restarting after cuptiProfilerDeInitialize is undocumented).
CounterStatus acquire_profiler();
void release_profiler() noexcept;

// Whether CUPTI's profiling `api` works on `device` (architecture, vGPU, MIG,
// confidential computing, ...); the status names what blocks it.
CounterStatus device_supported(int device, CUpti_Profiler_API api);
CounterStatus chip_name(int device, std::string& out);

// RAII owner of a CUpti_Profiler_Host_Object.
class HostObject {
 public:
  HostObject() = default;
  ~HostObject();
  HostObject(HostObject&& o) noexcept;
  HostObject& operator=(HostObject&& o) noexcept;
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  CounterStatus init(CUpti_ProfilerType type, const std::string& chip, const std::vector<std::uint8_t>& availability);
  void reset() noexcept;
  explicit operator bool() const { return obj_ != nullptr; }
  CUpti_Profiler_Host_Object* get() const { return obj_; }

  // Whether the chip knows the metric (name with rollup or submetric).
  bool knows(const std::string& metric) const;
  // Base metric names of all types (counter, ratio, throughput) for this profiler type.
  CounterStatus base_metrics(std::set<std::string>& out) const;
  CounterStatus add_metrics(const std::vector<std::string>& metrics);
  CounterStatus config_image(std::vector<std::uint8_t>& out) const;
  CounterStatus evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t index,
                         const std::vector<const char*>& names, std::vector<double>& values) const;
  CounterStatus evaluate(const std::uint8_t* image, std::size_t image_size, std::size_t index,
                         const std::vector<const char*>& names, std::vector<double>& values) const;

 private:
  CUpti_Profiler_Host_Object* obj_ = nullptr;
};

CounterStatus num_passes(std::vector<std::uint8_t>& config, std::size_t& passes);
// "dram__bytes_read.sum.per_second" -> "dram__bytes_read".
std::string base_name(const std::string& metric);

// Driver functions, looked up in the libcuda already loaded by the process (we
// do not link libcuda, so binaries still load on machines without a driver).
struct Driver {
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
  CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus*) = nullptr;
  CUresult (*stream_is_capturing_ptsz)(CUstream, CUstreamCaptureStatus*) = nullptr;
  // For the L2 clean before a profiled launch (l2_cleaner.hpp); null where missing.
  CUresult (*ctx_push_current)(CUcontext) = nullptr;  // cuCtxPushCurrent_v2
  CUresult (*ctx_pop_current)(CUcontext*) = nullptr;  // cuCtxPopCurrent_v2
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*ctx_get_device)(CUdevice*) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;                // cuMemAlloc_v2
  CUresult (*mem_free)(CUdeviceptr) = nullptr;                          // cuMemFree_v2
  CUresult (*memset_d8)(CUdeviceptr, unsigned char, size_t) = nullptr;  // cuMemsetD8_v2
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                            void**, void**) = nullptr;
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
  bool can_clean_l2() const;  // every function the L2 clean needs was found
};
// nullptr when libcuda is not loaded yet (no CUDA call has been made).
const Driver* driver() noexcept;

}  // namespace roofline::prof::cupti
