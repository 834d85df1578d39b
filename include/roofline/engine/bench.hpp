// `roofline bench` as a library: trains and times models on the CPU and GPU
// at several batch sizes (seed 000's Table 4), optionally beside the PyTorch
// peer (peers/pytorch_bench.py), stores every result, and builds the
// tables. `roofline analyze` runs a quick version of it.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/core/report.hpp"
#include "roofline/engine/trainer.hpp"
#include "roofline/store/db.hpp"

namespace roofline::engine {

struct BenchConfig {
  std::vector<std::string> models = {"simple-mlp", "simple-cnn"};
  bool cpu = true, gpu = true;
  int gpu_index = 0;
  bool train = true, infer = true;
  std::vector<std::int64_t> batches = {1, 64, 128};
  std::string data_dir;        // empty: $ROOFLINE_DATA, else default_data_dir()
  TrainOptions train_options;  // epochs, max_steps, seed, sgd, graphs (batch is set per run)
  std::string peer;            // "" or "pytorch"
  std::string peer_script;     // empty: found next to the binary or in ./peers
  bool keep_going = false;     // a diverged run is recorded as such and the others still run
  int repeat = 1;              // rounds (run_benchmark): every cell this many times, 1 or more
  // A safetensors state_dict (the model's graph names: "fc1.weight", ...) to
  // start every run from instead of the seeded initialisation.
  std::string weights;
};

// One model × device × batch run (training and/or inference).
struct BenchRecord {
  std::string device;  // "cpu" or "gpu"
  std::string source;  // "roofline" or the peer's name
  std::string model;
  std::int64_t batch = 0;
  bool trained = false;
  int epochs = 0;
  std::int64_t steps = 0;
  double train_seconds = 0;
  std::vector<double> epoch_seconds;
  double test_loss = 0, test_accuracy = 0;
  double infer_median_s = 0, infer_iqr_s = 0;
  std::optional<double> busy_fraction;
  std::string busy_note;
  std::vector<float> first_losses;
  std::string gpu_path;  // roofline on the GPU: "fused-mlp", "fused-cnn" or "layers"
  // What bench_results has no column for: the options, the paths taken and
  // their notes, the CPU check (roofline's records), or what the peer printed.
  nlohmann::json params = nlohmann::json::object();
  // Set when the training loss became NaN or Inf (with --keep-going): where,
  // e.g. "step 41 of epoch 1"; nothing after that point was measured.
  std::string diverged;
  std::vector<std::int64_t> test_predictions;  // test images predicted as each class
  double seconds_per_step() const { return steps > 0 ? train_seconds / static_cast<double>(steps) : 0; }
};

// The host's CPU as the engine's threads find it just before the CPU runs:
// a register-only FMA loop on one thread, then on `threads` threads at once
// (the fast path's own pool), best of three each. Free cores read near the
// thread count; hyperthreads on half as many cores near half of it (the H100
// hosts' 16 vCPUs: 7.6–13.2× from call to call); a host whose
// vCPUs are contended reads lower still, and every CPU time measured there,
// ours and the peer's, moves with it (docs/engine.md).
struct CpuScaling {
  int threads = 0;
  double one_gflops = 0, all_gflops = 0;
  double ratio() const { return one_gflops > 0 ? all_gflops / one_gflops : 0; }
  // Under 0.4 of the thread count: less than hyperthreads on half the cores would give.
  bool contended() const { return threads > 1 && ratio() < 0.4 * threads; }
};
CpuScaling measure_cpu_scaling(int threads);
// "CPU check before timing: 16 threads ran ... at 8.3× one thread's rate ...",
// with a warning appended when contended(); "" for an unmeasured check.
std::string cpu_scaling_note(const CpuScaling& s);
// The check a CPU record stored (threads 0 when it has none).
CpuScaling cpu_scaling_of(const BenchRecord& r);

// What `roofline analyze` runs: simple-mlp and simple-cnn at batch 64 and 128,
// one epoch of at most 200 steps, on the CPU and (when present) the GPU.
BenchConfig quick_bench_config();

// The data directory: `cli` when given, else $ROOFLINE_DATA, else default_data_dir().
std::string resolve_data_dir(const std::string& cli);

using BenchProgress =
    std::function<void(const std::string& what, int epoch, int epochs, std::int64_t step, std::int64_t steps)>;
// Called with each record as soon as it is measured (so it can be stored before the next run).
using BenchSink = std::function<void(const BenchRecord&)>;

// A line for the user about what runs next (a round, the peer).
using BenchStatus = std::function<void(const std::string& line)>;

// Runs the roofline side of the benchmark once on each device cfg names, in
// the order models × batches × devices. Throws on bad configuration, missing
// data, a GPU asked for but absent, or a non-finite loss (after the records
// already passed to `sink`); with cfg.keep_going a non-finite loss gives a
// record with `diverged` set and the next run starts.
std::vector<BenchRecord> run_bench(const BenchConfig& cfg, const BenchSink& sink, const BenchProgress& progress);

// What a whole benchmark measured, each side's records in the order they ran.
struct BenchResults {
  std::vector<BenchRecord> ours, peer;
  // The peer was asked for and failed (its later rounds were then skipped):
  // the benchmark's report says so, and the benchmark ends in this error.
  std::optional<Error> peer_error;
};

// `roofline bench` as a whole: every CPU cell first (all rounds), then the
// GPU's, since CPU runs that come after GPU training runs in the same process
// read slower. Each of cfg.repeat rounds runs roofline's cells on the device
// (run_bench), then the peer's (cfg.peer) on the same device in a fresh
// process: interleaved, so that a slow spell of the machine falls on both
// sides. `sink` gets every record, ours and the peer's, as soon as it is
// measured, with params.round set when there are several rounds; `status`
// announces each round (when there are several) and each peer run. Throws as
// run_bench does; the peer's failure is kept in the results instead.
BenchResults run_benchmark(const BenchConfig& cfg, const BenchSink& sink, const BenchProgress& progress,
                           const BenchStatus& status);
// The error a finished benchmark ends with once its report is shown: the
// peer's failure, else Error(Numeric) naming every diverged run; none when
// every run succeeded.
std::optional<Error> bench_failure(const BenchResults& results);

// Runs the peer script and parses its records. Throws Error(Unsupported)
// when python3 or the peer's framework is missing (the message says which).
std::vector<BenchRecord> run_peer(const BenchConfig& cfg, const std::string& data_dir);
// The peer script `rel` (under the repository): `hint` when given, else
// $ROOFLINE_PEER_SCRIPT, else next to the binary or in the working directory.
std::string find_peer_script(const std::string& hint, const std::string& rel = "peers/pytorch_bench.py");
// Runs a peer command (python3 …), passing its stderr through, and parses the
// JSON it prints. Throws Error(Unsupported) when python3 or the framework is
// missing (exit status 127 or 3), Error(Internal) on another failure.
nlohmann::json run_peer_command(const std::string& cmd);
// Parses the peer's JSON output (also used by tests).
std::vector<BenchRecord> parse_peer_json(const nlohmann::json& j, const std::string& peer);

// Stores a record in bench_results (one row per mode) and, once per model
// and batch, the model's per-layer costs in `layers`.
void store_bench_record(store::Db& db, std::int64_t run_id, std::optional<std::int64_t> device_id, const BenchRecord& r,
                        const BenchConfig& cfg);
void store_layer_costs(store::Db& db, std::int64_t run_id, const std::string& model, std::int64_t batch);
// ... for every model and batch the benchmark runs.
void store_layer_costs(store::Db& db, std::int64_t run_id, const BenchConfig& cfg);

// "roofline simple-cnn cpu batch 1 at step 41 of epoch 1; ..." for every
// diverged record, or "" when none diverged.
std::string describe_diverged(const std::vector<BenchRecord>& records);
// One warning per trained record whose model never predicts some class on the
// test set (a dead output unit), naming the classes; empty when none.
std::vector<std::string> dead_class_warnings(const std::vector<BenchRecord>& records);

// Seed 000's Table 4 (Batch | CPU Train (s) | CPU Infer (µs) | GPU Train (s) |
// GPU Infer (µs) | Model) with GPU speedups, for one source of records.
Table table4(const std::vector<BenchRecord>& records, const std::string& source);
// Every record in detail: per-epoch times, per-step time, accuracy, loss, busy fraction.
Table details_table(const std::vector<BenchRecord>& records);
// roofline vs the peer on the same model, device and batch, with ratios.
Table peer_table(const std::vector<BenchRecord>& ours, const std::vector<BenchRecord>& peer);

// --repeat: the records of every round (each cell once a round) → one record
// per cell, the round with the median training step (its inference figure
// the rounds' median), for Table 4.
std::vector<BenchRecord> median_records(const std::vector<BenchRecord>& records);
// --repeat: per cell, the median, min and max over the rounds of roofline's
// and the peer's training step (train) or inference (!train), the ratio of
// the medians and the lowest and highest ratio of one round.
Table repeat_table(const std::vector<BenchRecord>& ours, const std::vector<BenchRecord>& peer, bool train);
// FLOPs and bytes per layer and pass at a batch size.
Table cost_table(const std::string& model, std::int64_t batch);

// A benchmark's tables and warnings: Table 4 from each cell's median round
// (roofline's, then the peer's), the peer table (one round) or the rounds'
// spread (several), every run in detail, the peer's failure, dead classes and
// a contended CPU check; with `costs`, each model's per-layer costs at the
// last batch size.
void add_bench_tables(Report& report, const BenchConfig& cfg, const BenchResults& results, bool costs);

}  // namespace roofline::engine
