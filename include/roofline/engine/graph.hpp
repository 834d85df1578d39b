// Work captured once on a Cuda context's stream and replayed with one launch
// (a CUDA graph). The captured work must not allocate or synchronise; the
// engine's ops and Network guarantee both. NVTX ranges are recorded only
// while capturing, so run without graphs (--no-graphs) under a profiler that
// maps kernels to layers by NVTX.
#pragma once
#include <functional>
#include <memory>

#include "roofline/engine/context.hpp"

namespace roofline::engine {

class StepGraph {
 public:
  StepGraph() = default;
  // Captures `work` (which enqueues on ctx's stream). Throws
  // Error(Unsupported) for CPU contexts and builds without CUDA.
  void capture(Context& ctx, const std::function<void()>& work);
  void launch(Context& ctx) const;
  bool ready() const { return impl_ != nullptr; }
  void reset() { impl_.reset(); }

 private:
  std::shared_ptr<void> impl_;
};

}  // namespace roofline::engine
