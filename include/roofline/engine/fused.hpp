// Fused GPU training: a whole training step — the batch gathered from the
// uint8 images by the step index, forward, log-softmax + NLL, backward and the
// SGD-momentum update — in one persistent cooperative kernel that loops over
// a chunk of steps, with grid-wide barriers between the phases that depend on
// each other (tiny-cuda-nn's fully fused MLP in spirit; docs/engine.md,
// "Fused GPU paths"). Only models whose layers match a fused kernel have one:
//   fused-mlp  a stack of Linear(+ReLU) layers on flattened images (simple-mlp)
//   fused-cnn  simple-cnn's exact layer sequence
// Everything else trains on the general layer-by-layer path (graphs of one
// kernel per op), which also serves profiling with per-layer NVTX ranges.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "roofline/engine/ops.hpp"

namespace roofline::engine {

class Model;
class Network;

// --gpu-path: `auto` takes the fused path when the model has one (and graphs
// are on: --no-graphs asks for the per-layer path), `fused` requires it,
// `layers` never takes it.
enum class GpuPath { Auto, Fused, Layers };
GpuPath parse_gpu_path(const std::string& s);  // throws Error(Usage) naming the choices
const char* to_string(GpuPath p);              // "auto", "fused", "layers"

// The device data a fused training launch reads: the training set and this
// epoch's order (sample i of step s is order[s·stride + i]).
struct FusedBatch {
  ops::BatchShape shape;                 // rows (batch), stride, image and model sizes, normalisation
  const std::uint8_t* images = nullptr;  // (n, in_h, in_w)
  const std::uint8_t* labels = nullptr;  // (n)
  const std::int32_t* order = nullptr;   // (n)
};

class FusedPath {
 public:
  virtual ~FusedPath() = default;
  virtual std::string name() const = 0;      // "fused-mlp", "fused-cnn"
  virtual std::string describe() const = 0;  // grid, barriers per step: for notes and docs
  // Runs `steps` training steps of b.shape.batch samples from the device step
  // counter *stats.step on, and advances it by `steps`. The loss statistics go
  // to `stats` as ops::cross_entropy would put them; afterwards the Network's
  // parameters and momentum hold the result (so evaluation and the layer path
  // see it). Asynchronous on the context's stream; no allocation.
  virtual void train(const FusedBatch& b, std::int64_t steps, const ops::SgdConfig& sgd,
                     const ops::LossStats& stats) = 0;
  // Forward of `rows` samples of the Network's input() to softmax
  // probabilities (rows, classes). Asynchronous.
  virtual void infer(std::int64_t rows, float* probs) = 0;
};

// "fused-mlp" or "fused-cnn" when `model` fed image_h × image_w images has a
// fused kernel, else "" with *why saying why (no GPU needed to ask).
std::string fused_kernel_name(const Model& model, std::int64_t image_h, std::int64_t image_w, std::string* why);

// The fused path for `model` on `net` (its context, parameters, momentum,
// input buffer and batch size) fed images of image_h × image_w; null, with
// *why saying why, when there is none (a CPU context, a build without CUDA,
// a model without a fused kernel, images that would need resizing, sizes
// past the kernel's limits, or a kernel that does not fit this GPU).
std::unique_ptr<FusedPath> make_fused_path(const Model& model, Network& net, std::int64_t image_h, std::int64_t image_w,
                                           std::string* why);

}  // namespace roofline::engine
