// The PM sampler in a CPU-only build: it reports that PM sampling needs a
// CUDA build, through the same CounterStatus as the GPU build.
#include "roofline/profiler/pm_sampler.hpp"

namespace roofline::prof {

namespace {
CounterStatus no_cuda() {
  return CounterStatus::make(CounterProblem::Unsupported, "PM sampling needs a CUDA build of roofline",
                             "rebuild with the CUDA toolkit installed (ROOFLINE_CUDA=AUTO or ON)");
}
}  // namespace

struct PmSampler::Impl {
  PmSamplerOptions opts;
};

PmSampler::PmSampler(PmSamplerOptions opts) : impl_(std::make_unique<Impl>()) { impl_->opts = opts; }
PmSampler::~PmSampler() = default;
CounterStatus PmSampler::try_start() noexcept { return no_cuda(); }
void PmSampler::start() { no_cuda().throw_if_error(); }
void PmSampler::start(int device, std::uint64_t interval_ns) {
  impl_->opts.device = device;
  impl_->opts.interval_ns = interval_ns;
  start();
}
CounterStatus PmSampler::try_stop() noexcept { return CounterStatus::success(); }
CounterStatus PmSampler::try_stop_at_exit() noexcept { return CounterStatus::success(); }
void PmSampler::stop() {}
bool PmSampler::running() const { return false; }
std::vector<PmSample> PmSampler::samples() const { return {}; }
std::vector<PmSample> PmSampler::take_samples() { return {}; }
std::map<std::string, std::string> PmSampler::chosen_metrics() const { return {}; }
PmStats PmSampler::stats() const { return {}; }
CounterStatus PmSampler::status() const { return CounterStatus::success(); }
double PmSampler::interval_ns() const { return double(impl_->opts.interval_ns); }
std::vector<std::string> PmSampler::supported_metrics(int) {
  no_cuda().throw_if_error();
  return {};
}

}  // namespace roofline::prof
