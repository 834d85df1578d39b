#include "roofline/cuda/runtime.hpp"

#include <fmt/format.h>

#include "roofline/core/error.hpp"

#if ROOFLINE_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace roofline::cuda {

namespace {
struct Probe {
  int count = 0;
  std::string reason;
};

const Probe& probe() {
  static const Probe p = [] {
    Probe r;
#if ROOFLINE_HAVE_CUDA
    cudaError_t err = cudaGetDeviceCount(&r.count);
    if (err != cudaSuccess) {
      r.count = 0;
      if (err == cudaErrorNoDevice) r.reason = "no CUDA GPU is present";
      else if (err == cudaErrorInsufficientDriver)
        r.reason = "no NVIDIA driver is loaded (or it is older than this build's CUDA runtime)";
      else r.reason = fmt::format("the CUDA runtime reports {}", cudaGetErrorString(err));
      cudaGetLastError();
    } else if (r.count == 0) {
      r.reason = "no CUDA GPU is present";
    }
#else
    r.reason = "this roofline was built without CUDA (configure with the CUDA toolkit installed to get GPU support)";
#endif
    return r;
  }();
  return p;
}
}  // namespace

int gpu_count() { return probe().count; }
std::string gpu_unavailable_reason() { return probe().reason; }

void require_gpu(int index) {
  const Probe& p = probe();
  if (p.count == 0) throw Error(ErrorKind::Device, "no GPU available: " + p.reason, "use --device cpu for the CPU parts");
  if (index < 0 || index >= p.count)
    throw Error(ErrorKind::Usage, fmt::format("GPU {} does not exist: this machine has {} GPU{}", index, p.count,
                                              p.count == 1 ? "" : "s"),
                fmt::format("use --device gpu:0{}", p.count > 1 ? fmt::format("..gpu:{}", p.count - 1) : ""));
}

}  // namespace roofline::cuda
