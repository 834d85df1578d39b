// L2 cleaning before a profiled launch. Evict reads a zeroed scratch buffer of
// 4 x L2 with ordinary loads: every line L2 held is evicted, so lines earlier
// work left dirty are written back to DRAM now, outside the profiled range, and
// L2 is left holding clean lines of the scratch (their eviction costs no DRAM
// write). Memset writes 2 x L2 instead: it also pushes the earlier dirty lines
// out, but leaves up to an L2 of its own dirty lines behind; it is kept to
// compare with on the device (tools/checks/counters.sh).
#include <fmt/format.h>

#include "src/profiler/counters/cupti_host.hpp"
#include "src/profiler/counters/l2_cleaner.hpp"
#include "src/profiler/counters/l2_evict_ptx.hpp"

namespace roofline::prof::detail {

namespace {

constexpr std::size_t kSinkBytes = 256;  // after the scratch: where the evict kernel would store (never does)
constexpr unsigned kThreads = 256;
constexpr unsigned kBlocksPerSm = 4;

std::string cu_error(const cupti::Driver& d, CUresult r) {
  const char* name = nullptr;
  if (d.get_error_name && d.get_error_name(r, &name) == CUDA_SUCCESS && name) return name;
  return fmt::format("CUDA driver error {}", int(r));
}

CounterStatus failed(const cupti::Driver& d, const char* call, CUresult r) {
  return CounterStatus::make(
      CounterProblem::Failed,
      fmt::format("cannot clean L2 before profiled kernels: {} returned {}", call, cu_error(d, r)),
      "profiling carries on without it, so DRAM write bytes may include lines earlier kernels "
      "left dirty in L2 (16-18 MB per kernel on an H100); the clean needs 4 x L2 of free "
      "device memory per context");
}

// Pushes a context for the scope of the object.
struct CtxScope {
  const cupti::Driver& d;
  bool pushed = false;
  CtxScope(const cupti::Driver& drv, CUcontext ctx) : d(drv) { pushed = d.ctx_push_current(ctx) == CUDA_SUCCESS; }
  ~CtxScope() {
    CUcontext c = nullptr;
    if (pushed) (void)d.ctx_pop_current(&c);
  }
};

}  // namespace

CounterStatus L2Cleaner::init(CUcontext ctx, L2Clean mode) {
  release();
  if (mode == L2Clean::None) return CounterStatus::success();
  const cupti::Driver* d = cupti::driver();
  if (!d || !d->can_clean_l2())
    return CounterStatus::make(CounterProblem::Failed,
                               "cannot clean L2 before profiled kernels: the CUDA driver lacks a function it needs",
                               "update the NVIDIA driver; DRAM write bytes may include earlier kernels' dirty lines");
  CtxScope scope(*d, ctx);
  if (!scope.pushed)
    return CounterStatus::make(CounterProblem::Failed, "cannot clean L2 before profiled kernels: no CUDA context");
  CUdevice dev = 0;
  int l2 = 0, sms = 0;
  if (CUresult r = d->ctx_get_device(&dev); r != CUDA_SUCCESS) return failed(*d, "cuCtxGetDevice", r);
  if (CUresult r = d->device_get_attribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev); r != CUDA_SUCCESS)
    return failed(*d, "cuDeviceGetAttribute(L2_CACHE_SIZE)", r);
  if (CUresult r = d->device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev); r != CUDA_SUCCESS)
    return failed(*d, "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)", r);
  if (l2 <= 0 || sms <= 0) return CounterStatus::success();  // no L2 to clean
  const std::size_t bytes = std::size_t(mode == L2Clean::Evict ? 4 : 2) * std::size_t(l2);
  CUdeviceptr p = 0;
  if (CUresult r = d->mem_alloc(&p, bytes + kSinkBytes); r != CUDA_SUCCESS)
    return failed(*d, fmt::format("cuMemAlloc({} bytes)", bytes + kSinkBytes).c_str(), r);
  ctx_ = ctx;
  scratch_ = p;
  bytes_ = bytes;
  // Zeroed, so the evict kernel's XOR is 0 and it never stores; the memset's own
  // dirty lines are evicted by the first clean, before any range.
  if (CUresult r = d->memset_d8(p, 0, bytes + kSinkBytes); r != CUDA_SUCCESS) {
    release();
    return failed(*d, "cuMemsetD8", r);
  }
  if (mode == L2Clean::Evict) {
    CUmodule m = nullptr;
    if (CUresult r = d->module_load_data(&m, l2_evict_ptx()); r != CUDA_SUCCESS) {
      release();
      return failed(*d, "cuModuleLoadData(roofline_l2_evict)", r);
    }
    module_ = m;
    if (CUresult r = d->module_get_function(&fn_, m, kL2EvictKernel); r != CUDA_SUCCESS) {
      release();
      return failed(*d, "cuModuleGetFunction(roofline_l2_evict)", r);
    }
    grid_ = unsigned(sms) * kBlocksPerSm;
  }
  if (CUresult r = d->ctx_synchronize(); r != CUDA_SUCCESS) {
    release();
    return failed(*d, "cuCtxSynchronize", r);
  }
  mode_ = mode;
  return CounterStatus::success();
}

CounterStatus L2Cleaner::clean() {
  if (mode_ == L2Clean::None) return CounterStatus::success();
  const cupti::Driver* d = cupti::driver();
  if (!d) return CounterStatus::make(CounterProblem::Failed, "cannot clean L2: the CUDA driver is not loaded");
  CtxScope scope(*d, ctx_);
  if (!scope.pushed) return CounterStatus::make(CounterProblem::Failed, "cannot clean L2: cannot enter the context");
  // Earlier kernels must finish first, or their last writes land in L2 after the clean.
  if (CUresult r = d->ctx_synchronize(); r != CUDA_SUCCESS) return failed(*d, "cuCtxSynchronize", r);
  if (mode_ == L2Clean::Evict) {
    CUdeviceptr src = scratch_, sink = scratch_ + bytes_;
    unsigned long long words = bytes_ / 16;
    unsigned never = 1;
    void* args[] = {&src, &words, &never, &sink};
    if (CUresult r = d->launch_kernel(fn_, grid_, 1, 1, kThreads, 1, 1, 0, nullptr, args, nullptr); r != CUDA_SUCCESS)
      return failed(*d, "cuLaunchKernel(roofline_l2_evict)", r);
  } else {
    if (CUresult r = d->memset_d8(scratch_, 0, bytes_); r != CUDA_SUCCESS) return failed(*d, "cuMemsetD8", r);
  }
  if (CUresult r = d->ctx_synchronize(); r != CUDA_SUCCESS) return failed(*d, "cuCtxSynchronize", r);
  return CounterStatus::success();
}

void L2Cleaner::release() noexcept {
  const cupti::Driver* d = cupti::driver();
  if (d && ctx_ && (scratch_ || module_)) {
    CtxScope scope(*d, ctx_);
    if (scope.pushed) {
      if (module_) (void)d->module_unload(module_);
      if (scratch_) (void)d->mem_free(scratch_);  // teardown: nothing to do if it fails
    }
  }
  module_ = nullptr;
  fn_ = nullptr;
  scratch_ = 0;
  bytes_ = 0;
  ctx_ = nullptr;
  mode_ = L2Clean::None;
}

}  // namespace roofline::prof::detail
