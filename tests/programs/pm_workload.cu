// pm_workload: checks PM sampling against what is known about a workload.
//
//   pm_workload --duty D [--seconds S] [--kernel-us U] [--interval-us I]
//       Runs kernels that each keep every SM busy for U microseconds, with the
//       GPU idle in between so that it is busy a fraction D of the time, while
//       PM sampling runs. Prints the busy fraction measured with CUDA events
//       (GPU time / span) next to the mean PM-sampled GR and SM activity over
//       the same window.
//   pm_workload --overhead [--runs R] [--seconds S] [--interval-us I]
//       Times a steady mix of compute and memory kernels with and without PM
//       sampling (alternating, R runs each) and prints the medians.
//   pm_workload --list-metrics
//       The base metrics PM sampling supports on GPU 0's chip.
//
// Output: JSON on stdout. Exit 0, or 2 on bad arguments, 4 on a CUDA or CUPTI failure.
#include <cuda_runtime.h>
#include <cupti_activity.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/programs/known_flops.hpp"
#include "roofline/profiler/pm_sampler.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
#define PW_CHECK(call) check((call), #call)

// Keeps every resident warp issuing until `ns` nanoseconds of global time have passed.
__global__ void pw_spin(std::uint64_t ns, float* sink) {
  std::uint64_t t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  float a = threadIdx.x;
  do {
#pragma unroll
    for (int i = 0; i < 32; ++i) a = fmaf(a, 0.9999f, 0.0001f);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
  if (a == 12345.0f) *sink = a;  // never true; keeps the loop
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::uint64_t cupti_now() {
  std::uint64_t t = 0;
  if (cuptiGetTimestamp(&t) != CUPTI_SUCCESS) throw std::runtime_error("cuptiGetTimestamp failed");
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

nlohmann::json summarize(const std::vector<roofline::prof::PmSample>& all, std::uint64_t t0, std::uint64_t t1,
                         double interval_ns) {
  std::vector<roofline::prof::PmSample> in;
  for (const auto& s : all)
    if (s.t_ns >= t0 && s.t_ns + std::uint64_t(interval_ns) <= t1) in.push_back(s);
  std::string source = "cupti-timestamps";
  if (in.empty()) {  // sample stamps on another clock: fall back to all samples
    in = all;
    source = "all-samples";
  }
  double gr = 0, sm = 0, tc = 0, rd = 0, wr = 0;
  for (const auto& s : in) {
    gr += s.gr_active;
    sm += s.sm_active;
    tc += s.tensor_active;
    rd += s.dram_read_bps;
    wr += s.dram_write_bps;
  }
  const double n = std::max<double>(1, double(in.size()));
  return {{"samples_total", all.size()},  {"samples_in_window", in.size()}, {"window_source", source},
          {"mean_gr_active", gr / n},     {"mean_sm_active", sm / n},       {"mean_tensor_active", tc / n},
          {"mean_dram_read_bps", rd / n}, {"mean_dram_write_bps", wr / n}};
}

int usage(const char* msg) {
  std::fprintf(stderr,
               "pm_workload: %s\nusage: pm_workload --duty D [--seconds S] [--kernel-us U] [--interval-us I]\n"
               "       pm_workload --overhead [--runs R] [--seconds S] [--interval-us I]\n"
               "       pm_workload --list-metrics\n",
               msg);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  double duty = -1, seconds = 2, kernel_us = 500, interval_us = 100;
  int runs = 5;
  bool overhead = false, list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto num = [&](double& v) {
      if (i + 1 >= argc) return false;
      char* end = nullptr;
      v = std::strtod(argv[++i], &end);
      return end && *end == '\0';
    };
    double r = 0;
    if (a == "--duty") {
      if (!num(duty) || duty <= 0 || duty > 1) return usage("--duty needs a fraction in (0, 1]");
    } else if (a == "--seconds") {
      if (!num(seconds) || seconds <= 0) return usage("--seconds needs a positive number");
    } else if (a == "--kernel-us") {
      if (!num(kernel_us) || kernel_us < 10) return usage("--kernel-us needs a number >= 10");
    } else if (a == "--interval-us") {
      if (!num(interval_us) || interval_us < 1) return usage("--interval-us needs a number >= 1");
    } else if (a == "--runs") {
      if (!num(r) || r < 1) return usage("--runs needs a positive count");
      runs = int(r);
    } else if (a == "--overhead") {
      overhead = true;
    } else if (a == "--list-metrics") {
      list = true;
    } else {
      return usage(("unknown argument '" + a + "'").c_str());
    }
  }
  if (!overhead && !list && duty < 0) return usage("give --duty, --overhead or --list-metrics");

  try {
    if (list) {
      nlohmann::json out;
      out["pm_sampling_base_metrics"] = roofline::prof::PmSampler::supported_metrics(0);
      std::cout << out.dump(1) << "\n";
      return 0;
    }
    roofline::prof::PmSamplerOptions po;
    po.interval_ns = std::uint64_t(interval_us * 1000);
    nlohmann::json out;
    out["interval_us"] = interval_us;

    if (!overhead) {
      int sms = 0;
      PW_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
      float* sink = nullptr;
      PW_CHECK(cudaMalloc(&sink, sizeof(float)));
      const std::uint64_t ns = std::uint64_t(kernel_us * 1000);
      const int n = std::max(1, int(seconds * 1e6 / (kernel_us / duty)));
      std::vector<cudaEvent_t> ev(2 * size_t(n));
      for (auto& e : ev) PW_CHECK(cudaEventCreate(&e));
      pw_spin<<<sms * 8, 256>>>(1000, sink);  // warm-up
      PW_CHECK(cudaDeviceSynchronize());

      roofline::prof::PmSampler pm(po);
      pm.start();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const std::uint64_t t0 = cupti_now();
      const double period = kernel_us * 1e-6 / duty;
      const double h0 = now();
      for (int k = 0; k < n; ++k) {
        PW_CHECK(cudaEventRecord(ev[2 * k]));
        pw_spin<<<sms * 8, 256>>>(ns, sink);
        PW_CHECK(cudaGetLastError());
        PW_CHECK(cudaEventRecord(ev[2 * k + 1]));
        if (duty < 1) {  // idle until the next period starts
          PW_CHECK(cudaEventSynchronize(ev[2 * k + 1]));
          const double next = h0 + (k + 1) * period;
          while (now() < next) std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
      }
      PW_CHECK(cudaDeviceSynchronize());
      const std::uint64_t t1 = cupti_now();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      pm.stop();

      double busy_ms = 0, span_ms = 0;
      for (int k = 0; k < n; ++k) {
        float ms = 0;
        PW_CHECK(cudaEventElapsedTime(&ms, ev[2 * k], ev[2 * k + 1]));
        busy_ms += ms;
      }
      float span = 0;
      PW_CHECK(cudaEventElapsedTime(&span, ev[0], ev[2 * size_t(n) - 1]));
      span_ms = span;
      for (auto& e : ev) cudaEventDestroy(e);
      cudaFree(sink);
      out["mode"] = "duty";
      out["duty_requested"] = duty;
      out["kernels"] = n;
      out["kernel_us"] = kernel_us;
      out["busy_fraction_events"] = span_ms > 0 ? busy_ms / span_ms : 0;
      out["window_s"] = double(t1 - t0) * 1e-9;
      out["pm"] = summarize(pm.samples(), t0, t1, pm.interval_ns());
      out["pm_metrics"] = pm.chosen_metrics();
      const auto st = pm.stats();
      out["pm_stats"] = {{"decodes", st.decodes},         {"samples", st.samples},
                         {"empty", st.empty_samples},     {"stale", st.stale_samples},
                         {"dropped", st.dropped_samples}, {"image_full", st.image_full},
                         {"hw_overflow", st.hw_overflow}, {"decode_seconds", st.decode_seconds}};
    } else {
      roofline::testprog::Sizes sz;
      sz.gemm_m = sz.gemm_n = sz.gemm_k = 768;  // GEMMs are not part of this mix; keep their buffers small
      roofline::testprog::KnownFlops kf(sz);
      const std::vector<std::string> mix = {"fp32_fma", "copy", "poly", "half2_fma"};
      for (const auto& p : mix) kf.run_phase(p);  // warm-up
      // Iterations of the mix for about `seconds` without sampling.
      double t = now();
      int iters = 0;
      while (now() - t < 0.2) {
        for (const auto& p : mix) kf.run_phase(p);
        ++iters;
      }
      iters = std::max(1, int(iters * seconds / 0.2));
      auto timed = [&](bool sample) {
        roofline::prof::PmSampler pm(po);
        if (sample) pm.start();
        const double a = now();
        for (int k = 0; k < iters; ++k)
          for (const auto& p : mix) kf.run_phase(p);
        const double b = now();
        if (sample) pm.stop();
        return b - a;
      };
      std::vector<double> with, without;
      for (int r = 0; r < runs; ++r) {
        without.push_back(timed(false));
        with.push_back(timed(true));
      }
      const double mw = median(with), mo = median(without);
      out["mode"] = "overhead";
      out["iterations"] = iters;
      out["runs"] = runs;
      out["seconds_without"] = without;
      out["seconds_with"] = with;
      out["median_without"] = mo;
      out["median_with"] = mw;
      out["overhead_pct"] = mo > 0 ? (mw / mo - 1) * 100 : 0;
    }
    std::cout << out.dump(1) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pm_workload: %s\n", e.what());
    return 4;
  }
}
