// The fused kernels' arguments and launchers (fused_mlp.cu, fused_cnn.cu).
// No CUDA headers: fused_path.cpp includes this in CUDA builds. Every pointer
// is device memory on the context's device.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "roofline/engine/ops.hpp"

namespace roofline::engine {
struct CudaState;
}

namespace roofline::engine::fused {

constexpr int kThreads = 256;     // every fused kernel's block
constexpr int kMaxLayers = 6;     // fused-mlp: Linear layers
constexpr int kMaxClasses = 32;   // the loss keeps one class per lane of a warp
constexpr int kMaxHeadIn = 1024;  // fused-mlp: inputs of every layer after the first (a 4-float run per thread)
constexpr int kMaxSplits = 32;    // fused-mlp: K slices of the first layer (a row adds up that many partial sums)
constexpr int kSplitTile = 64;    // fused-mlp: the first layer's output tiles (rows × features)
constexpr int kPartialRowFloats = 16384;  // fused-mlp: a row's first-layer slices (splits × layer[0].out)
constexpr int kMaxRowSmemBytes = 160 * 1024;  // fused-mlp: the row phase's weights and vectors (+ 64 KB of tiles)

// Where a training step's samples come from: sample i of step s is
// images[order[s·stride + i]], normalised as x = (pixel/255 − mean)·inv_std
// (the model's input has the images' size: no resize).
struct BatchSource {
  const std::uint8_t* images = nullptr;  // (n, pixels)
  const std::uint8_t* labels = nullptr;  // (n)
  const std::int32_t* order = nullptr;   // (n)
  int pixels = 0;
  int stride = 0;
  float mean = 0, inv_std = 1;
};

// Launch geometry: `blocks` co-resident blocks of kThreads with `smem` bytes
// of dynamic shared memory each (cooperative launches need them all resident).
struct Launch {
  int blocks = 0;
  std::size_t smem = 0;
};

// ---- fused-mlp --------------------------------------------------------------
struct MlpLayer {
  int in = 0, out = 0;
  bool relu = false, bias = false;
  std::int64_t w_off = 0, b_off = 0;  // floats into the parameter block: w (out, in), b (out)
};

struct MlpArgs {
  int layers = 0;
  MlpLayer layer[kMaxLayers];
  // Ping-pong parameter blocks: step t reads params[t % 2] and writes
  // params[(t + 1) % 2]; params[0] is the Network's (the launch starts and
  // ends there: after an odd number of steps the kernel copies back).
  float* params[2] = {nullptr, nullptr};  // (param_count) each
  float* momentum = nullptr;              // (param_count)
  std::int64_t param_count = 0;
  float* act[kMaxLayers] = {};          // (max_batch, layer[l].out): outputs after the activation
  float* dz[kMaxLayers] = {};           // (max_batch, layer[l].out): loss gradients before the activation
  float* row_loss = nullptr;            // (max_batch)
  std::int32_t* row_correct = nullptr;  // (max_batch)
  float* partial = nullptr;             // (splits, rows, layer[0].out): the first layer's K-slice sums
  BatchSource src;                      // training
  // Training: the launch's batches, gathered and normalised by a kernel before
  // it (ops::gather_batch): step t's at xs + t·rows·layer[0].in (steps·rows ≤
  // xs_steps·max_batch).
  float* xs = nullptr;  // (xs_steps · max_batch, layer[0].in)
  int xs_steps = 0;
  const float* x = nullptr;             // inference: (rows, layer[0].in), already gathered
  float* probs = nullptr;               // inference: (rows, classes)
  ops::SgdConfig sgd;
  ops::LossStats stats;          // training: what ops::cross_entropy would add
  std::int32_t* step = nullptr;  // training: the device step counter (read at the start, advanced by `steps`)
  int rows = 0, steps = 0;
  // Diagnostics (ROOFLINE_FUSED_PHASES=1): block 0's SM clock and global
  // timer (ns) at the start of each step and after each of its grid barriers,
  // for the launch's first kPhaseSteps steps; the last row is inference's.
  // nullptr: not recorded.
  std::int64_t* phase_clock = nullptr;  // (kPhaseSteps + 1, kMaxPhases, 2)
};
constexpr int kPhaseSteps = 32;
constexpr int kMaxPhases = 2 * kMaxLayers + 2;
// Diagnostic phases (block 0, which always has row 0): the issue of the
// weight copies, the first layer's tiles, its barrier; in the row phase the
// wait for the staged weights, the hidden layers' forward, the last layer and
// loss, the backward of its first row, then the wait at the barrier; the
// weights' tiles and their barrier. Inference: first, stage, and the rest of
// its forward.
constexpr int kTrainPhases = 10;
constexpr int kInferPhases = 3;

constexpr int mlp_cdiv(int a, int b) { return (a + b - 1) / b; }

// The first layer's split-K plan: K slices of kc inputs, `splits` of them.
// 32-input slices when their jobs (kSplitTile² output tiles × slices) fit in
// one round of the grid, else 64-input slices (in rounds when they do not
// fit either). match_mlp keeps splits ≤ kMaxSplits.
struct FirstPlan {
  int kc = 0, splits = 0;
};
constexpr FirstPlan mlp_first_plan(int rows, int out0, int in0, int grid) {
  const int tiles = mlp_cdiv(rows, kSplitTile) * mlp_cdiv(out0, kSplitTile);
  const int s32 = mlp_cdiv(in0, 32);
  if (s32 <= kMaxSplits && tiles * s32 <= grid) return {32, s32};
  return {64, mlp_cdiv(in0, 64)};
}

// The row phase's shared memory, in floats from its start, each piece a
// multiple of 4 (so every piece stays 16-byte aligned): per layer l its
// weights w (out × in; l ≥ 1), bias b and output gradient d (out), and for
// l ≤ L−2 its activations v (out); then the logits (32), a reduction scratch
// (4·kThreads), and `total`, where the tiles' region begins. One walk, used by
// the host (sizes) and the kernel (pointers).
constexpr int kRowScratchFloats = 4 * kThreads;
constexpr std::int64_t mlp_round4(std::int64_t n) { return (n + 3) / 4 * 4; }
struct RowLayout {
  std::int64_t w[kMaxLayers] = {}, b[kMaxLayers] = {}, v[kMaxLayers] = {}, d[kMaxLayers] = {};
  std::int64_t z = 0, red = 0, total = 0;
};
constexpr RowLayout mlp_row_layout(const MlpLayer* layer, int layers) {
  RowLayout r;
  std::int64_t f = 0;
  for (int l = 0; l < layers; ++l) {
    if (l >= 1) r.w[l] = f, f += mlp_round4(static_cast<std::int64_t>(layer[l].out) * layer[l].in);
    r.b[l] = f, f += mlp_round4(layer[l].out);
    r.d[l] = f, f += mlp_round4(layer[l].out);
    if (l + 1 < layers) r.v[l] = f, f += mlp_round4(layer[l].out);
  }
  r.z = f, f += 32;
  r.red = f, f += kRowScratchFloats;
  r.total = f;
  return r;
}
constexpr std::int64_t mlp_row_floats(const MlpLayer* layer, int layers) {
  return mlp_row_layout(layer, layers).total;
}

// ROOFLINE_FUSED_PHASES's report from the phase_clock buffer copied to the
// host ((kPhaseSteps + 1) · kMaxPhases · 2 values): each phase's median over
// the recorded steps whose marks increase, in µs at the SM clock the global
// timer implies, then the last inference's phases (fused_path.cpp).
std::string mlp_phase_report(const std::vector<std::int64_t>& clocks);

// Floats of the first layer's partial sums for any batch of 1 … max_batch rows.
std::int64_t mlp_partial_floats(const MlpLayer& first, std::int64_t max_batch, int grid);

// Shared memory and grid for the MLP kernels (the same for training and
// inference); throws Error(Unsupported) when they cannot be co-resident.
Launch mlp_launch(const CudaState* st, const MlpArgs& a);
std::size_t mlp_smem_bytes(const MlpArgs& a);
void mlp_train(const CudaState* st, const MlpArgs& a, const Launch& l);
void mlp_infer(const CudaState* st, const MlpArgs& a, const Launch& l);

// ---- fused-cnn (simple-cnn's layers) -----------------------------------------
// conv 1→1 5×5 (28→24) → maxpool 2 → conv 1→1 5×5 (12→8) → maxpool 2 →
// flatten 16 → fc1 16→hidden (+ReLU?) → fc2 hidden→classes (+ReLU?).
struct CnnArgs {
  float* params = nullptr;    // (param_count): updated in place
  float* momentum = nullptr;  // (param_count)
  float* partials = nullptr;  // (blocks, param_count): each block's gradient of a step
  std::int64_t param_count = 0;
  std::int64_t c1w = 0, c1b = 0, c2w = 0, c2b = 0, f1w = 0, f1b = 0, f2w = 0, f2b = 0;  // offsets
  bool c1_relu = false, c2_relu = false, f1_relu = true, f2_relu = false;
  int hidden = 0, classes = 0;
  float* row_loss = nullptr;            // (max_batch)
  std::int32_t* row_correct = nullptr;  // (max_batch)
  BatchSource src;
  const float* x = nullptr;  // inference: (rows, 28·28)
  float* probs = nullptr;    // inference: (rows, classes)
  ops::SgdConfig sgd;
  ops::LossStats stats;
  std::int32_t* step = nullptr;  // training: the device step counter
  int rows = 0, steps = 0;
};

std::size_t cnn_smem_bytes(const CnnArgs& a);
Launch cnn_launch(const CudaState* st, const CnnArgs& a);  // training (cooperative)
void cnn_train(const CudaState* st, const CnnArgs& a, const Launch& l);
void cnn_infer(const CudaState* st, const CnnArgs& a);

}  // namespace roofline::engine::fused
