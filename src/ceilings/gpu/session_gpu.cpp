#include "src/ceilings/gpu/session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "roofline/core/strings.hpp"
#include "roofline/cuda/check.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "src/ceilings/gpu/gpu_reference.hpp"

namespace roofline::ceilings::gpu {

Session::Session(int device, const CeilingOptions& opts, const measure::Progress& progress, const FigureSink& sink)
    : device_(device),
      info_(hw::query_gpu(device)),
      sheet_(hw::reference_roofline(info_)),
      opts_(opts),
      progress_(progress),
      sink_(sink),
      timer_(device),
      probe_(1, "clock probe") {
  CUDA_CHECK(cudaGetDeviceProperties(&prop_, device));
  result_.device_name = info_.name;
}

void Session::say(const std::string& line) const {
  if (progress_) progress_(line);
}

void Session::warn(std::string text) {
  say("warning: " + text);
  result_.warnings.push_back(std::move(text));
}

std::function<double()> Session::probe_clock() {
  return [this] {
    ClockProbe p{};
    CUDA_CHECK(cudaMemcpy(&p, probe_.get(), sizeof p, cudaMemcpyDeviceToHost));
    return kernels::probe_mhz(p);
  };
}

double Session::time_once(const std::function<void(cudaStream_t)>& launch) {
  cuda::Event start, stop;
  start.record(stream());
  launch(stream());
  stop.record(stream());
  CUDA_CHECK_LAUNCH();
  stop.sync();
  return stop.since(start) * 1e-3;
}

size_t Session::free_memory() const {
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return free_b;
}

const measure::Figure* Session::find(const std::string& name) const {
  for (const auto& f : result_.figures)
    if (f.name == name) return &f;
  return nullptr;
}

namespace {
std::string format_value(double v, const std::string& unit) {
  if (unit == "s") return format_seconds(v);
  if (unit == "B") return format_bytes(v);
  return format_si(v, unit);
}
}  // namespace

void Session::add(measure::Figure f) {
  attach_reference(f, info_, sheet_);
  std::string line = fmt::format("  {:<22} {}", f.name, format_value(f.value, f.unit));
  if (f.reference && *f.reference > 0)
    line += fmt::format("  ({:.1f}% of {})", 100.0 * f.value / *f.reference,
                        starts_with(f.reference_label, "datasheet") ? "datasheet" : "derived");
  if (f.measurement.clock_median_mhz > 0) line += fmt::format("  @ {:.0f} MHz", f.measurement.clock_median_mhz);
  if (sink_) sink_(f);  // stored before it is printed, as the CPU ceilings
  say(line);
  result_.figures.push_back(std::move(f));
}

void Session::replace(measure::Figure f) {
  for (auto& old : result_.figures)
    if (old.name == f.name) {
      attach_reference(f, info_, sheet_);
      if (sink_) sink_(f);
      say(fmt::format("  {:<22} {} (replaces {})", f.name, format_value(f.value, f.unit),
                      format_value(old.value, old.unit)));
      old = std::move(f);
      return;
    }
  add(std::move(f));
}

void Session::fail(const std::string& name, const std::string& label, const std::string& what,
                   const std::string& hint, ErrorKind kind) {
  say(fmt::format("  {:<22} FAILED: {}", name, what));
  result_.failures.push_back({name, label, what, hint, kind});
}

void Session::attempt(const std::string& name, const std::string& label, const std::function<void()>& fn) {
  FigureFailure fail;
  fail.name = name;
  fail.label = label;
  try {
    fn();
    return;
  } catch (const Error& e) {
    fail.what = e.what();
    fail.hint = e.hint();
    fail.kind = e.kind();
  } catch (const std::exception& e) {
    fail.what = e.what();
    fail.kind = ErrorKind::Internal;
  }
  // A failed kernel may leave a sticky error; clear what can be cleared so the
  // next figure gets a fair try (a lost context fails again, and says so).
  cudaGetLastError();
  this->fail(fail.name, fail.label, fail.what, fail.hint, fail.kind);
}

long long scaled_count(long long count0, double t0, double target_s, long long max_count) {
  if (t0 <= 0) return std::min(count0 * 10, max_count);
  double c = std::ceil(static_cast<double>(count0) * target_s / t0);
  return std::clamp<long long>(static_cast<long long>(c), 1, max_count);
}

}  // namespace roofline::ceilings::gpu
