// `roofline bench alexnet,resnet18`: training steps and inference of the graph
// networks on the CPU and GPU in each precision and batch size (seed 000's
// Tables 11 and 12), beside PyTorch eager and torch.compile run on the same
// machine in the same call (peers/pytorch_nets.py).
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "roofline/core/report.hpp"
#include "roofline/engine/precision.hpp"
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
  // An ImageFolder of JPEGs instead of synthetic batches (DIR, or DIR/train
  // and DIR/val): src/engine/bench/net_data.hpp. data_threads: its decoding
  // threads (0: the hardware's).
  std::string data;
  int data_threads = 0;
};

// One cell: a model × device × precision × batch × mode, of one source.
struct NetRecord {
  std::string source = "roofline";  // or "pytorch", "pytorch-compile"
  std::string model, device, precision, mode;  // device "cpu"/"gpu"; mode "train"/"infer"
  std::int64_t batch = 0;
  int steps = 0;
  double median_s = 0, iqr_s = 0, min_s = 0, max_s = 0;  // per step (train) or per batch (infer)
  std::optional<double> peak_bytes;  // GPU: device memory of the cell (roofline: every buffer it planned)
  double flops = 0;                  // per step or batch, from the engine's per-pass costs
  std::optional<double> loss;        // train: the loss after the timed steps
  nlohmann::json params = nlohmann::json::object();
  double images_per_s() const { return median_s > 0 ? static_cast<double>(batch) / median_s : 0; }
  double tflops() const { return median_s > 0 ? flops / median_s * 1e-12 : 0; }
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
// roofline beside the peer: per cell both times, images/s, TFLOP/s, memory and
// the ratios to eager and to torch.compile.
Table net_peer_table(const std::vector<NetRecord>& ours, const std::vector<NetRecord>& peer);

}  // namespace roofline::engine
