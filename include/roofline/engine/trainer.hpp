// Training, evaluation and inference timing of a Model on one Context, the
// same code for every backend. On the GPU the data set is uploaded once, each
// epoch's order once, and a step (gather, forward, loss, backward, update) is
// captured as a CUDA graph and replayed; the loss, accuracy and the first
// non-finite step are accumulated on the device and read once per epoch.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/core/stats.hpp"
#include "roofline/engine/data.hpp"
#include "roofline/engine/fused.hpp"
#include "roofline/engine/model.hpp"

namespace roofline::engine {

// GPU kernel time over a region, from CUPTI activity records. The profiler
// area provides it (an in-process tracer) by registering a factory; without
// one the busy fraction is reported as unavailable, never estimated.
class KernelTimeSource {
 public:
  virtual ~KernelTimeSource() = default;
  virtual void start() = 0;
  // Stops collecting and returns the time the GPU spent running kernels
  // (union of kernel intervals, seconds) since start().
  virtual double stop() = 0;
};
using KernelTimeFactory = std::function<std::unique_ptr<KernelTimeSource>(int gpu)>;
void register_kernel_time_factory(KernelTimeFactory f);
const KernelTimeFactory& kernel_time_factory();  // empty when none is registered

struct TrainOptions {
  std::int64_t batch = 64;
  int epochs = 5;
  std::int64_t max_steps = 0;  // per epoch; 0 = the whole training set
  std::uint64_t seed = 1;
  std::vector<float> initial_params;  // Model::param_count() values; empty: drawn from `seed`
  ops::SgdConfig sgd;
  bool use_graphs = true;                      // Cuda: replay captured steps
  int steps_per_graph = 8;                     // Cuda: steps captured into one graph
  bool check_every_step = false;               // read the non-finite flag after every step (debugging; syncs)
  GpuPath gpu_path = GpuPath::Auto;            // Cuda: fused kernels (fused.hpp) or one kernel per op
  std::int64_t fused_steps_per_launch = 1024;  // Cuda, fused path: steps per cooperative launch
  std::int64_t eval_batch = 500;
  int infer_reps = 200;                   // single-batch inference repetitions (after warm-up)
  std::int64_t record_first_losses = 20;  // per-step losses kept from the first epoch
  // Called after each step from the host (the step may still be running on a GPU).
  std::function<void(int epoch, std::int64_t step, std::int64_t steps)> progress;
};

struct EpochResult {
  double seconds = 0;
  std::int64_t steps = 0;
  double train_loss = 0;      // mean over the epoch's samples
  double train_accuracy = 0;  // on the fly, with the weights of each step
};

struct TrainResult {
  std::string model, backend;
  std::int64_t batch = 0, steps = 0, params = 0;
  std::vector<EpochResult> epochs;
  double train_seconds = 0;  // every epoch, wall clock
  double test_loss = 0, test_accuracy = 0;
  Summary infer_seconds;                // one batch of `batch` test images, synchronised
  std::optional<double> busy_fraction;  // kernel time / wall time while training (GPU)
  std::string busy_note;                // why it is missing
  std::vector<float> first_losses;      // per-step batch losses of epoch 1
  // Test images predicted as each class (argmax of the logits; ties go to the
  // lowest class). A class never predicted is a dead output (e.g. a logit the
  // final ReLU keeps at 0), which explains an accuracy ~10 points low.
  std::vector<std::int64_t> test_predictions;
  std::string gpu_path;         // GPU: "fused-mlp", "fused-cnn" or "layers"; empty on the CPU
  std::string gpu_path_note;    // why the layer path ran (when it did)
  std::string infer_path;       // GPU: the inference's path ("fused-mlp", "layers"); empty on the CPU
  std::string infer_path_note;  // the candidates' medians when it was picked by timing
  // Host time of Network::prepare_inference before the inference was timed (the
  // fast CPU backend's transposed Linear weights); unset where nothing was made.
  std::optional<double> infer_prepare_seconds;
  Normalization norm;
  PassCosts step_cost;  // one full-batch step (layers; loss and optimiser not included)
};

// The training loss became NaN or Inf: an Error(Numeric) that also says where,
// so `roofline bench --keep-going` can record the run as diverged and go on.
class NonFiniteLoss : public Error {
 public:
  NonFiniteLoss(const std::string& what, const std::string& hint, int epoch, std::int64_t step_in_epoch,
                std::int64_t step_of_run)
      : Error(ErrorKind::Numeric, what, hint), epoch(epoch), step_in_epoch(step_in_epoch), step_of_run(step_of_run) {}
  int epoch;                   // 1-based
  std::int64_t step_in_epoch;  // 1-based; 0 when only the epoch's mean was found non-finite
  std::int64_t step_of_run;    // 1-based, counting every epoch's steps
};

// Throws Error(Usage) for a batch of 0 or above the training-set size and
// negative epochs, NonFiniteLoss (an Error(Numeric)) naming the step when the
// loss is not finite, Error(Device) when the GPU runs out of memory.
TrainResult train_and_evaluate(Context& ctx, const Model& model, const DataSplit& data, const TrainOptions& opts);

// Evaluates on a set (in order): mean loss and accuracy.
struct EvalResult {
  double loss = 0, accuracy = 0;
  std::vector<std::int64_t> predictions;  // per class
};

}  // namespace roofline::engine
