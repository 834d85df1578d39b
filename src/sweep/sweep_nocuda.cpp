// run_gpu in a build without CUDA: says so.
#include "roofline/sweep/sweep.hpp"
#include "roofline/core/error.hpp"

namespace roofline::sweep {
std::vector<Point> run_gpu(int device, Variant v, const Options& o, const measure::Progress& progress) {
  return run_gpu(device, v, Kernel::Seed, o, progress);
}
void check_gpu_fit(int, Variant, Kernel, const Options&) {
  throw_unsupported("the GPU sweep needs CUDA, and this roofline was built without it",
                    "use --device cpu, or rebuild with the CUDA toolkit installed");
}
std::vector<Point> run_gpu(int, Variant, Kernel, const Options&, const measure::Progress&) {
  throw_unsupported("the GPU sweep needs CUDA, and this roofline was built without it",
                    "use --device cpu, or rebuild with the CUDA toolkit installed");
}
}  // namespace roofline::sweep
