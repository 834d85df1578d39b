// Data-parallel training's host-side plan: see roofline/engine/data_parallel.hpp.
#include "roofline/engine/data_parallel.hpp"

#include <fmt/format.h>

#include "roofline/core/error.hpp"

namespace roofline::engine::dist {

std::vector<GradBucket> plan_buckets(const LayerGraph& g, const BucketPlanConfig& cfg) {
  if (cfg.cap_bytes <= 0 || cfg.first_cap_bytes <= 0)
    throw Error(ErrorKind::Input, "gradient buckets need positive caps", "give bucket caps of at least one byte");
  if (cfg.grad_dtype != DType::F32 && cfg.grad_dtype != DType::BF16 && cfg.grad_dtype != DType::F16)
    throw_unsupported(fmt::format("{} gradients", to_string(cfg.grad_dtype)), "all-reduce fp32, bf16 or fp16 gradients");
  const auto& params = g.params();
  const std::int64_t width = static_cast<std::int64_t>(dtype_size(cfg.grad_dtype));
  std::vector<GradBucket> out;
  GradBucket cur;
  for (int i = static_cast<int>(params.size()) - 1; i >= 0; --i) {
    const GraphParam& p = params[size_t(i)];
    if (!p.learnable) continue;  // BatchNorm's running statistics are buffers: no gradient
    const std::int64_t bytes = numel(p.shape) * width;
    const std::int64_t cap = out.empty() ? cfg.first_cap_bytes : cfg.cap_bytes;
    if (!cur.params.empty() && cur.bytes + bytes > cap) {
      out.push_back(std::move(cur));
      cur = GradBucket{};
    }
    cur.params.push_back(i);
    cur.bytes += bytes;
  }
  if (!cur.params.empty()) out.push_back(std::move(cur));
  return out;
}

}  // namespace roofline::engine::dist
