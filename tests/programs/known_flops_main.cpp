// known_flops: runs kernels of exactly known FLOPs and bytes and prints what
// their counters must read, as JSON. With --counters FILE it also profiles them
// in-process with roofline's range profiler and writes every range's metric
// values; run it under `ncu --clock-control none --metrics ...` (without
// --counters) to get ncu's values for the same launches. tools/checks/counters.sh
// compares the two.
//
//   known_flops [--repeat N] [--phases fp32_fma,poly,...] [--counters FILE] [--verification]
//               [--l2-clean none|memset|evict] [--metrics a.sum,b.sum,...] [--no-dram-pass]
//
// --l2-clean picks what the range profiler does to L2 before each profiled launch
// (RangeProfilerOptions::l2_clean, default evict); --metrics replaces the default
// metric list (e.g. only the DRAM metrics: a single replay pass). counters.sh runs
// the variants side by side (docs/counters.md, "DRAM writes"). By default a
// replayed metric set takes its DRAM bytes from a one-pass launch right after
// (RangeProfilerOptions::dram_pass: launch 2k full set, 2k+1 DRAM set, one record
// per pair); --no-dram-pass keeps the replayed counts, one record per launch.
//
// Exit status: 0 when every phase's output matched its CPU reference, 7 when not,
// 2 on bad arguments, 4 on a CUDA failure. A counters problem (not permitted,
// another profiler holding CUPTI) is reported on stderr and the kernels still run.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/programs/known_flops.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/profiler/range_profiler.hpp"

using roofline::testprog::Expected;
using roofline::testprog::KnownFlops;

namespace {

std::mutex g_phase_mu;
std::string g_phase;  // the phase running now: the NVTX path of its ranges

nlohmann::json to_json(const Expected& e) {
  nlohmann::json j;
  j["phase"] = e.phase;
  j["kernel"] = e.kernel;
  j["instructions"] = e.instructions;
  j["flops"] = e.flops;
  j["tensor_flops"] = e.tensor_flops;
  j["dram_read_min"] = e.dram_read_min;
  j["dram_write_min"] = e.dram_write_min;
  j["streaming"] = e.streaming;
  j["threads"] = e.threads;
  j["hfma_moves_per_thread"] = e.hfma_moves_per_thread;
  return j;
}

double tolerance(const std::string& phase) {
  if (phase == "fp32_fma" || phase == "copy" || phase == "read") return 0;  // bit-exact
  if (phase == "poly") return 1e-5;
  if (phase == "half2_fma") return 2e-2;
  if (phase == "bf16x2_fma") return 5e-2;
  if (phase == "gemm_bf16") return 1e-2;
  return 5e-3;  // gemm_tf32
}

int usage(const char* msg) {
  std::fprintf(stderr,
               "known_flops: %s\nusage: known_flops [--repeat N] [--phases a,b,...] [--counters FILE] "
               "[--verification] [--l2-clean none|memset|evict] [--metrics a.sum,b.sum,...] [--no-dram-pass]\n",
               msg);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 2;
  std::vector<std::string> phases = KnownFlops::phases();
  std::string counters_file;
  bool verification = false;
  bool dram_pass = true;
  roofline::prof::L2Clean l2_clean = roofline::prof::RangeProfilerOptions{}.l2_clean;
  std::vector<std::string> metrics;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--repeat") {
      const char* v = next();
      if (!v || (repeat = std::atoi(v)) < 1) return usage("--repeat needs a positive count");
    } else if (a == "--phases") {
      const char* v = next();
      if (!v) return usage("--phases needs a list");
      phases = roofline::split(v, ',');
      for (const auto& p : phases) {
        bool known = false;
        for (const auto& k : KnownFlops::phases()) known |= (k == p);
        if (!known) return usage(("unknown phase '" + p + "'").c_str());
      }
    } else if (a == "--counters") {
      const char* v = next();
      if (!v) return usage("--counters needs a file name");
      counters_file = v;
    } else if (a == "--verification") {
      verification = true;
    } else if (a == "--no-dram-pass") {
      dram_pass = false;
    } else if (a == "--l2-clean") {
      const char* v = next();
      auto c = v ? roofline::prof::parse_l2_clean(v) : std::nullopt;
      if (!c) return usage("--l2-clean needs none, memset or evict");
      l2_clean = *c;
    } else if (a == "--metrics") {
      const char* v = next();
      if (!v || !*v) return usage("--metrics needs a comma-separated list of metric names");
      metrics = roofline::split(v, ',');
    } else {
      return usage(("unknown argument '" + a + "'").c_str());
    }
  }

  try {
    KnownFlops kf;
    std::unique_ptr<roofline::prof::RangeProfiler> rp;
    roofline::prof::CounterStatus counters_status;
    if (!counters_file.empty()) {
      roofline::prof::RangeProfilerOptions o;
      o.max_instances_per_kernel = 0;  // every launch, to match ncu launch for launch
      o.verification = verification;
      o.dram_pass = dram_pass;
      o.l2_clean = l2_clean;
      o.metrics = metrics;
      o.nvtx_path = [] {
        std::lock_guard<std::mutex> lock(g_phase_mu);
        return g_phase;
      };
      rp = std::make_unique<roofline::prof::RangeProfiler>(o);
      counters_status = rp->try_start();
      if (!counters_status.ok()) {
        std::fprintf(stderr, "known_flops: counters unavailable, running without them: %s\n",
                     counters_status.message().c_str());
        rp.reset();
      }
    }

    nlohmann::json out;
    int dev = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
      out["device"] = prop.name;
      out["l2_bytes"] = prop.l2CacheSize;
    }
    out["repeat"] = repeat;
    auto& jp = out["phases"] = nlohmann::json::array();
    int bad = 0;
    for (const auto& phase : phases) {
      {
        std::lock_guard<std::mutex> lock(g_phase_mu);
        g_phase = phase;
      }
      Expected e;
      for (int r = 0; r < repeat; ++r) {
        nvtxRangePushA(phase.c_str());
        e = kf.run_phase(phase);
        nvtxRangePop();
      }
      const double err = kf.check_phase(phase);
      auto j = to_json(e);
      j["launches"] = repeat;
      j["max_rel_error"] = err;
      j["output_ok"] = err <= tolerance(phase);
      if (!(err <= tolerance(phase))) {
        ++bad;
        std::fprintf(stderr, "known_flops: %s output differs from the CPU reference (max rel error %g > %g)\n",
                     phase.c_str(), err, tolerance(phase));
      }
      jp.push_back(j);
    }

    if (rp) {
      auto s = rp->try_stop();
      nlohmann::json c;
      c["status"] = s.ok() ? "ok" : s.message();
      c["metrics"] = rp->metrics();
      c["unavailable"] = rp->unavailable_metrics();
      const auto st = rp->stats();
      c["passes"] = st.passes;
      c["l2_clean"] = roofline::prof::to_string(l2_clean);
      c["l2_cleans"] = st.l2_cleans;
      c["l2_clean_seconds"] = st.l2_clean_seconds;
      c["dram_pass"] = dram_pass;
      c["dram_passes"] = st.dram_passes;
      c["dram_replayed"] = st.dram_replayed;
      c["config_switches"] = st.config_switches;
      c["config_switch_seconds"] = st.config_switch_seconds;
      auto& recs = c["records"] = nlohmann::json::array();
      for (const auto& r : rp->records())
        recs.push_back({{"kernel", r.kernel},
                        {"nvtx", r.nvtx_path},
                        {"instance", r.instance},
                        {"dram_instance", r.dram_instance},
                        {"dram_replayed", r.dram_replayed},
                        {"replayed_dram", r.replayed_dram},
                        {"values", r.values}});
      std::ofstream f(counters_file);
      f << c.dump(1) << "\n";
      if (!f) {
        std::fprintf(stderr, "known_flops: cannot write %s\n", counters_file.c_str());
        return 5;
      }
      if (!s.ok()) std::fprintf(stderr, "known_flops: counters: %s\n", s.message().c_str());
    } else if (!counters_file.empty()) {
      out["counters_status"] = counters_status.message();
    }
    std::cout << out.dump(1) << "\n";
    return bad ? 7 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "known_flops: %s\n", e.what());
    return 4;
  }
}
