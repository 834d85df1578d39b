// Which PM-sampling metric measures each quantity, and how its value becomes a
// PmSample field. Plain C++ so the conversions are tested without a GPU.
#include <algorithm>
#include <cmath>

#include "roofline/profiler/pm_sampler.hpp"

namespace roofline::prof {

const char* to_string(PmQuantity q) noexcept {
  switch (q) {
    case PmQuantity::GrActive:
      return "gr_active";
    case PmQuantity::SmActive:
      return "sm_active";
    case PmQuantity::TensorActive:
      return "tensor_active";
    case PmQuantity::DramRead:
      return "dram_read";
    case PmQuantity::DramWrite:
      return "dram_write";
  }
  return "?";
}

const std::vector<PmMetricCandidate>& pm_metric_candidates() {
  // Names follow ncu's PM-sampling sections on GH100 (its "TriageCompute"
  // configuration lists gr__cycles_active, sm__cycles_active,
  // sm__pipe_tensor_cycles_active_realtime and dramc__read/write_throughput).
  // Counters first where the chip has them in PM sampling: they need no peak.
  static const std::vector<PmMetricCandidate> c = {
      {PmQuantity::GrActive, "gr__cycles_active.avg.pct_of_peak_sustained_elapsed", PmUnit::Percent},
      {PmQuantity::GrActive, "gr__cycles_active.sum.pct_of_peak_sustained_elapsed", PmUnit::Percent},
      {PmQuantity::GrActive, "gr__cycles_active.avg.per_cycle_elapsed", PmUnit::Fraction},
      {PmQuantity::SmActive, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed", PmUnit::Percent},
      {PmQuantity::SmActive, "sm__cycles_active.avg.per_cycle_elapsed", PmUnit::Fraction},
      {PmQuantity::TensorActive, "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
       PmUnit::Percent},
      {PmQuantity::TensorActive, "sm__pipe_tensor_op_hmma_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
       PmUnit::Percent},
      {PmQuantity::TensorActive, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", PmUnit::Percent},
      {PmQuantity::TensorActive, "sm__pipe_tensor_cycles_active_realtime.avg.per_cycle_elapsed", PmUnit::Fraction},
      {PmQuantity::DramRead, "dram__bytes_read.sum.per_second", PmUnit::BytesPerSecond},
      {PmQuantity::DramRead, "dram__bytes_read.sum", PmUnit::BytesPerSample},
      {PmQuantity::DramRead, "dramc__read_throughput.avg.pct_of_peak_sustained_elapsed", PmUnit::PercentOfDramPeak},
      {PmQuantity::DramWrite, "dram__bytes_write.sum.per_second", PmUnit::BytesPerSecond},
      {PmQuantity::DramWrite, "dram__bytes_write.sum", PmUnit::BytesPerSample},
      {PmQuantity::DramWrite, "dramc__write_throughput.avg.pct_of_peak_sustained_elapsed", PmUnit::PercentOfDramPeak},
  };
  return c;
}

PmSample to_pm_sample(std::uint64_t start_ns, std::uint64_t end_ns,
                      const std::vector<std::pair<PmMetricCandidate, double>>& values, double dram_peak_bps) {
  PmSample s;
  s.t_ns = start_ns;
  const double seconds = end_ns > start_ns ? double(end_ns - start_ns) * 1e-9 : 0;
  for (const auto& [cand, value] : values) {
    const double raw = std::isfinite(value) ? value : 0;  // a sample with no elapsed cycles evaluates to NaN
    double v = 0;
    switch (cand.unit) {
      case PmUnit::Percent:
        v = std::clamp(raw / 100.0, 0.0, 1.0);
        break;
      case PmUnit::Fraction:
        v = std::clamp(raw, 0.0, 1.0);
        break;
      case PmUnit::BytesPerSecond:
        v = std::max(raw, 0.0);
        break;
      case PmUnit::BytesPerSample:
        v = seconds > 0 ? std::max(raw, 0.0) / seconds : 0;
        break;
      case PmUnit::PercentOfDramPeak:
        v = std::max(raw, 0.0) / 100.0 * dram_peak_bps;
        break;
    }
    switch (cand.quantity) {
      case PmQuantity::GrActive:
        s.gr_active = v;
        break;
      case PmQuantity::SmActive:
        s.sm_active = v;
        break;
      case PmQuantity::TensorActive:
        s.tensor_active = v;
        break;
      case PmQuantity::DramRead:
        s.dram_read_bps = v;
        break;
      case PmQuantity::DramWrite:
        s.dram_write_bps = v;
        break;
    }
  }
  return s;
}

bool pm_sample_in_session(std::uint64_t start_ns, std::uint64_t session_start_ns, std::uint64_t interval_ns) {
  const std::uint64_t slack = std::max<std::uint64_t>(10000000ull, 10 * interval_ns);
  return start_ns + slack >= session_start_ns;
}

}  // namespace roofline::prof
