// low-utilization-small-batch: the GPU is mostly idle and its kernels launch
// fewer thread blocks than it has SMs, so even while one runs most SMs wait
// (TensorBoard plugin: GPU utilization < 50% -> larger batch). NCCL's
// collective kernels are left out: their grids are their channels.
#include <algorithm>

#include "src/profiler/diagnosis/facts.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/profiler/aggregator.hpp"

namespace roofline::prof::diag {

std::optional<Diagnosis> small_batch(const Facts& c, const Rule& rule) {
  if (c.sm_count <= 0 || c.kernel_total_ns <= 0 || c.busy >= c.o.busy_low) return std::nullopt;
  double small_time = 0, unused = 0, known_time = 0;
  std::vector<const KernelAgg*> small;
  for (const auto& k : c.kernels) {
    if (k.blocks == 0) continue;  // launch configuration not recorded
    // A collective's few blocks move data over the link (NCCL takes one block per channel on purpose),
    // and much of its time is waiting for the other ranks: no batch size changes that.
    if (Aggregator::is_nccl_kernel(k.name)) continue;
    known_time += k.total_ns;
    if (k.blocks >= static_cast<std::uint64_t>(c.sm_count)) continue;
    small.push_back(&k);
    small_time += k.total_ns;
    // SM time left unused while the kernel runs (one block per SM at best).
    unused += k.total_ns * (1.0 - static_cast<double>(k.blocks) / c.sm_count);
  }
  if (known_time <= 0 || small_time / c.kernel_total_ns < c.o.small_grid_share) return std::nullopt;
  std::vector<std::string> top;
  for (size_t i = 0; i < std::min<size_t>(3, small.size()); ++i)
    top.push_back(small[i]->shown + " (" + count(small[i]->blocks) + " blocks, " + t(small[i]->total_ns) + ")");
  std::string ev = "GPU busy " + pct(c.busy) + " of its active window; " + pct(small_time / c.kernel_total_ns) +
                   " of kernel time is in kernels launching fewer blocks than the " + std::to_string(c.sm_count) +
                   " SMs: " + join(top, "; ") + "; about " + t(unused) + " of SM time left unused inside them";
  return c.make(rule, ev,
                "give each launch more work: a larger batch (scale the learning rate with it), batching requests at "
                "inference; independent small work can run concurrently on several CUDA streams",
                unused);
}

}  // namespace roofline::prof::diag
