// The range profiler in a CPU-only build: every entry point reports that
// counters need a CUDA build, through the same CounterStatus as the GPU build.
#include "roofline/profiler/range_profiler.hpp"

namespace roofline::prof {

namespace {
CounterStatus no_cuda() {
  return CounterStatus::make(CounterProblem::Unsupported, "hardware counters need a CUDA build of roofline",
                             "rebuild with the CUDA toolkit installed (ROOFLINE_CUDA=AUTO or ON)");
}
}  // namespace

struct RangeProfiler::Impl {
  RangeProfilerOptions opts;
};

RangeProfiler::RangeProfiler(RangeProfilerOptions opts) : impl_(std::make_unique<Impl>()) {
  impl_->opts = std::move(opts);
}
RangeProfiler::~RangeProfiler() = default;
CounterStatus RangeProfiler::try_start() noexcept { return no_cuda(); }
CounterStatus RangeProfiler::try_stop() noexcept { return CounterStatus::success(); }
void RangeProfiler::start() { no_cuda().throw_if_error(); }
void RangeProfiler::stop() {}
CounterStatus RangeProfiler::attach(void*) noexcept { return no_cuda(); }
void RangeProfiler::handle_callback(int, std::uint32_t, const void*) noexcept {}
CounterStatus RangeProfiler::detach() noexcept { return CounterStatus::success(); }
bool RangeProfiler::active() const { return false; }
CounterStatus RangeProfiler::status() const { return CounterStatus::success(); }
std::vector<RangeRecord> RangeProfiler::records() const { return {}; }
std::size_t RangeProfiler::record_count() const { return 0; }
std::vector<KernelCounters> RangeProfiler::instance_counters() const { return {}; }
std::vector<KernelCounters> RangeProfiler::kernel_counters() const { return {}; }
std::vector<std::string> RangeProfiler::metrics() const { return {}; }
std::vector<std::string> RangeProfiler::unavailable_metrics() const { return {}; }
RangeProfilerStats RangeProfiler::stats() const { return {}; }
bool RangeProfiler::internal_call() noexcept { return false; }

}  // namespace roofline::prof
