// roofline bench: trains and times the seed models on the CPU and GPU
// (seed 000's Table 4), beside the PyTorch peer when asked.
#include "roofline/engine/bench.hpp"
#include "roofline/engine/graph_weights.hpp"
#include "roofline/engine/layer_graph.hpp"
#include "roofline/engine/bert.hpp"
#include "roofline/engine/bert_bench.hpp"
#include "roofline/engine/net_bench.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "src/cli/commands/bench_profile.hpp"
#include "src/cli/commands/bench_scaling.hpp"
#include "roofline/engine/rank_env.hpp"
#include "src/cli/command.hpp"
#include "roofline/profiler/diagnosis.hpp"
#include "roofline/profiler/metrics.hpp"
#include "roofline/profiler/profile_store.hpp"
#include "roofline/profiler/summary.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/hardware/cpu_info.hpp"
#include "roofline/model/roofline.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/hardware/peaks.hpp"
#include "roofline/store/results.hpp"

namespace roofline::cli {

namespace {

// A one-line progress bar on stderr, redrawn at most ten times a second.
class ProgressBar {
 public:
  explicit ProgressBar(bool on) : on_(on) {}
  ~ProgressBar() { finish(); }
  void update(const std::string& what, int epoch, int epochs, std::int64_t step, std::int64_t steps) {
    if (!on_) return;
    auto now = std::chrono::steady_clock::now();
    if (what == what_ && step != steps && now - last_ < std::chrono::milliseconds(100)) return;
    if (what != what_) finish();
    what_ = what;
    last_ = now;
    const int width = 30;
    const int filled = steps > 0 ? static_cast<int>(width * step / steps) : 0;
    std::cerr << fmt::format("\r{}: epoch {}/{} [{}{}] {}/{} steps  ", what, epoch + 1, epochs,
                             std::string(static_cast<size_t>(filled), '#'),
                             std::string(static_cast<size_t>(width - filled), '.'), step, steps)
              << std::flush;
    drawn_ = true;
  }
  void finish() {
    if (drawn_) std::cerr << '\n';
    drawn_ = false;
    what_.clear();
  }

 private:
  bool on_;
  bool drawn_ = false;
  std::string what_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace

class BenchCommand : public Command {
 public:
  const char* name() const override { return "bench"; }
  const char* summary() const override {
    return "train and time the models (simple-mlp, simple-cnn, ece408; alexnet, resnet18) on CPU and GPU, beside "
           "PyTorch";
  }
  void configure(CLI::App& sub) override {
    sub.add_option("models", models_,
                   "models: simple-mlp, simple-cnn, ece408 or all (comma-separated); or the networks alexnet, resnet18 "
                   "(synthetic ImageNet-shaped batches; --precision, --steps)")
        ->required();
    sub.add_option("--precision", precision_,
                   "networks: fp32 (TF32 off), tf32, bf16 (mixed precision, channels-last on the GPU), fp16 (the "
                   "same, with dynamic loss scaling in training); comma-separated")
        ->capture_default_str();
    sub.add_option("--steps", net_.steps, "networks: timed steps (or batches) per cell")
        ->check(whole_number(1, 100000))
        ->capture_default_str();
    sub.add_option("--warmup", net_.warmup, "networks: untimed steps before them")
        ->check(whole_number(0, 100000))
        ->capture_default_str();
    sub.add_flag("--no-compile", no_compile_, "networks: the peer runs eager only (no torch.compile)");
    sub.add_flag("--no-fold", no_fold_,
                 "networks, inference: run each BatchNorm as its own pass instead of folding it into the "
                 "convolution before it");
    sub.add_option("--layout", layout_,
                   "networks: the activations' layout, nchw or nhwc (channels-last), on every device; the PyTorch "
                   "peer takes the same (default: nhwc for bf16/fp16 on the GPU, nchw otherwise, on both sides)");
    sub.add_option("--weights", net_.weights,
                   "start from this safetensors file (the model's state_dict names: torchvision's for the networks, "
                   "fc1.weight, conv1.bias, ... for the small models; e.g. saved with safetensors.torch.save_file); "
                   "default: PyTorch's initialisation, seeded");
    device_opt_ = sub.add_option("--device", device_, "cpu, gpu, gpu:N or cpu,gpu")->capture_default_str();
    mode_opt_ = sub.add_option("--mode", mode_,
                               "train, infer or train,infer (training also reports test accuracy; bert-base: infer "
                               "unless given)")
        ->capture_default_str();
    batch_opt_ = sub.add_option("--batch", batch_, "batch sizes, comma-separated (bert-base: 1,8,16,32)")
                     ->capture_default_str();
    seq_opt_ = sub.add_option("--seq", seq_, "bert-base: sequence lengths, comma-separated")->capture_default_str();
    sub.add_option("--lengths", lengths_,
                   "bert-base inference: equal (every sequence --seq tokens) or varied (lengths spread over "
                   "seq/4..seq, timed padded and packed)")
        ->check(CLI::IsMember({"equal", "varied"}))
        ->capture_default_str();
    sub.add_option("--checkpoint", checkpoint_,
                   "bert-base: a Hugging Face BertForQuestionAnswering folder (config.json, model.safetensors); "
                   "default: seeded weights of bert-base-cased's shape");
    sub.add_option("--question", question_, "bert-base with --checkpoint: answer this question from --context");
    sub.add_option("--context", context_, "bert-base with --checkpoint: the text holding the answer");
    sub.add_option("--epochs", o_.epochs, "training epochs")->capture_default_str();
    sub.add_option("--max-steps", o_.max_steps, "at most this many steps per epoch (0: the whole training set)")
        ->check(whole_number(0))
        ->capture_default_str();
    sub.add_option("--seed", o_.seed, "seed of the initial weights and the shuffling")
        ->check(whole_number(0))
        ->capture_default_str();
    sub.add_option("--data", data_,
                   "small models: the folder with the IDX files (default: $ROOFLINE_DATA, else "
                   "/usr/share/datasets/fashion-mnist); networks: an ImageFolder of JPEGs (DIR/<class>/*.jpg, or "
                   "DIR/train and DIR/val) read instead of synthetic batches, each step waiting for its images");
    data_threads_opt_ = sub.add_option("--data-threads", net_.data_threads,
                                       "networks with --data: JPEG decoding threads (0: one per hardware thread)")
                            ->check(whole_number(0, 1024))
                            ->capture_default_str();
    sub.add_option("--lr", o_.sgd.lr, "SGD learning rate")->capture_default_str();
    sub.add_option("--momentum", o_.sgd.momentum, "SGD momentum")->capture_default_str();
    sub.add_option("--weight-decay", o_.sgd.weight_decay, "SGD weight decay")->capture_default_str();
    sub.add_option("--peer", peer_, "run the same benchmark in a peer framework too: pytorch");
    sub.add_option("--peer-script", peer_script_, "path of peers/pytorch_bench.py");
    sub.add_flag("--no-graphs", no_graphs_,
                 "GPU: launch every kernel instead of replaying captured CUDA graphs "
                 "(NVTX ranges then appear per step, for profilers)");
    sub.add_option("--steps-per-graph", o_.steps_per_graph, "GPU: training steps captured in one graph")
        ->check(whole_number(1, 1 << 20))
        ->capture_default_str();
    sub.add_option("--gpu-path", gpu_path_,
                   "GPU: auto (the fused kernels where a model has one, unless --no-graphs), fused (required) or "
                   "layers (one kernel per op)")
        ->capture_default_str();
    sub.add_option("--fused-steps", o_.fused_steps_per_launch, "GPU, fused path: training steps per kernel launch")
        ->check(whole_number(1))
        ->capture_default_str();
    sub.add_flag("--check-every-step", o_.check_every_step,
                 "stop at the first non-finite loss (synchronises every step)");
    sub.add_flag("--keep-going", keep_going_,
                 "record a run whose loss becomes NaN/Inf as diverged and run the others (exit status 7 at the end, "
                 "naming every diverged run); without it the first non-finite loss stops the benchmark");
    sub.add_option("--infer-reps", o_.infer_reps, "repetitions of the single-batch inference timing")
        ->check(whole_number(1, 1 << 24))
        ->capture_default_str();
    sub.add_option("--repeat", repeat_,
                   "rounds: run every cell this many times, each round roofline then the peer; the CPU-vs-GPU "
                   "table shows each cell's median round, and the spread and the speedup of the medians are printed")
        ->capture_default_str();
    sub.add_flag("--costs", costs_, "also print each model's per-layer FLOPs and bytes");
    sub.add_flag("--profile", profile_,
                 "GPU: trace each training run in-process (kernel, API and launch summaries, kernels by layer "
                 "and pass from the engine's NVTX ranges, diagnoses), print and store it; add --no-graphs to map "
                 "every kernel to its layer. Networks: a few more steps of each GPU cell run eagerly and are "
                 "traced, and the GPU time per layer and pass is printed beside the paper FLOPs and bytes");
    sub.add_option("--gpus", gpus_,
                   "networks: data-parallel training on these GPU counts (e.g. 1,2,4), one process per GPU over "
                   "NCCL, and the scaling table (beside PyTorch DDP with --peer pytorch); under mpirun, torchrun "
                   "or srun the launcher's ranks run instead");
    sub.add_option("--grad-dtype", grad_dtype_, "with --gpus: what the gradients travel as, fp32 or bf16")
        ->capture_default_str();
    sub.add_option("--rank-timeout", net_.rank_timeout_s,
                   "with --gpus: seconds a rank waits for its peers (rendezvous, a step's collectives) before it "
                   "stops them all")
        ->capture_default_str();
    sub.add_option("--rank-out", rank_out_, "internal: where rank 0 of a bench --gpus job writes its records")
        ->group("");
    sub.add_flag("--counters", counters_,
                 "networks, with --profile: one more eager step of each GPU cell under the hardware counters "
                 "(every kernel profiled, two runs: all metrics, then DRAM bytes in one pass), so each layer and "
                 "pass gets its counted FLOPs by unit and precision, DRAM and L2 bytes beside the paper figures; "
                 "stored with the layers. Needs counter access (docs/counters.md)");
  }

  // The ranks that bench --gpus starts, and a launcher's ranks other than 0,
  // record no run of their own: the launching process (or rank 0) stores the cells.
  bool records_run() const override {
    if (!rank_out_.empty()) return false;
    try {
      const auto r = engine::dist::read_rank_env();
      return !(r && r->world > 1 && r->rank != 0);
    } catch (const Error&) {
      return true;  // run() says what is wrong with the environment
    }
  }

  Report run(Invocation& ctx) override {
    {
      size_t nets = 0, all = 0;
      for (const auto& m : split(join(models_, ","), ',')) {
        ++all;
        nets += engine::is_network(to_lower(trim(m)));
      }
      if (nets > 0 && nets < all)
        throw_usage("the small models and the networks (alexnet, resnet18) are benchmarked by separate calls",
                    "name either the small models or the networks");
      const bool bert = all == 1 && to_lower(trim(join(models_, ","))) == "bert-base";
      if (!bert && (seq_opt_->count() > 0 || !checkpoint_.empty() || !question_.empty() || !context_.empty() ||
                    lengths_ != "equal"))
        throw_usage("--seq, --lengths, --checkpoint, --question and --context are for bert-base",
                    "drop them, or benchmark bert-base alone");
      if (nets > 0) return run_nets(ctx);
      if (bert) return run_bert(ctx);
    }
    if (data_threads_opt_->count() > 0)
      throw_usage("--data-threads is for the networks' ImageFolder data (alexnet, resnet18 with --data)",
                  "drop --data-threads: the small models read Fashion-MNIST IDX files");
    refuse_image_folder_for_small_models();
    if (const std::string p = to_lower(trim(precision_)); p != "fp32")
      throw_usage(fmt::format("--precision {}: the small models train on the Sequential engine in fp32 only", p),
                  "drop --precision (roofline summary shows a small model's costs in other precisions), or "
                  "benchmark a network (alexnet, resnet18) in tf32, bf16 or fp16");
    if (counters_)
      throw_usage("--counters is for the networks (alexnet, resnet18)",
                  "profile a small model's kernels with their counters by roofline profile --counters -- roofline "
                  "bench ...");
    if (!layout_.empty() || no_fold_)
      throw_usage(std::string(no_fold_ ? "--no-fold" : "--layout") + " is for the networks (alexnet, resnet18)",
                  "drop it: the small models run in NCHW and have no BatchNorm to fold");
    engine::BenchConfig cfg;
    cfg.weights = net_.weights;
    cfg.models.clear();
    for (const auto& m : split(join(models_, ","), ','))
      if (to_lower(trim(m)) == "all") {
        for (const auto& n : engine::model_names()) cfg.models.push_back(n);
      } else {
        cfg.models.push_back(engine::make_model(m)->name());  // unknown names fail here
      }
    if (cfg.models.empty())
      throw_usage("no model named", fmt::format("name one or more of {}, or all", join(engine::model_names(), ", ")));
    cfg.batches = parse_int_list(batch_, "--batch");
    Report report("bench");
    choose_devices_and_modes(cfg, report);
    if (o_.epochs < 0)
      throw_usage(fmt::format("{} epochs: the count cannot be negative", o_.epochs), "use --epochs 0 or more");
    o_.use_graphs = !no_graphs_;
    cfg_epochs_ = o_.epochs;
    o_.gpu_path = engine::parse_gpu_path(gpu_path_);
    if (o_.fused_steps_per_launch < 1) throw_usage("--fused-steps must be at least 1", "e.g. --fused-steps 1024");
    if (repeat_ < 1) throw_usage(fmt::format("--repeat {} is not a number of rounds", repeat_), "use --repeat 1 or more");
    if (repeat_ > 1 && profile_)
      throw_usage("--profile traces one round", "drop --repeat, or --profile");
    cfg.train_options = o_;
    cfg.data_dir = data_;
    cfg.peer = to_lower(trim(peer_));
    cfg.peer_script = peer_script_;
    cfg.keep_going = keep_going_;
    cfg.repeat = repeat_;
    if (!cfg.peer.empty() && cfg.peer != "pytorch")
      throw_usage(fmt::format("unknown peer '{}'", peer_), "the only peer is pytorch (--peer pytorch)");

    if (profile_) {
      if (!cfg.gpu || !cfg.train)
        throw_usage("--profile traces GPU training runs, and none was asked for",
                    "add --device gpu and --mode train (or drop --profile)");
      bench_profile::enable();
    }
    std::vector<Report> profiles;  // one per profiled GPU training run, printed after the tables

    ProgressBar bar(ctx.interactive() && ::isatty(2));
    auto progress = [&](const std::string& what, int e, int epochs, std::int64_t s, std::int64_t n) {
      bar.update(what, e, epochs, s, n);
    };
    auto status = [&](const std::string& line) {
      bar.finish();
      ctx.status(line);
    };
    auto sink = [&](const engine::BenchRecord& r) {
      bar.finish();
      std::optional<std::int64_t> dev =
          r.device == "gpu" && r.source == "roofline"   ? std::optional(ctx.gpu_device_id(cfg.gpu_index))
          : r.device == "cpu" && r.source == "roofline" ? std::optional(ctx.cpu_device_id())
                                                        : std::nullopt;
      engine::store_bench_record(ctx.db(), ctx.run_id(), dev, r, cfg);
      if (profile_ && r.source == "roofline") take_profiles(ctx, r, profiles);
      if (!r.diverged.empty())
        ctx.status(fmt::format("{} {} {} batch {}: diverged (non-finite loss) at {}", r.source, r.model, r.device,
                               r.batch, r.diverged));
      else
        ctx.status(fmt::format("{} {} {} batch {}: {} s training, {:.2f}% test accuracy, {} per inference{}", r.source,
                               r.model, r.device, r.batch, format_sig(r.train_seconds), r.test_accuracy * 100,
                               format_seconds(r.infer_median_s),
                               r.params.value("infer_path", std::string()).empty()
                                   ? std::string()
                                   : " (" + r.params["infer_path"].get<std::string>() + ")"));
    };
    engine::store_layer_costs(ctx.db(), ctx.run_id(), cfg);
    const engine::BenchResults results = engine::run_benchmark(cfg, sink, progress, status);
    engine::add_bench_tables(report, cfg, results, costs_);
    for (const auto& p : profiles) report.append(p);
    if (const std::optional<Error> failure = engine::bench_failure(results)) {
      // The results are stored and worth showing; the run still fails (the peer was asked for, or a run
      // diverged under --keep-going).
      render(report, ctx.options().format(), std::cout, ctx.options().text_width());
      throw *failure;
    }
    return report;
  }

 private:
  // --device and --mode into either benchmark's config (cpu, gpu, gpu_index,
  // train, infer); without a GPU and without an explicit --device, a warning.
  template <class Config>
  void choose_devices_and_modes(Config& cfg, Report& report) const {
    DeviceChoice dc = parse_devices(device_);
    const bool explicit_device = device_opt_->count() > 0;
    std::vector<int> gpus;
    if (dc.all_gpus && !explicit_device && cuda::gpu_count() == 0) {
      report.warn("no GPU here (" + cuda::gpu_unavailable_reason() + "): GPU columns are empty");
    } else {
      gpus = resolve_gpus(dc);
      if (gpus.empty() && (dc.all_gpus || !dc.gpus.empty()))
        throw_device("no GPU available: " + cuda::gpu_unavailable_reason(), "use --device cpu");
    }
    cfg.cpu = dc.cpu;
    cfg.gpu = !gpus.empty();
    cfg.gpu_index = gpus.empty() ? 0 : gpus.front();
    cfg.train = cfg.infer = false;
    for (const auto& m : split(mode_, ',')) {
      std::string v = to_lower(trim(m));
      if (v == "train")
        cfg.train = true;
      else if (v == "infer" || v == "inference")
        cfg.infer = true;
      else
        throw_usage(fmt::format("unknown mode '{}'", m), "use --mode train, infer or train,infer");
    }
  }

  // --data DIR with the small models names their IDX folder; an ImageFolder
  // there (subfolders, no IDX files) is meant for the networks.
  void refuse_image_folder_for_small_models() const {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (data_.empty() || !fs::is_directory(data_, ec)) return;  // the IDX reader names a missing folder
    bool idx = false, subfolders = false;
    for (const auto& e : fs::directory_iterator(data_, ec)) {
      idx = idx || contains(e.path().filename().string(), "-ubyte");
      subfolders = subfolders || e.is_directory(ec);
    }
    if (!idx && subfolders)
      throw_usage(fmt::format("--data {}: no IDX files, but subfolders: an ImageFolder of JPEGs is read by the "
                              "networks only, and the small models read Fashion-MNIST IDX files",
                              data_),
                  "benchmark alexnet or resnet18 with this --data, or give the small models a folder with "
                  "train-images-idx3-ubyte and its siblings");
  }

  // bench --gpus, its ranks, or a launcher's ranks (bench_scaling.hpp): the
  // gradient type, then the launch of each GPU count or this process's rank.
  Report run_data_parallel(Invocation& ctx, engine::NetBenchConfig cfg,
                           const std::optional<engine::dist::RankEnv>& ranks) const {
    const std::string gd = to_lower(trim(grad_dtype_));
    if (gd != "fp32" && gd != "bf16")
      throw_usage(fmt::format("--grad-dtype {}", grad_dtype_), "gradients travel as fp32 or bf16");
    cfg.grad_dtype = gd == "bf16" ? engine::DType::BF16 : engine::DType::F32;
    if (!rank_out_.empty() && !ranks)
      throw_usage("--rank-out is for the ranks bench --gpus starts (RANK and WORLD_SIZE unset)",
                  "run roofline bench ... --gpus N instead");
    if (ranks && (ranks->world > 1 || !rank_out_.empty())) {
      if (!gpus_.empty())
        throw_usage(fmt::format("--gpus inside a launcher's job of {} ranks", ranks->world),
                    "drop --gpus: the launcher's ranks (" + ranks->launcher + ") are the GPUs");
      return bench_scaling::run_rank(ctx, cfg, *ranks, rank_out_);
    }
    cfg.gpus = parse_gpu_counts(gpus_);
    return bench_scaling::run(ctx, cfg);
  }

  // bert-base --gpus: the fine-tuning step data-parallel, as the networks' (one --seq).
  Report run_bert_data_parallel(Invocation& ctx, const std::optional<engine::dist::RankEnv>& ranks) const {
    if ((device_opt_->count() > 0 && to_lower(trim(device_)) != "gpu") ||
        (mode_opt_->count() > 0 && to_lower(trim(mode_)) != "train"))
      throw_usage("data-parallel runs time GPU training steps", "use --device gpu --mode train (the defaults)");
    if (profile_ || counters_ || !data_.empty() || !layout_.empty() || !net_.weights.empty() || !checkpoint_.empty() ||
        lengths_ != "equal")
      throw_usage("--profile, --counters, --data, --layout, --weights, --checkpoint and --lengths are for one GPU",
                  "drop them from a data-parallel run");
    engine::NetBenchConfig cfg = net_;
    cfg.models = {"bert-base"};
    cfg.gpu = cfg.train = true;
    cfg.cpu = cfg.infer = false;
    cfg.precisions = engine::parse_precisions(to_lower(trim(precision_)));
    cfg.batches = parse_int_list(batch_opt_->count() > 0 ? batch_ : "32", "--batch");
    const auto seqs = parse_int_list(seq_opt_->count() > 0 ? seq_ : "128", "--seq");
    if (seqs.size() != 1) throw_usage("bert-base --gpus takes one --seq", "give one sequence length, e.g. --seq 128");
    cfg.seq = seqs.front();
    cfg.graphs = !no_graphs_;
    cfg.peer = to_lower(trim(peer_));
    cfg.peer_script = peer_script_;
    return run_data_parallel(ctx, cfg, ranks);
  }

  // bert-base: question-answering inference and fine-tuning cells
  // (engine/bert_bench.hpp), stored and tabled as the networks' cells.
  Report run_bert(Invocation& ctx) {
    if (const auto ranks = engine::dist::read_rank_env();
        !gpus_.empty() || !rank_out_.empty() || (ranks && ranks->world > 1))
      return run_bert_data_parallel(ctx, ranks);
    engine::BertBenchConfig cfg;
    Report report("bench");
    choose_devices_and_modes(cfg, report);
    if (mode_opt_->count() == 0) cfg.train = false, cfg.infer = true;  // a fine-tuning step only when asked
    cfg.precisions = engine::parse_precisions(to_lower(trim(precision_)));
    cfg.batches = parse_int_list(batch_opt_->count() > 0 ? batch_ : "1,8,16,32", "--batch");
    cfg.seqs = parse_int_list(seq_, "--seq");

    cfg.steps = net_.steps;
    cfg.warmup = net_.warmup;
    cfg.checkpoint = checkpoint_;
    cfg.varied = lengths_ == "varied";
    cfg.graphs = !no_graphs_;
    cfg.peer = to_lower(trim(peer_));
    cfg.peer_script = peer_script_;
    cfg.peer_compile = !no_compile_;
    if (!cfg.peer.empty() && cfg.peer != "pytorch")
      throw_usage(fmt::format("unknown peer '{}'", peer_), "the only peer is pytorch (--peer pytorch)");
    if (profile_ || counters_ || !data_.empty() || !layout_.empty() || !net_.weights.empty())
      throw_usage("--profile, --counters, --data, --layout and --weights are not built for bert-base yet",
                  "give a Hugging Face checkpoint folder with --checkpoint DIR; profile with roofline profile -- "
                  "roofline bench bert-base ...");
    if (!question_.empty() || !context_.empty()) return answer(ctx, cfg);
    const std::int64_t positions = checkpoint_.empty()
                                       ? engine::bert::bert_base_cased().max_positions
                                       : engine::bert::read_bert_config(checkpoint_ + "/config.json").max_positions;
    for (auto q : cfg.seqs)
      if (q < 1 || q > positions)
        throw_usage(fmt::format("--seq {}: sequences run from 1 token to the model's {} positions", q, positions),
                    fmt::format("use --seq {} or less", positions));
    engine::NetBenchConfig ceiling_cfg;
    ceiling_cfg.gpu_index = cfg.gpu_index;
    std::vector<engine::NetRecord> ours, peer;
    auto store = [&](const engine::NetRecord& r) {
      std::optional<std::int64_t> dev = r.source != "roofline" ? std::nullopt
                                        : r.device == "gpu"    ? std::optional(ctx.gpu_device_id(cfg.gpu_index))
                                                               : std::optional(ctx.cpu_device_id());
      engine::store_net_record(ctx.db(), ctx.run_id(), dev, r);
      ctx.status(fmt::format("{} {} {} {} batch {}: {} per batch", r.source, r.model, r.device, r.precision, r.batch,
                             format_seconds(r.median_s)));
    };
    auto sink = [&](const engine::NetRecord& measured) {
      engine::NetRecord r = measured;
      add_ceiling(ctx, ceiling_cfg, r);
      store(r);
      ours.push_back(std::move(r));
    };
    (void)engine::run_bert_bench(cfg, sink, [&](const std::string& line) { ctx.status(line); });
    if (!cfg.peer.empty()) {
      ctx.status("running the PyTorch peer (Hugging Face BertForQuestionAnswering)");
      peer = engine::run_bert_peer(cfg);
      for (const auto& r : peer) store(r);
    }
    report.add(engine::net_table(ours, "roofline"));
    report.add(engine::net_detail_table(ours));
    report.add(engine::bert_attention_table(ours));
    if (!peer.empty()) {
      report.add(engine::net_table(peer, "pytorch"));
      report.add(engine::net_peer_table(ours, peer));
    }
    return report;
  }

  // bert-base --checkpoint DIR --question Q --context C: the answer span, on the first device asked for.
  Report answer(Invocation& ctx, const engine::BertBenchConfig& cfg) {
    if (checkpoint_.empty())
      throw_usage("--question and --context need --checkpoint DIR (its vocab.txt and trained weights)",
                  "give a Hugging Face BertForQuestionAnswering folder fine-tuned for question answering");
    if (question_.empty() || context_.empty())
      throw_usage("--question and --context go together", "give both");
    const std::filesystem::path dir(checkpoint_);
    const auto bc = engine::bert::read_bert_config((dir / "config.json").string());
    const auto tok = engine::bert::checkpoint_tokenizer(checkpoint_);
    const engine::Precision p = cfg.precisions.front();
    engine::Context dev(cfg.gpu ? engine::Backend::Cuda : engine::Backend::Cpu, cfg.gpu_index);
    engine::bert::BertQA model(bc, dev, dev.is_cuda() ? engine::activation_dtype(p) : engine::DType::F32,
                               engine::allows_tf32(p));
    model.load(engine::SafetensorsFile::open((dir / "model.safetensors").string()));
    const std::int64_t max_len =
        seq_opt_->count() > 0 ? parse_int_list(seq_, "--seq").front() : std::min<std::int64_t>(384, bc.max_positions);
    const auto a = engine::bert::answer_question(model, tok, question_, context_, max_len);
    Report report("bench");
    Table& t = report.add(Table("bench.bert.answer", "Answer", Table::Layout::Properties));
    t.prop("answer", "Answer", a.text);
    t.prop("score", "Score (start + end logit)", a.score);
    t.prop("span", "Word pieces", fmt::format("{}-{} of {}", a.start, a.end, a.pieces));
    t.prop("device", "Device", fmt::format("{} {}", dev.is_cuda() ? "gpu" : "cpu",
                                           dev.is_cuda() ? engine::to_string(p) : "fp32"));
    if (a.truncated) report.warn(fmt::format("the context was cut to fit {} word pieces: the answer may lie past it "
                                             "(--seq up to {})", max_len, bc.max_positions));
    (void)ctx;
    return report;
  }

  // alexnet, resnet18: the graph networks' cells (engine/net_bench.hpp).
  Report run_nets(Invocation& ctx) {
    engine::NetBenchConfig cfg = net_;
    cfg.models.clear();
    for (const auto& m : split(join(models_, ","), ',')) cfg.models.push_back(to_lower(trim(m)));
    cfg.batches = parse_int_list(batch_, "--batch");
    cfg.precisions = engine::parse_precisions(to_lower(trim(precision_)));
    Report report("bench");
    // Data-parallel: bench --gpus, a rank it started, or a rank of a launcher's job (mpirun, torchrun, srun).
    const auto ranks = engine::dist::read_rank_env();
    const bool data_parallel = !gpus_.empty() || !rank_out_.empty() || (ranks && ranks->world > 1);
    if (data_parallel) {
      if ((device_opt_->count() > 0 && to_lower(trim(device_)) != "gpu") ||
          (mode_opt_->count() > 0 && to_lower(trim(mode_)) != "train"))
        throw_usage("data-parallel runs time GPU training steps", "use --device gpu --mode train (the defaults)");
      cfg.gpu = cfg.train = true;
      cfg.cpu = cfg.infer = false;
    } else {
      choose_devices_and_modes(cfg, report);
    }
    cfg.graphs = !no_graphs_;
    cfg.peer = to_lower(trim(peer_));
    cfg.peer_script = peer_script_;
    cfg.peer_compile = !no_compile_;
    cfg.fold_batchnorm = !no_fold_;
    if (const std::string l = to_lower(trim(layout_)); l == "nchw")
      cfg.layout = engine::MemoryFormat::NCHW;
    else if (l == "nhwc" || l == "channels-last" || l == "channels_last")
      cfg.layout = engine::MemoryFormat::NHWC;
    else if (!l.empty())
      throw_usage(fmt::format("unknown layout '{}'", layout_), "use --layout nchw or --layout nhwc (channels-last)");
    cfg.data = data_;
    if (!cfg.weights.empty())  // every problem of the file, before any cell runs
      for (const auto& m : cfg.models) (void)engine::read_state(engine::make_graph_model(m), cfg.weights);
    if (!cfg.peer.empty() && cfg.peer != "pytorch")
      throw_usage(fmt::format("unknown peer '{}'", peer_), "the only peer is pytorch (--peer pytorch)");
    bool any_fp32 = false, any_gpu_only = false;
    for (auto p : cfg.precisions) (p == engine::Precision::FP32 ? any_fp32 : any_gpu_only) = true;
    if (!cfg.gpu && !any_fp32)
      throw_usage("tf32, bf16 and fp16 run on the GPU only (the CPU computes in fp32), and no GPU is benchmarked",
                  "add --device gpu, or use --precision fp32");
    if (cfg.cpu && any_gpu_only) report.info("the CPU computes in fp32 only: its tf32/bf16/fp16 cells are left out");
    // Data-parallel: a rank (started by bench --gpus or a launcher), or the launch of each GPU count.
    if (data_parallel) {
      if (profile_ || counters_ || !cfg.data.empty() || !cfg.weights.empty())
        throw_usage("--profile, --counters, --data and --weights are for one GPU",
                    "drop them from a data-parallel run (profile one with roofline profile -- mpirun ...)");
      return run_data_parallel(ctx, cfg, ranks);
    }
    if (profile_) {
      if (!cfg.gpu)
        throw_usage("--profile traces GPU runs, and no GPU is benchmarked", "add --device gpu (or drop --profile)");
      bench_profile::enable();
      cfg.profile = true;
      cfg.counters = counters_;
    } else if (counters_) {
      throw_usage("--counters counts the kernels of the profiled steps", "add --profile (and --device gpu)");
    }
    std::vector<engine::NetRecord> ours;  // as measured, with their ceilings
    std::vector<Report> profiles;
    auto store = [&](const engine::NetRecord& r) {
      std::optional<std::int64_t> dev =
          r.source != "roofline" ? std::nullopt
          : r.device == "gpu"    ? std::optional(ctx.gpu_device_id(cfg.gpu_index))
                                 : std::optional(ctx.cpu_device_id());
      engine::store_net_record(ctx.db(), ctx.run_id(), dev, r);
      ctx.status(fmt::format("{} {} {} {} batch {} {}: {} per {}{}", r.source, r.model, r.device, r.precision, r.batch,
                             r.mode, format_seconds(r.median_s), r.mode == "train" ? "step" : "batch",
                             r.params.contains("data_wait_ms")
                                 ? fmt::format(" (the {} alone {}; {} waiting for images)",
                                               r.device == "gpu" ? "GPU" : "CPU", format_seconds(r.params["device_step_ms"].get<double>() * 1e-3),
                                               format_seconds(r.params["data_wait_ms"].get<double>() * 1e-3))
                                 : std::string()));
    };
    auto sink = [&](const engine::NetRecord& measured) {
      engine::NetRecord r = measured;
      add_ceiling(ctx, cfg, r);
      store(r);
      if (r.device == "gpu" && profile_) take_net_profile(ctx, cfg, r, profiles);
      ours.push_back(std::move(r));
    };
    auto status = [&](const std::string& line) { ctx.status(line); };
    (void)engine::run_net_bench(cfg, sink, status);
    std::vector<engine::NetRecord> peer;
    if (!cfg.peer.empty()) {
      ctx.status("running the PyTorch peer (eager" + std::string(cfg.peer_compile ? " and torch.compile" : "") + ")");
      peer = engine::run_net_peer(cfg);
      for (const auto& r : peer) store(r);
    }
    const std::string data_note = engine::net_data_note(cfg);
    Table& t = report.add(engine::net_table(ours, "roofline"));
    if (!data_note.empty()) t.note(data_note);
    report.add(engine::net_detail_table(ours));
    for (const auto& r : ours)
      for (const auto& w : r.warnings) report.warn(w);
    if (!peer.empty()) {
      report.add(engine::net_table(peer, "pytorch"));
      Table& both = report.add(engine::net_peer_table(ours, peer));
      if (!data_note.empty()) both.note(data_note);
    }
    for (const auto& p : profiles) report.append(p);
    engine::add_net_data_warnings(report, ours);
    std::vector<std::string> diverged;
    for (const auto& r : ours)
      if (r.mode == "train" && r.loss && !std::isfinite(*r.loss))
        diverged.push_back(fmt::format("{} {} {} batch {}", r.model, r.device, r.precision, r.batch));
    if (!diverged.empty()) {
      // The cells are stored and worth showing; the run still fails.
      render(report, ctx.options().format(), std::cout, ctx.options().text_width());
      throw Error(ErrorKind::Numeric,
                  "the training loss became NaN or Inf (diverged) in: " + join(diverged, "; "),
                  "check the weights (--weights) and the precision: fp16 runs with dynamic loss scaling, bf16 and "
                  "fp32 have fp32's range; the step times of those cells are stored but measure a diverged network");
    }
    return report;
  }

  // The compute ceiling of the cell's device and precision: the newest
  // measured one in the store (roofline ceilings), else the datasheet's.
  static void add_ceiling(Invocation& ctx, const engine::NetBenchConfig& cfg, engine::NetRecord& r) {
    r.ceiling_name = model::compute_ceiling_id(r.device, r.precision);
    std::string device_name;
    std::vector<hw::Peak> peaks;
    if (r.device == "gpu") {
      const hw::GpuInfo g = hw::query_gpu(cfg.gpu_index);
      device_name = g.name;
      peaks = hw::gpu_peaks(g);
    } else {
      const hw::CpuInfo c = hw::query_cpu();
      device_name = c.model_name;
      peaks = hw::cpu_peaks(c);
    }
    if (const auto v = store::latest_measurement(ctx.db(), device_name, r.ceiling_name)) {
      r.ceiling_flops = v->value;
      r.ceiling_source = fmt::format("measured (run {}, {})", v->run_id, v->measured_at);
    } else {
      for (const auto& p : peaks)
        if (p.id == r.ceiling_name) {
          r.ceiling_flops = p.dense;
          r.ceiling_source = "from the spec sheet (not measured here: run roofline ceilings)";
        }
    }
    if (r.ceiling_flops)
      r.params["ceiling"] = {{"name", r.ceiling_name}, {"flops", *r.ceiling_flops}, {"source", r.ceiling_source}};
    if (r.busy_fraction) r.params["busy_fraction"] = *r.busy_fraction;
  }

  // One counted kernel into its layer's sum: work FLOPs by unit ("tensor.bf16",
  // "cuda.fp32"), DRAM and L2 bytes, time.
  static void add_counted(engine::CountedWork& c, const prof::KernelCounters& k) {
    const double moves = prof::fp16_register_move_flops(k);  // work FLOPs, as the profile's tables count them
    for (const auto& [prec, counted] : k.flops) {
      const double f = prec == "fp16" ? std::max(0.0, counted - moves) : counted;
      c.by_unit["cuda." + prec] += f, c.flops += f;
    }
    for (const auto& [prec, f] : k.tensor_flops) c.by_unit["tensor." + prec] += f, c.flops += f, c.tensor_flops += f;
    c.dram_bytes += k.dram_bytes();
    c.l2_bytes += k.l2_read_bytes + k.l2_write_bytes;
    c.seconds += k.duration_ns * 1e-9;
    c.kernels += static_cast<int>(k.instances);
  }

  // bench --profile with the networks: the cell's profiled eager steps, their
  // kernels mapped to layers and passes by NVTX, stored with this run.
  void take_net_profile(Invocation& ctx, const engine::NetBenchConfig& cfg, const engine::NetRecord& r,
                        std::vector<Report>& out) {
    const std::string label = fmt::format("{} gpu {} batch {} {}", r.model, r.precision, r.batch, r.mode);
    for (const auto& why : bench_profile::take_failures())
      out.emplace_back("bench").warn(fmt::format("{}: not profiled: {}", label, why));
    std::vector<prof::ProfileData> taken = bench_profile::take();
    if (taken.empty()) return;
    // The first trace is the busy-fraction block (graph replays); the last, the eager steps.
    prof::ProfileData p = std::move(taken.back());
    p.command = fmt::format("roofline bench {} --device gpu --precision {} --batch {} --mode {} ({} eager steps)",
                            r.model, r.precision, r.batch, r.mode, cfg.profile_steps);
    p.exit_status = "in-process";
    p.complete = true;
    std::map<std::string, double> by_range;
    for (const auto& [key, k] : p.kernels) by_range[k.nvtx_path] += k.duration.total();
    // bench --counters: the two counter runs of this cell, merged, kept with the profile and per layer.
    std::map<std::string, engine::CountedWork> counted;
    if (const auto runs = bench_profile::take_counters(); !runs.empty()) {
      std::vector<prof::KernelCounters> all, dram;
      for (const auto& run : runs) (run.run == 0 ? all : dram) = run.kernels;
      size_t unmatched = 0;
      p.counters = prof::replace_dram_bytes(std::move(all), dram, &unmatched);
      for (const auto& k : p.counters) add_counted(counted[k.nvtx_path], k);
      if (unmatched > 0)
        out.emplace_back("bench").warn(fmt::format(
            "{}: {} kernels of the counter run were not seen by the DRAM run: their DRAM bytes are the replayed "
            "counts (+16-19 MB per kernel on an H100, docs/counters.md)",
            label, unmatched));
    }
    p.diagnoses = prof::diagnose(p);  // with the counters' rules where counted
    const std::int64_t id = prof::store_profile(ctx.db(), ctx.run_id(), p, label);
    const engine::NetLayerRows rows = engine::net_layer_rows(r, by_range, cfg.profile_steps, counted);
    engine::store_net_layers(ctx.db(), ctx.run_id(), ctx.gpu_device_id(cfg.gpu_index), r, id, rows);
    Report rep("bench");
    rep.add(engine::net_layer_table(r, rows, cfg.profile_steps, 25));
    if (!counted.empty()) rep.add(engine::net_counter_table(r, rows, 25));
    rep.info(fmt::format("{}: stored as profile {}; its kernels, API calls and diagnoses: roofline profile --show {}",
                         label, id, id));
    out.push_back(std::move(rep));
  }

  // The profile of the GPU training run that produced `r` (if it was traced):
  // diagnosed, stored with this run, and its tables kept for the report.
  void take_profiles(Invocation& ctx, const engine::BenchRecord& r, std::vector<Report>& out) {
    const std::string label = fmt::format("{} gpu batch {} train", r.model, r.batch);
    for (const auto& why : bench_profile::take_failures())
      out.emplace_back("bench").warn(fmt::format("{}: not profiled: {}", label, why));
    for (auto& p : bench_profile::take()) {
      p.command = fmt::format("roofline bench {} --device gpu --batch {} (training, {} epochs)", r.model, r.batch,
                              cfg_epochs_);
      p.exit_status = "in-process";
      p.complete = true;
      p.diagnoses = prof::diagnose(p);
      std::int64_t id = prof::store_profile(ctx.db(), ctx.run_id(), p, label);
      Report rep("bench");
      prof::SummaryOptions opt;
      opt.label = label;
      opt.top = 15;
      prof::add_profile_tables(rep, p, opt);
      if (!no_graphs_)
        rep.info(label +
                 ": kernels replayed from CUDA graphs carry no NVTX range; add --no-graphs to map each kernel to "
                 "its layer and pass");
      rep.info(fmt::format("{}: stored as profile {} (roofline profile --show {})", label, id, id));
      out.push_back(std::move(rep));
    }
  }

  std::vector<std::string> models_;
  std::string device_ = "cpu,gpu", mode_ = "train,infer", batch_ = "1,64,128", data_, peer_, peer_script_;
  std::string lengths_ = "equal";
  CLI::Option* device_opt_ = nullptr;
  CLI::Option* data_threads_opt_ = nullptr;
  engine::TrainOptions o_;
  bool no_graphs_ = false, costs_ = false, keep_going_ = false, profile_ = false, no_compile_ = false, no_fold_ = false,
       counters_ = false;
  std::string precision_ = "fp32";
  std::string layout_;
  std::string gpus_, grad_dtype_ = "fp32", rank_out_;

  static std::vector<int> parse_gpu_counts(const std::string& list) {
    std::vector<int> out;
    for (auto n : parse_int_list(list, "--gpus")) {
      if (n < 1 || n > 1024) throw_usage(fmt::format("--gpus {}", n), "give GPU counts from 1, such as --gpus 1,2,4");
      if (std::find(out.begin(), out.end(), static_cast<int>(n)) == out.end()) out.push_back(static_cast<int>(n));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string seq_ = "128,384", checkpoint_, question_, context_;
  CLI::Option* seq_opt_ = nullptr;
  CLI::Option* batch_opt_ = nullptr;
  CLI::Option* mode_opt_ = nullptr;
  engine::NetBenchConfig net_;
  int cfg_epochs_ = 0, repeat_ = 1;
  std::string gpu_path_ = "auto";
};

ROOFLINE_COMMAND(BenchCommand)

}  // namespace roofline::cli
