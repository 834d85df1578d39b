// bench --gpus and its ranks: see src/cli/commands/bench_scaling.hpp.
#include "src/cli/commands/bench_scaling.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "roofline/core/error.hpp"
#include "roofline/core/json_text.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/engine/net_scaling.hpp"
#include "roofline/engine/rank_launch.hpp"

namespace roofline::cli::bench_scaling {

namespace {

// The arguments of a rank's copy of this program: the same cells, training only.
std::vector<std::string> rank_argv(const engine::NetBenchConfig& cfg, const std::string& out) {
  std::vector<std::string> p, b;
  for (auto x : cfg.precisions) p.push_back(engine::to_string(x));
  for (auto x : cfg.batches) b.push_back(std::to_string(x));
  std::vector<std::string> a = {"/proc/self/exe", "bench", join(cfg.models, ","), "--device", "gpu", "--mode", "train",
                                "--precision", join(p, ","), "--batch", join(b, ","), "--steps", std::to_string(cfg.steps),
                                "--warmup", std::to_string(cfg.warmup), "--grad-dtype", cfg.grad_dtype == engine::DType::BF16 ? "bf16" : "fp32",
                                "--rank-timeout", std::to_string(cfg.rank_timeout_s), "--rank-out", out};
  if (std::find(cfg.models.begin(), cfg.models.end(), "bert-base") != cfg.models.end())
    a.insert(a.end(), {"--seq", std::to_string(cfg.seq)});
  if (!cfg.graphs) a.push_back("--no-graphs");
  if (cfg.layout) a.insert(a.end(), {"--layout", engine::to_string(*cfg.layout)});
  if (!cfg.fold_batchnorm) a.push_back("--no-fold");
  return a;
}

void store_all(Invocation& ctx, const std::vector<engine::NetRecord>& rs) {
  for (const auto& r : rs) {
    const std::optional<std::int64_t> dev =
        r.source == "roofline" ? std::optional(ctx.gpu_device_id(0)) : std::nullopt;
    engine::store_net_record(ctx.db(), ctx.run_id(), dev, r);
    ctx.status(fmt::format("{} {} {} batch {} per GPU on {} GPU{}: {:.2f} ms per step", r.source, r.model, r.precision,
                           r.batch, r.gpus, r.gpus > 1 ? "s" : "", r.median_s * 1e3));
  }
}

Report scaling_report(const std::vector<engine::NetRecord>& ours, const std::vector<engine::NetRecord>& peer) {
  Report report("bench");
  report.add(engine::net_scaling_table(ours, peer));
  for (const auto& r : ours)
    if (r.gpus > 1 && r.params.contains("buckets"))
      report.info(fmt::format("{} {}: {} gradient buckets ({:.1f} MiB of {} gradients) over NCCL {}", r.model,
                              r.precision, r.params["buckets"].get<int>(),
                              r.params["bucket_bytes"].get<double>() / 1048576.0,
                              r.params["gradients"].get<std::string>(), r.params["nccl"].get<std::string>()));
  return report;
}

}  // namespace

Report run(Invocation& ctx, const engine::NetBenchConfig& cfg) {
  const int have = cuda::gpu_count();
  int most = 0;
  for (int n : cfg.gpus) {
    if (n < 1) throw_usage(fmt::format("--gpus {}: a job needs at least one GPU", n), "give counts such as --gpus 1,2");
    most = std::max(most, n);
  }
  if (most > have)
    throw_usage(fmt::format("--gpus asks for {} GPU{}; this machine has {}{}", most, most > 1 ? "s" : "",
                            have == 0 ? "none" : std::to_string(have),
                            have == 0 ? " (" + cuda::gpu_unavailable_reason() + ")" : ""),
                have == 0 ? "run on a machine with GPUs" : fmt::format("give counts up to {}", have));
  std::vector<engine::NetRecord> ours;
  for (int n : cfg.gpus) {
    if (n == 1) {
      engine::dist::RankEnv one;
      const auto rs = engine::run_net_bench_rank(cfg, one, [&](const std::string& l) { ctx.status(l); });
      store_all(ctx, rs);
      ours.insert(ours.end(), rs.begin(), rs.end());
      continue;
    }
    const std::filesystem::path out =
        std::filesystem::temp_directory_path() / fmt::format("roofline-ranks-{}-{}.json", ::getpid(), n);
    std::filesystem::remove(out);
    ctx.status(fmt::format("starting {} ranks, one per GPU", n));
    engine::dist::RankLaunch l;
    l.argv = rank_argv(cfg, out.string());
    l.world = n;
    l.timeout = std::chrono::seconds(cfg.rank_timeout_s) * 4;
    engine::dist::launch_ranks(l);
    std::ifstream f(out);
    if (!f) throw Error(ErrorKind::Internal, "rank 0 finished but wrote no results to " + out.string(), "");
    const auto rs = engine::net_records_from_json(nlohmann::json::parse(f));
    f.close();
    std::filesystem::remove(out);
    store_all(ctx, rs);
    ours.insert(ours.end(), rs.begin(), rs.end());
  }
  std::vector<engine::NetRecord> peer;
  if (!cfg.peer.empty()) {
    ctx.status("running the PyTorch DDP peer on the same GPU counts");
    peer = engine::run_net_ddp_peer(cfg);
    store_all(ctx, peer);
  }
  return scaling_report(ours, peer);
}

Report run_rank(Invocation& ctx, const engine::NetBenchConfig& cfg, const engine::dist::RankEnv& env,
                const std::string& rank_out) {
  const auto status = [&](const std::string& l) {
    if (env.rank == 0) ctx.status(l);
  };
  const auto rs = engine::run_net_bench_rank(cfg, env, status);
  if (env.rank != 0) return Report("bench");
  if (!rank_out.empty()) {
    const std::string tmp = rank_out + ".part";
    {
      std::ofstream f(tmp);
      f << json_text(engine::net_records_to_json(rs));
      if (!f) throw Error(ErrorKind::Internal, "could not write the rank's results to " + tmp, "is /tmp full?");
    }
    std::filesystem::rename(tmp, rank_out);
    return Report("bench");
  }
  store_all(ctx, rs);
  return scaling_report(rs, {});
}

}  // namespace roofline::cli::bench_scaling
