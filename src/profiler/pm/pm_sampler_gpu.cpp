// CUPTI PM sampling (cupti_pmsampling.h, CUDA 13). The flow follows NVIDIA's
// pm_sampling sample: enable on the device, set a single-pass config with a
// time-interval trigger, start, decode the hardware buffer into a counter-data
// image from a background thread, evaluate each completed sample with the
// profiler host API, re-initialize the image, and at the end stop, decode what
// is left and disable. Facts the sizing relies on (measured by others on H100,
// CUDA 13.3, see docs/counters.md): a counter-data image that fills during a
// decode loses samples, so it is sized for several decode periods; a hardware
// buffer overflow is permanent, so the buffer is sized for several periods too.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "src/profiler/counters/cupti_host.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/profiler/pm_sampler.hpp"

namespace roofline::prof {

namespace {
constexpr std::size_t kMaxImageSamples = 65536;
constexpr std::size_t kHwBytesPerSample = 8192;  // measured 4-7 KiB with four metrics
constexpr std::size_t kMinHwBuffer = 32ull << 20, kMaxHwBuffer = 512ull << 20;
constexpr std::size_t kImageGuard = 1ull << 20;  // canary bytes after the counter-data image
constexpr std::uint8_t kCanary = 0xA5;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

struct PmSampler::Impl {
  PmSamplerOptions opts;
  bool running = false;
  bool acquired = false;
  CUpti_PmSampling_Object* obj = nullptr;
  cupti::HostObject host;
  std::vector<std::uint8_t> config;
  // The counter-data image: image_bytes for CUPTI, then kImageGuard bytes of
  // canary (kCanary) that CUPTI is never told about; check_guard() reports any
  // byte written past the image (docs/profiler.md, "PM sampling and the heap").
  std::vector<std::uint8_t> counter_data;
  std::size_t image_bytes = 0;
  void check_guard();
  std::vector<PmMetricCandidate> chosen;
  std::vector<std::string> chosen_names;
  std::vector<const char*> names;
  double dram_peak = 0;
  std::uint64_t decode_period_ns = 0;
  std::uint64_t session_start_ns = 0;  // CUPTI timestamp taken before enabling

  std::thread thread;
  std::mutex cv_mu;
  std::condition_variable cv;
  bool stop_requested = false;

  mutable std::mutex data_mu;  // samples, st, status
  std::vector<PmSample> samples;
  PmStats st;
  CounterStatus status;

  CounterStatus choose_metrics(const std::string& chip, const std::vector<std::uint8_t>& avail);
  CounterStatus decode_once();
  void run();
  void keep(std::vector<PmSample>&& got, std::uint64_t empty, std::uint64_t stale);
  void release() noexcept;
};

CounterStatus PmSampler::Impl::choose_metrics(const std::string& chip, const std::vector<std::uint8_t>& avail) {
  cupti::HostObject probe;
  ROOFLINE_STATUS_TRY(probe.init(CUPTI_PROFILER_TYPE_PM_SAMPLING, chip, avail));
  std::set<std::string> base;
  ROOFLINE_STATUS_TRY(probe.base_metrics(base));
  // Greedy, in preference order: a candidate joins when its base metric is
  // offered, the host accepts the set and the set still needs one pass.
  std::vector<PmMetricCandidate> accepted;
  for (PmQuantity q : {PmQuantity::GrActive, PmQuantity::SmActive, PmQuantity::TensorActive, PmQuantity::DramRead,
                       PmQuantity::DramWrite}) {
    for (const auto& c : pm_metric_candidates()) {
      if (c.quantity != q || !base.count(cupti::base_name(c.metric))) continue;
      std::vector<std::string> trial;
      for (const auto& a : accepted) trial.push_back(a.metric);
      trial.push_back(c.metric);
      cupti::HostObject h;
      if (!h.init(CUPTI_PROFILER_TYPE_PM_SAMPLING, chip, avail).ok() || !h.add_metrics(trial).ok()) continue;
      std::vector<std::uint8_t> img;
      std::size_t passes = 0;
      if (!h.config_image(img).ok() || !cupti::num_passes(img, passes).ok() || passes != 1) continue;
      accepted.push_back(c);
      break;
    }
  }
  if (accepted.empty())
    return CounterStatus::make(
        CounterProblem::Unsupported,
        fmt::format("PM sampling on {} offers none of the utilization metrics roofline reads", chip),
        "run `roofline` tests' counters.sh to list what this chip supports");
  chosen = accepted;
  for (const auto& c : chosen) chosen_names.push_back(c.metric);
  for (const auto& n : chosen_names) names.push_back(n.c_str());
  ROOFLINE_STATUS_TRY(host.init(CUPTI_PROFILER_TYPE_PM_SAMPLING, chip, avail));
  ROOFLINE_STATUS_TRY(host.add_metrics(chosen_names));
  ROOFLINE_STATUS_TRY(host.config_image(config));
  return CounterStatus::success();
}

void PmSampler::Impl::keep(std::vector<PmSample>&& got, std::uint64_t empty, std::uint64_t stale) {
  std::lock_guard<std::mutex> lock(data_mu);
  st.empty_samples += empty;
  st.stale_samples += stale;
  samples.insert(samples.end(), got.begin(), got.end());
  st.samples += got.size();
  if (opts.max_kept_samples > 0 && samples.size() > opts.max_kept_samples) {
    const std::size_t drop = samples.size() - opts.max_kept_samples;
    samples.erase(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(drop));
    st.dropped_samples += drop;
  }
}

void PmSampler::Impl::check_guard() {
  const std::uint8_t* g = counter_data.data() + image_bytes;
  std::size_t last = 0;
  for (std::size_t i = 0; i < kImageGuard; ++i)
    if (g[i] != kCanary) last = i + 1;
  if (last == 0) return;
  std::fill(counter_data.begin() + static_cast<std::ptrdiff_t>(image_bytes), counter_data.end(), kCanary);
  std::lock_guard<std::mutex> lock(data_mu);
  ++st.image_overruns;
  st.image_overrun_bytes = std::max<std::uint64_t>(st.image_overrun_bytes, last);
}

CounterStatus PmSampler::Impl::decode_once() {
  const double t0 = now_seconds();
  CounterStatus result;
  // A decode that fills the image leaves records behind: decode again (bounded).
  for (int round = 0; round < 8; ++round) {
    auto dp = ROOFLINE_CUPTI_PARAMS(CUpti_PmSampling_DecodeData_Params);
    dp.pPmSamplingObject = obj;
    dp.pCounterDataImage = counter_data.data();
    dp.counterDataImageSize = image_bytes;
    CUptiResult r = cuptiPmSamplingDecodeData(&dp);
    check_guard();  // the one call that writes the image
    if (r == CUPTI_ERROR_OUT_OF_MEMORY || dp.overflow) {
      std::lock_guard<std::mutex> lock(data_mu);
      st.hw_overflow = true;
      result = CounterStatus::make(CounterProblem::Failed,
                                   "the PM-sampling hardware buffer overflowed: samples after that point are lost",
                                   "use a longer sampling interval (--pm-interval) or a larger hardware buffer");
      break;
    }
    if (r != CUPTI_SUCCESS) {
      result = cupti::status(r, "cuptiPmSamplingDecodeData");
      break;
    }
    auto ip = ROOFLINE_CUPTI_PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params);
    ip.pCounterDataImage = counter_data.data();
    ip.counterDataImageSize = image_bytes;
    if (CUptiResult e = cuptiPmSamplingGetCounterDataInfo(&ip); e != CUPTI_SUCCESS) {
      result = cupti::status(e, "cuptiPmSamplingGetCounterDataInfo");
      break;
    }
    std::vector<PmSample> got;
    got.reserve(ip.numCompletedSamples);
    std::uint64_t empty = 0, stale = 0;
    std::vector<double> values;
    std::vector<std::pair<PmMetricCandidate, double>> pairs;
    for (std::size_t i = 0; i < ip.numCompletedSamples; ++i) {
      auto sp = ROOFLINE_CUPTI_PARAMS(CUpti_PmSampling_CounterData_GetSampleInfo_Params);
      sp.pPmSamplingObject = obj;
      sp.pCounterDataImage = counter_data.data();
      sp.counterDataImageSize = image_bytes;
      sp.sampleIndex = i;
      if (CUptiResult e = cuptiPmSamplingCounterDataGetSampleInfo(&sp); e != CUPTI_SUCCESS) {
        result = cupti::status(e, "cuptiPmSamplingCounterDataGetSampleInfo");
        break;
      }
      // Samples without timestamps (after a lost stretch) or of zero length (right
      // after stop) cover no time.
      if (sp.endTimestamp <= sp.startTimestamp) {
        ++empty;
        continue;
      }
      // A start time from before the session (seen on the first sample after a
      // start): the sample's counts cover an unknown stretch.
      if (!pm_sample_in_session(sp.startTimestamp, session_start_ns, opts.interval_ns)) {
        ++stale;
        continue;
      }
      result = host.evaluate(counter_data.data(), image_bytes, i, names, values);
      if (!result.ok()) break;
      pairs.clear();
      for (std::size_t k = 0; k < chosen.size(); ++k) pairs.emplace_back(chosen[k], values[k]);
      got.push_back(to_pm_sample(sp.startTimestamp, sp.endTimestamp, pairs, dram_peak));
    }
    keep(std::move(got), empty, stale);
    if (!result.ok()) break;
    auto rp = ROOFLINE_CUPTI_PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params);
    rp.pPmSamplingObject = obj;
    rp.counterDataSize = image_bytes;
    rp.pCounterData = counter_data.data();
    if (CUptiResult e = cuptiPmSamplingCounterDataImageInitialize(&rp); e != CUPTI_SUCCESS) {
      result = cupti::status(e, "cuptiPmSamplingCounterDataImageInitialize");
      break;
    }
    if (dp.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) break;
    std::lock_guard<std::mutex> lock(data_mu);
    ++st.image_full;
  }
  std::lock_guard<std::mutex> lock(data_mu);
  ++st.decodes;
  st.decode_seconds += now_seconds() - t0;
  if (!result.ok() && status.ok()) status = result;
  return result;
}

void PmSampler::Impl::run() {
  std::unique_lock<std::mutex> lock(cv_mu);
  while (!stop_requested) {
    cv.wait_for(lock, std::chrono::nanoseconds(decode_period_ns), [&] { return stop_requested; });
    if (stop_requested) break;
    lock.unlock();
    CounterStatus s = decode_once();
    lock.lock();
    if (!s.ok()) break;  // status() reports it; stop() still stops and disables
  }
}

void PmSampler::Impl::release() noexcept {
  if (obj) {
    auto p = ROOFLINE_CUPTI_PARAMS(CUpti_PmSampling_Disable_Params);
    p.pPmSamplingObject = obj;
    (void)cuptiPmSamplingDisable(&p);  // teardown
    obj = nullptr;
  }
  host.reset();
  if (acquired) cupti::release_profiler();
  acquired = false;
}

// ------------------------------------------------------------------ public

PmSampler::PmSampler(PmSamplerOptions opts) : impl_(std::make_unique<Impl>()) { impl_->opts = opts; }

PmSampler::~PmSampler() { (void)try_stop(); }

CounterStatus PmSampler::try_start() noexcept {
  Impl& im = *impl_;
  const PmSamplerOptions& o = im.opts;
  if (im.running) return CounterStatus::make(CounterProblem::Failed, "PM sampling is already running");
  if (o.interval_ns < 1000 || o.interval_ns > 1000000000ull)
    return CounterStatus::make(CounterProblem::BadOption,
                               fmt::format("PM-sampling interval {} ns is out of range", o.interval_ns),
                               "use an interval between 1 us and 1 s (e.g. 100us)");
  if (o.decode_period_ms < 1 || o.decode_period_ms > 10000)
    return CounterStatus::make(CounterProblem::BadOption,
                               fmt::format("PM-sampling decode period {} ms is out of range", o.decode_period_ms),
                               "use 1 to 10000 ms");
  try {
    if (cuda::gpu_count() == 0)
      return CounterStatus::make(CounterProblem::NoGpu, "no GPU for PM sampling: " + cuda::gpu_unavailable_reason(),
                                 "run on a machine with an NVIDIA GPU");
    if (o.device < 0 || o.device >= cuda::gpu_count())
      return CounterStatus::make(CounterProblem::BadOption, fmt::format("GPU {} does not exist", o.device),
                                 fmt::format("use a device between 0 and {}", cuda::gpu_count() - 1));
    im.chosen.clear();
    im.chosen_names.clear();
    im.names.clear();
    {
      std::lock_guard<std::mutex> lock(im.data_mu);
      im.samples.clear();
      im.st = {};
      im.status = {};
    }
    ROOFLINE_STATUS_TRY(cupti::acquire_profiler());
    im.acquired = true;
    auto fail = [&](CounterStatus s) {
      im.release();
      return s;
    };
    if (CounterStatus s = cupti::device_supported(o.device, CUPTI_PROFILER_PM_SAMPLING); !s.ok()) return fail(s);
    std::string chip;
    if (CounterStatus s = cupti::chip_name(o.device, chip); !s.ok()) return fail(s);
    std::vector<std::uint8_t> avail;
    {
      auto p = ROOFLINE_CUPTI_PARAMS(CUpti_PmSampling_GetCounterAvailability_Params);
      p.deviceIndex = static_cast<size_t>(o.device);
      if (CUptiResult r = cuptiPmSamplingGetCounterAvailability(&p); r != CUPTI_SUCCESS)
        return fail(cupti::status(r, "cuptiPmSamplingGetCounterAvailability"));
      avail.assign(p.counterAvailabilityImageSize, 0);
      p.pCounterAvailabilityImage = avail.data();
      if (CUptiResult r = cuptiPmSamplingGetCounterAvailability(&p); r != CUPTI_SUCCESS)
        return fail(cupti::status(r, "cuptiPmSamplingGetCounterAvailability"));
    }
    if (CounterStatus s = im.choose_metrics(chip, avail); !s.ok()) return fail(s);

    im.dram_peak = o.dram_peak_bps;
    if (im.dram_peak <= 0) {
      int khz = 0, bits = 0;
      if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, o.device) == cudaSuccess &&
          cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, o.device) == cudaSuccess)
        im.dram_peak = 2.0 * khz * 1e3 * bits / 8.0;  // two transfers per memory clock
    }

    // The image holds four decode periods of samples (a full image loses samples);
    // very short intervals shorten the decode period instead of growing the image.
    std::uint64_t period_ns = std::uint64_t(o.decode_period_ms) * 1000000ull;
    period_ns = std::min<std::uint64_t>(period_ns, (kMaxImageSamples / 4) * o.interval_ns);
    im.decode_period_ns = std::max<std::uint64_t>(period_ns, 1000000ull);
    const std::size_t per_period = static_cast<std::size_t>(im.decode_period_ns / o.interval_ns) + 1;
    const std::size_t image_samples =
        std::min(kMaxImageSamples, std::max(o.min_image_samples, 4 * per_period + 256));
    std::size_t hw = o.hw_buffer_bytes;
    if (hw == 0) hw = std::clamp(4 * per_period * kHwBytesPerSample, kMinHwBuffer, kMaxHwBuffer);

    if (CUptiResult r = cuptiGetTimestamp(&im.session_start_ns); r != CUPTI_SUCCESS)
      return fail(cupti::status(r, "cuptiGetTimestamp"));
    {
      auto p = ROOFLINE_CUPTI_PARAMS(CUpti_PmSampling_Enable_Params);
      p.deviceIndex = static_cast<size_t>(o.device);
      CUptiResult r = cuptiPmSamplingEnable(&p);
      if (r == CUPTI_ERROR_INVALID_OPERATION)
        return fail(CounterStatus::make(
            CounterProblem::Busy, fmt::format("PM sampling is already enabled on GPU {} by another client", o.device),
            "stop the other profiler; tracing carries on without PM sampling", int(r)));
      if (r != CUPTI_SUCCESS) return fail(cupti::status(r, "cuptiPmSamplingEnable"));
      im.obj = p.pPmSamplingObject;
    }
    {
      auto p = ROOFLINE_CUPTI_PARAMS(CUpti_PmSampling_SetConfig_Params);
      p.pPmSamplingObject = im.obj;
      p.configSize = im.config.size();
      p.pConfig = im.config.data();
      p.hardwareBufferSize = hw;
      p.samplingInterval = o.interval_ns;
      p.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
      // Keep the oldest: an overflow is reported instead of silently overwriting.
      p.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
      CUptiResult r = cuptiPmSamplingSetConfig(&p);
      if (r == CUPTI_ERROR_NOT_SUPPORTED)
        return fail(CounterStatus::make(
            CounterProblem::Unsupported,
            fmt::format("GPU {} ({}) cannot sample performance counters at a time interval", o.device, chip),
            "time-based PM sampling needs GA10x (Ampere consumer) or newer; GA100 and Turing lack it", int(r)));
      if (r != CUPTI_SUCCESS) return fail(cupti::status(r, "cuptiPmSamplingSetConfig"));
    }
    {
      auto p = ROOFLINE_CUPTI_PARAMS(CUpti_PmSampling_GetCounterDataSize_Params);
      p.pPmSamplingObject = im.obj;
      p.pMetricNames = im.names.data();
      p.numMetrics = im.names.size();
      p.maxSamples = static_cast<std::uint32_t>(image_samples);
      if (CUptiResult r = cuptiPmSamplingGetCounterDataSize(&p); r != CUPTI_SUCCESS)
        return fail(cupti::status(r, "cuptiPmSamplingGetCounterDataSize"));
      im.image_bytes = p.counterDataSize;
      im.counter_data.assign(p.counterDataSize + kImageGuard, kCanary);
      std::fill(im.counter_data.begin(), im.counter_data.begin() + static_cast<std::ptrdiff_t>(p.counterDataSize), 0);
      auto ip = ROOFLINE_CUPTI_PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params);
      ip.pPmSamplingObject = im.obj;
      ip.counterDataSize = im.image_bytes;
      ip.pCounterData = im.counter_data.data();
      if (CUptiResult r = cuptiPmSamplingCounterDataImageInitialize(&ip); r != CUPTI_SUCCESS)
        return fail(cupti::status(r, "cuptiPmSamplingCounterDataImageInitialize"));
    }
    {
      auto p = ROOFLINE_CUPTI_PARAMS(CUpti_PmSampling_Start_Params);
      p.pPmSamplingObject = im.obj;
      if (CUptiResult r = cuptiPmSamplingStart(&p); r != CUPTI_SUCCESS)
        return fail(cupti::status(r, "cuptiPmSamplingStart"));
    }
    im.stop_requested = false;
    im.running = true;
    im.thread = std::thread([&im] { im.run(); });
    return CounterStatus::success();
  } catch (const std::exception& e) {
    im.release();
    return CounterStatus::make(CounterProblem::Failed, std::string("PM sampling failed to start: ") + e.what());
  }
}

void PmSampler::start() { try_start().throw_if_error(); }

void PmSampler::start(int device, std::uint64_t interval_ns) {
  impl_->opts.device = device;
  impl_->opts.interval_ns = interval_ns;
  start();
}

CounterStatus PmSampler::try_stop() noexcept { return stop_impl(/*release=*/true); }

CounterStatus PmSampler::try_stop_at_exit() noexcept { return stop_impl(/*release=*/false); }

CounterStatus PmSampler::stop_impl(bool release) noexcept {
  Impl& im = *impl_;
  if (!im.running) return status();
  {
    std::lock_guard<std::mutex> lock(im.cv_mu);
    im.stop_requested = true;
  }
  im.cv.notify_all();
  if (im.thread.joinable()) im.thread.join();
  CounterStatus result;
  auto p = ROOFLINE_CUPTI_PARAMS(CUpti_PmSampling_Stop_Params);
  p.pPmSamplingObject = im.obj;
  if (CUptiResult r = cuptiPmSamplingStop(&p); r != CUPTI_SUCCESS) result = cupti::status(r, "cuptiPmSamplingStop");
  bool healthy = false;
  {
    std::lock_guard<std::mutex> lock(im.data_mu);
    healthy = im.status.ok();
  }
  if (result.ok() && healthy) (void)im.decode_once();  // what the last period left in the buffer
  if (release) im.release();
  im.running = false;
  std::lock_guard<std::mutex> lock(im.data_mu);
  if (!result.ok() && im.status.ok()) im.status = result;
  return im.status;
}

void PmSampler::stop() { try_stop().throw_if_error(); }

bool PmSampler::running() const { return impl_->running; }

std::vector<PmSample> PmSampler::samples() const {
  std::lock_guard<std::mutex> lock(impl_->data_mu);
  return impl_->samples;
}

std::vector<PmSample> PmSampler::take_samples() {
  std::lock_guard<std::mutex> lock(impl_->data_mu);
  std::vector<PmSample> out;
  out.swap(impl_->samples);
  return out;
}

std::map<std::string, std::string> PmSampler::chosen_metrics() const {
  std::map<std::string, std::string> m;
  for (PmQuantity q : {PmQuantity::GrActive, PmQuantity::SmActive, PmQuantity::TensorActive, PmQuantity::DramRead,
                       PmQuantity::DramWrite})
    m[to_string(q)] = "";
  for (const auto& c : impl_->chosen) m[to_string(c.quantity)] = c.metric;
  return m;
}

PmStats PmSampler::stats() const {
  std::lock_guard<std::mutex> lock(impl_->data_mu);
  return impl_->st;
}

CounterStatus PmSampler::status() const {
  std::lock_guard<std::mutex> lock(impl_->data_mu);
  return impl_->status;
}

double PmSampler::interval_ns() const { return double(impl_->opts.interval_ns); }

std::vector<std::string> PmSampler::supported_metrics(int device) {
  cuda::require_gpu(device);
  cupti::acquire_profiler().throw_if_error();
  struct Release {
    ~Release() { cupti::release_profiler(); }
  } release;
  std::string chip;
  cupti::chip_name(device, chip).throw_if_error();
  std::vector<std::uint8_t> avail;
  auto p = ROOFLINE_CUPTI_PARAMS(CUpti_PmSampling_GetCounterAvailability_Params);
  p.deviceIndex = static_cast<size_t>(device);
  cupti::status(cuptiPmSamplingGetCounterAvailability(&p), "cuptiPmSamplingGetCounterAvailability").throw_if_error();
  avail.assign(p.counterAvailabilityImageSize, 0);
  p.pCounterAvailabilityImage = avail.data();
  cupti::status(cuptiPmSamplingGetCounterAvailability(&p), "cuptiPmSamplingGetCounterAvailability").throw_if_error();
  cupti::HostObject host;
  host.init(CUPTI_PROFILER_TYPE_PM_SAMPLING, chip, avail).throw_if_error();
  std::set<std::string> base;
  host.base_metrics(base).throw_if_error();
  return {base.begin(), base.end()};
}

}  // namespace roofline::prof
