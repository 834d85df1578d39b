#include "roofline/engine/context.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <cstring>
#include <string>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/runtime.hpp"
#include "src/engine/cuda/cuda_api.hpp"

#if ROOFLINE_HAVE_CUDA
#include <nvtx3/nvToolsExt.h>
#endif

namespace roofline::engine {

const char* to_string(Backend b) {
  switch (b) {
    case Backend::CpuRef:
      return "cpu-ref";
    case Backend::Cpu:
      return "cpu";
    case Backend::Cuda:
      return "cuda";
  }
  return "?";
}

Backend parse_backend(const std::string& s) {
  std::string v = to_lower(trim(s));
  if (v == "cpu-ref" || v == "ref") return Backend::CpuRef;
  if (v == "cpu") return Backend::Cpu;
  if (v == "cuda" || v == "gpu") return Backend::Cuda;
  throw_usage(fmt::format("unknown backend '{}'", s), "use cpu-ref, cpu or cuda");
}

Context::Context(Backend backend, int gpu) : backend_(backend), gpu_(gpu) {
  if (backend_ == Backend::Cuda) {
#if ROOFLINE_HAVE_CUDA
    cuda::require_gpu(gpu);
#endif
    cuda_ = detail::create_cuda_state(gpu);
  }
}

Context::~Context() = default;

Tensor Context::empty(const Shape& shape, DType dtype, const char* what) const {
  return Tensor::empty(shape, dtype, device(), what);
}

void Context::copy_async(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) const {
  if (bytes == 0) return;
  if (!dst_device.is_cuda() && !src_device.is_cuda()) {
    std::memmove(dst, src, bytes);
    return;
  }
  ROOFLINE_ASSERT(cuda_ != nullptr, "a GPU copy needs a Cuda context");
  detail::cuda_copy_async(cuda_.get(), dst, dst_device.is_cuda(), src, src_device.is_cuda(), bytes);
}

void Context::memset_async(void* dst, int value, size_t bytes) const {
  if (bytes == 0) return;
  if (cuda_)
    detail::cuda_memset_async(cuda_.get(), dst, value, bytes);
  else
    std::memset(dst, value, bytes);
}

void Context::synchronize() const {
  if (cuda_) detail::cuda_synchronize(cuda_.get());
}

void* Context::stream() const { return cuda_ ? detail::cuda_stream(cuda_.get()) : nullptr; }

size_t Context::scratch_bytes() const { return cuda_ ? detail::cuda_scratch_bytes(cuda_.get()) : 0; }

int Context::cpu_threads() const { return omp_get_max_threads(); }

namespace {
thread_local std::vector<std::string> t_ranges;  // NvtxRange names open on this thread, outermost first
}  // namespace

std::string current_nvtx_range() { return t_ranges.empty() ? std::string() : t_ranges.back(); }

NvtxRange::NvtxRange(const char* name) {
  t_ranges.emplace_back(name);
#if ROOFLINE_HAVE_CUDA
  nvtxRangePushA(name);
#else
  (void)name;
#endif
}

NvtxRange::~NvtxRange() {
  t_ranges.pop_back();
#if ROOFLINE_HAVE_CUDA
  nvtxRangePop();
#endif
}

}  // namespace roofline::engine
