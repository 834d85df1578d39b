// run_gpu in a build without CUDA: says so.
#include "roofline/bench/sweep.hpp"
#include "roofline/core/error.hpp"

#if !ROOFLINE_HAVE_CUDA
namespace roofline::bench::sweep {
std::vector<Point> run_gpu(int device, Variant v, const Options& o, const Progress& progress) {
  return run_gpu(device, v, Kernel::Seed, o, progress);
}
void check_gpu_fit(int, Variant, Kernel, const Options&) {
  throw_unsupported("the GPU sweep needs CUDA, and this roofline was built without it",
                    "use --device cpu, or rebuild with the CUDA toolkit installed");
}
std::vector<Point> run_gpu(int, Variant, Kernel, const Options&, const Progress&) {
  throw_unsupported("the GPU sweep needs CUDA, and this roofline was built without it",
                    "use --device cpu, or rebuild with the CUDA toolkit installed");
}
}  // namespace roofline::bench::sweep
#endif
