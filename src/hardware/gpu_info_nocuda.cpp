// GPU queries in a CPU-only build: there are no GPUs to describe.
#include "roofline/cuda/runtime.hpp"
#include "roofline/hardware/gpu_info.hpp"

namespace roofline::hw {

GpuInfo query_gpu(int ordinal) {
  cuda::require_gpu(ordinal);  // throws: no GPU support in this build
  return {};
}
std::vector<GpuInfo> query_gpus() { return {}; }

}  // namespace roofline::hw
