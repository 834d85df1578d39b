// `roofline bench alexnet,resnet18`: training steps and inference of the graph
// networks on the CPU and GPU in each precision and batch size (seed 000's
// Tables 11 and 12), beside PyTorch eager and torch.compile run on the same
// machine in the same call (peers/pytorch_nets.py).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "roofline/core/report.hpp"
#include "roofline/engine/precision.hpp"
#include "roofline/engine/tensor.hpp"
#include "roofline/store/db.hpp"

namespace roofline::engine {

struct NetBenchConfig {
  std::vector<std::string> models = {"resnet18"};
  bool cpu = false, gpu = true;
  int gpu_index = 0;
  bool train = true, infer = true;
  std::vector<Precision> precisions = {Precision::FP32};
  std::vector<std::int64_t> batches = {128};
  int steps = 20, warmup = 5;  // timed and untimed steps per cell (CPU cells past batch 1: a quarter, at least 3)
  bool graphs = true;          // GPU: the step replayed as one CUDA graph
  std::string peer;            // "" or "pytorch"
  std::string peer_script;     // empty: find_peer_script's search
  bool peer_compile = true;    // the peer also runs torch.compile
  std::string weights;         // a safetensors file of torchvision's names to start from (else the seeded init)
  // GPU: after the timed steps, `profile_steps` more steps run eagerly (not
  // replayed) under the kernel-time source, so that every kernel carries its
  // layer's NVTX range (the CLI's tracer records them: bench --profile).
  bool profile = false;
  int profile_steps = 3;
  // With profile: one step more, eager, under the hardware counters (the
  // CLI's CounterSource: the profiler's range profiler, every launch), in two
  // runs (counter_runs below), so that every kernel's FLOPs by unit and
  // precision and its DRAM and L2 bytes are filed under its layer and pass.
  bool counters = false;
  bool fold_batchnorm = true;  // inference: BatchNorm folded into the convolution before it (GraphOptions)
  // The activations' layout; unset: the network's own choice (GraphOptions::format).
  std::optional<MemoryFormat> layout;
  // An ImageFolder of JPEGs instead of synthetic batches (DIR, or DIR/train
  // and DIR/val): src/engine/bench/net_data.hpp. data_threads: its decoding
  // threads (0: the hardware's).
  std::string data;
  int data_threads = 0;
  // Data-parallel (net_scaling.hpp): the GPU counts of bench --gpus (empty:
  // one GPU, no scaling table), what the gradients travel as, and how long a
  // rank waits for its peers before it gives up on them.
  std::vector<int> gpus;
  std::int64_t seq = 128;  // bert-base with --gpus: tokens per sequence
  DType grad_dtype = DType::F32;
  int rank_timeout_s = 300;
};

// One cell: a model × device × precision × batch × mode, of one source.
struct NetRecord {
  std::string source = "roofline";  // or "pytorch", "pytorch-compile"
  std::string model, device, precision, mode;  // device "cpu"/"gpu"; mode "train"/"infer"
  std::int64_t batch = 0;  // per GPU
  int gpus = 1;            // data-parallel: the ranks, one GPU each (flops and images count all of them)
  int steps = 0;
  double median_s = 0, iqr_s = 0, min_s = 0, max_s = 0;  // per step (train) or per batch (infer)
  std::optional<double> peak_bytes;  // GPU: device memory of the cell (roofline: every buffer it planned)
  double flops = 0;                  // per step or batch, from the engine's per-pass costs
  std::optional<double> loss;        // train: the loss after the timed steps
  bool batchnorm_folded = false;     // infer: BatchNorm ran folded into the convolutions (GraphNetwork::folded_batchnorms)
  nlohmann::json params = nlohmann::json::object();
  // GPU: kernel time over wall time of `steps` steps run back to back (CUDA
  // graph replays when graphs are on), from CUPTI; absent with busy_note's reason.
  std::optional<double> busy_fraction;
  std::string busy_note;
  // The ceiling the achieved rate is held against (filled by the caller, who
  // has the store): "bf16.tensor", "fp32.cuda", "fp32.simd"...; its FLOP/s and
  // "measured <date>" or "datasheet".
  std::string ceiling_name, ceiling_source;
  std::optional<double> ceiling_flops;
  // Lines for the report's warnings: fp16 training steps skipped on a gradient overflow.
  std::vector<std::string> warnings;
  double images_per_s() const { return median_s > 0 ? static_cast<double>(batch * gpus) / median_s : 0; }
  double tflops() const { return median_s > 0 ? flops / median_s * 1e-12 : 0; }
  std::optional<double> ceiling_share() const {  // of one GPU's ceiling times the GPUs
    if (!ceiling_flops || *ceiling_flops <= 0 || median_s <= 0) return std::nullopt;
    return flops / median_s / (*ceiling_flops * gpus);
  }
};


using NetSink = std::function<void(const NetRecord&)>;
using NetStatus = std::function<void(const std::string& line)>;

// roofline's cells, in the order models × devices × precisions × batches ×
// modes, each given to `sink` as soon as it is measured. Throws Error(Usage)
// for an unknown model, Error(Device) for a GPU asked for but absent.
std::vector<NetRecord> run_net_bench(const NetBenchConfig& cfg, const NetSink& sink, const NetStatus& status);
// The peer's cells (eager, and torch.compile unless !cfg.peer_compile).
std::vector<NetRecord> run_net_peer(const NetBenchConfig& cfg);
std::vector<NetRecord> parse_net_peer_json(const nlohmann::json& j);
// One record of a peer script's "records" list (peers/pytorch_nets.py, pytorch_bert.py, pytorch_ddp.py):
// its source, model, device, precision, mode, batch, GPUs, steps, times, peak memory, loss, and in params
// the torch version, threads, layout (as "format") and loss scale where given; the FLOPs are the caller's
// (from the engine's costs of that model).
NetRecord parse_peer_record(const nlohmann::json& x);
// The largest batch whose planned bytes fit in free_bytes less `margin`,
// from the bytes a network plans at batch 1 and 2 (affine in the batch);
// 0 when not even one image fits. The bench's message when a GPU cell runs out
// of memory.
std::int64_t largest_batch_that_fits(std::int64_t bytes_at_1, std::int64_t bytes_at_2, std::int64_t free_bytes,
                                     std::int64_t margin);
// What that message leaves for cuDNN's and cuBLASLt's workspaces and the
// im2col matrix, which the networks' planned bytes do not count.
inline constexpr std::int64_t kLibraryMargin = std::int64_t{512} << 20;
// One row of bench_results (schema v4's precision and step columns), in its own transaction.
void store_net_record(store::Db& db, std::int64_t run_id, std::optional<std::int64_t> device_id, const NetRecord& r);

// With --data: the tables' note (what the cells read; the peer's data is
// synthetic), "" without; and the report's warnings: cells where waiting for
// images took more than 5% of the step, folders with files that could not be
// decoded (net_data.cpp).
std::string net_data_note(const NetBenchConfig& cfg);
void add_net_data_warnings(Report& report, const std::vector<NetRecord>& records);

// Seed 000's Tables 11 and 12: per model, batch and precision, the CPU and GPU
// times of training (per step) and inference (per batch) and the GPU speedup.
Table net_table(const std::vector<NetRecord>& records, const std::string& source);
// roofline's cells with images/s, TFLOP/s and its share of the ceiling, the
// GPU busy fraction and the planned memory.
Table net_detail_table(const std::vector<NetRecord>& ours);
// roofline beside the peer: per cell both times, memory and the ratios to
// eager and to torch.compile.
Table net_peer_table(const std::vector<NetRecord>& ours, const std::vector<NetRecord>& peer);
// One layer and pass of a profiled cell: GPU kernel time per step (from the
// kernels' NVTX ranges "<model>/<layer>/<pass>") and the engine's paper
// FLOPs and bytes of the pass. The optimizer is one row (layer "optimizer").
// What the hardware counters measured of one layer's pass in one step (the
// kernels launched in its NVTX range, summed).
struct CountedWork {
  double flops = 0;         // every unit and precision
  double tensor_flops = 0;  // of which on the tensor cores
  std::map<std::string, double> by_unit;  // "tensor.bf16", "cuda.fp32", ... -> FLOPs
  double dram_bytes = 0, l2_bytes = 0;
  double seconds = 0;       // the kernels' durations under the profiler (serialized launches)
  int kernels = 0;
};
struct NetLayerRow {
  std::int64_t index = 0;  // the node's index in the graph (optimizer: the node count)
  std::string layer, op, pass;
  double seconds = 0;      // per step
  double flops = 0, bytes = 0;
  std::optional<CountedWork> counted;  // bench --counters
};
struct NetLayerRows {
  std::vector<NetLayerRow> rows;  // the graph's order, each node's passes in order
  double step_kernel_s = 0;       // all kernel time per step
  double mapped_s = 0;            // of which inside a layer's range
  std::optional<CountedWork> counted_total;  // every counted kernel of the step, in a layer or not
};
// kernel_ns: NVTX path -> kernel time (ns) summed over `steps` profiled steps;
// counted: NVTX path -> the counters of one step (empty: not counted).
NetLayerRows net_layer_rows(const NetRecord& r, const std::map<std::string, double>& kernel_ns, int steps,
                            const std::map<std::string, CountedWork>& counted = {});

// The counters' side of bench --counters, provided by the CLI (the profiler's
// range profiler in-process; the engine does not link the profiler). A
// counter run profiles every kernel launched between start() and stop(),
// filing each under current_nvtx_range(). Two runs of one eager step each:
// run 0 reads every metric (kernel replay), run 1 the DRAM bytes alone in one
// pass (replay's save and restore of memory leaves dirty L2 lines that a
// replayed range writes back: docs/counters.md "DRAM writes").
class CounterSource {
 public:
  virtual ~CounterSource() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
};
inline constexpr int kCounterRuns = 2;
using CounterSourceFactory = std::function<std::unique_ptr<CounterSource>(int gpu, int run)>;
void register_counter_source_factory(CounterSourceFactory f);
const CounterSourceFactory& counter_source_factory();  // empty when none is registered
// The rows as a table, slowest first: time, share of the step, paper costs and
// the rates they give; the first `top` rows (0: all).
Table net_layer_table(const NetRecord& r, const NetLayerRows& rows, int steps, size_t top = 0);
// With counters (bench --counters): per layer and pass, the counted FLOPs
// (and the unit that did most of them) and DRAM and L2 bytes beside the paper
// figures, with their ratios; slowest first, the first `top` rows (0: all).
Table net_counter_table(const NetRecord& r, const NetLayerRows& rows, size_t top = 0);
// The rows into the store's `layers` table, with the cell's device, precision,
// mode and profile, in one transaction.
void store_net_layers(store::Db& db, std::int64_t run_id, std::optional<std::int64_t> device_id, const NetRecord& r,
                      std::optional<std::int64_t> profile_id, const NetLayerRows& rows);

}  // namespace roofline::engine
