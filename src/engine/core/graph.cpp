#include "roofline/engine/graph.hpp"

#include "roofline/core/error.hpp"
#include "src/engine/cuda/cuda_api.hpp"

namespace roofline::engine {

void StepGraph::capture(Context& ctx, const std::function<void()>& work) {
  if (!ctx.is_cuda()) throw_unsupported("graph capture needs a GPU context", "run the CPU backends without graphs");
  impl_.reset();
  impl_ = detail::cuda_capture(ctx.cuda(), work);
}

void StepGraph::launch(Context& ctx) const {
  ROOFLINE_ASSERT(impl_ != nullptr, "launch of a graph that was not captured");
  detail::cuda_launch(ctx.cuda(), impl_.get());
}

}  // namespace roofline::engine
