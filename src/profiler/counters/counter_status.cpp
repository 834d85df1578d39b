#include "roofline/profiler/counter_status.hpp"

#include <fmt/format.h>

namespace roofline::prof {

namespace {
// CUptiResult values (cupti_result.h, CUPTI 13); kept as plain numbers so this
// file builds without CUPTI. They are part of CUPTI's stable ABI.
constexpr int kInvalidDevice = 2;
constexpr int kInvalidContext = 3;
constexpr int kNotInitialized = 15;
constexpr int kInvalidMetricName = 17;
constexpr int kHardwareBusy = 26;
constexpr int kNotSupported = 27;
constexpr int kVirtualizedDeviceNotSupported = 33;
constexpr int kInsufficientPrivileges = 35;
constexpr int kOldProfilerApiInitialized = 36;
constexpr int kMultipleSubscribers = 39;
constexpr int kVirtualizedInsufficientPrivileges = 40;
constexpr int kConfidentialComputing = 41;
constexpr int kCmpDevice = 42;
constexpr int kMigDevice = 43;
constexpr int kSliDevice = 44;
constexpr int kWslDevice = 45;

std::string with_call(const std::string& text, const std::string& call, int code) {
  if (call.empty()) return text;
  return fmt::format("{} ({} returned CUPTI error {})", text, call, code);
}
}  // namespace

const char* to_string(CounterProblem p) noexcept {
  switch (p) {
    case CounterProblem::None:
      return "ok";
    case CounterProblem::NoGpu:
      return "no-gpu";
    case CounterProblem::NotPermitted:
      return "not-permitted";
    case CounterProblem::Busy:
      return "busy";
    case CounterProblem::Unsupported:
      return "unsupported";
    case CounterProblem::BadMetric:
      return "bad-metric";
    case CounterProblem::BadOption:
      return "bad-option";
    case CounterProblem::Failed:
      return "failed";
  }
  return "failed";
}

CounterStatus CounterStatus::make(CounterProblem p, std::string what, std::string hint, int code) {
  CounterStatus s;
  s.problem = p;
  s.what = std::move(what);
  s.hint = std::move(hint);
  s.code = code;
  return s;
}

Error CounterStatus::to_error() const {
  ErrorKind kind = ErrorKind::Device;
  switch (problem) {
    case CounterProblem::None:
      return Error(ErrorKind::Internal, "internal error: to_error() on a success status");
    case CounterProblem::BadMetric:
    case CounterProblem::BadOption:
      kind = ErrorKind::Usage;
      break;
    case CounterProblem::Unsupported:
      kind = ErrorKind::Unsupported;
      break;
    default:
      kind = ErrorKind::Device;
      break;
  }
  return Error(kind, what, hint);
}

void CounterStatus::throw_if_error() const {
  if (!ok()) throw to_error();
}

std::string CounterStatus::message() const {
  if (ok()) return "ok";
  return hint.empty() ? what : what + " (" + hint + ")";
}

CounterStatus counters_not_permitted(const std::string& call, int code) {
  return CounterStatus::make(
      CounterProblem::NotPermitted,
      with_call("GPU performance counters are not permitted for this user (ERR_NVGPUCTRPERM)", call, code),
      "run as root, or allow all users: put `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in a file "
      "under /etc/modprobe.d/ and reload the nvidia driver (or reboot); tracing carries on without counters. "
      "See https://developer.nvidia.com/ERR_NVGPUCTRPERM",
      code);
}

CounterStatus CounterStatus::from_cupti(int code, const std::string& call, const std::string& cupti_text) {
  if (code == 0) return success();
  const std::string text = cupti_text.empty() ? fmt::format("CUPTI error {}", code) : cupti_text;
  switch (code) {
    case kInsufficientPrivileges:
    case kVirtualizedInsufficientPrivileges:
      return counters_not_permitted(call, code);
    case kHardwareBusy:
    case kMultipleSubscribers:
    case kOldProfilerApiInitialized:
      return make(CounterProblem::Busy,
                  with_call("another profiler holds CUPTI or the GPU performance counters (" + text + ")", call, code),
                  "stop the other profiler (Nsight Compute/Systems, DCGM profiling such as dcgm-exporter, or another "
                  "CUPTI-based tool) or run without it; tracing carries on without counters",
                  code);
    case kInvalidMetricName:
      return make(CounterProblem::BadMetric, with_call("unknown metric for this GPU (" + text + ")", call, code),
                  "list this chip's metrics with `ncu --query-metrics --chip <chip>`", code);
    case kNotSupported:
    case kVirtualizedDeviceNotSupported:
    case kConfidentialComputing:
    case kCmpDevice:
    case kMigDevice:
    case kSliDevice:
    case kWslDevice:
      return make(CounterProblem::Unsupported,
                  with_call("GPU performance counters are not supported here (" + text + ")", call, code),
                  "counters need a Turing or newer GPU without MIG, SLI, vGPU without profiling, confidential "
                  "computing or WSL restrictions; tracing carries on without counters",
                  code);
    case kInvalidDevice:
    case kInvalidContext:
    case kNotInitialized:
      return make(CounterProblem::Failed,
                  with_call("CUPTI has no usable CUDA context or device (" + text + ")", call, code),
                  "make sure a CUDA context exists on the profiled GPU before counters start", code);
    default:
      return make(CounterProblem::Failed, with_call("CUPTI failed: " + text, call, code),
                  "rerun with fewer metrics; if it persists, report it with the GPU, driver and CUDA versions", code);
  }
}

}  // namespace roofline::prof
