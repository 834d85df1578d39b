// Which models have a fused GPU training kernel, and the host side of those
// kernels: matching a model's layers, the buffers the kernels need beside the
// Network's, and the launches (fused_mlp.cu, fused_cnn.cu).
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <vector>

#include "roofline/core/env.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/engine/fused.hpp"
#include "roofline/engine/layer.hpp"
#include "roofline/engine/model.hpp"
#include "roofline/engine/network.hpp"
#include "src/engine/fused/fused_launch.hpp"

namespace roofline::engine {

GpuPath parse_gpu_path(const std::string& s) {
  const std::string v = to_lower(trim(s));
  if (v == "auto") return GpuPath::Auto;
  if (v == "fused") return GpuPath::Fused;
  if (v == "layers") return GpuPath::Layers;
  throw_usage(fmt::format("unknown GPU path '{}'", s), "use --gpu-path auto, fused or layers");
}

const char* to_string(GpuPath p) {
  switch (p) {
    case GpuPath::Auto:
      return "auto";
    case GpuPath::Fused:
      return "fused";
    case GpuPath::Layers:
      return "layers";
  }
  return "?";
}

namespace {

using Kind = LayerSpec::Kind;
using ops::Activation;

bool plain_act(Activation a) { return a == Activation::None || a == Activation::ReLU; }

// fused-mlp: [Flatten] Linear(+ReLU) × L, 2 ≤ L ≤ kMaxLayers, on images of the
// model's input size. Fills `layers` or says why not.
bool match_mlp(const Model& model, std::int64_t ih, std::int64_t iw, std::vector<fused::MlpLayer>& layers,
               std::string& why) {
  const auto& ls = model.layers();
  size_t i = 0;
  while (i < ls.size() && ls[i]->spec().kind == Kind::Flatten) ++i;
  for (; i < ls.size(); ++i) {
    const LayerSpec s = ls[i]->spec();
    if (s.kind != Kind::Linear || !plain_act(s.act)) {
      why = "its layers are not all Linear(+ReLU)";
      return false;
    }
    fused::MlpLayer L;
    L.in = static_cast<int>(s.in);
    L.out = static_cast<int>(s.out);
    L.relu = s.act == Activation::ReLU;
    L.bias = s.bias;
    L.w_off = model.param_offset(i);
    L.b_off = L.w_off + Layer::align(s.in * s.out);
    layers.push_back(L);
  }
  const Shape& in = model.input_shape();
  if (layers.size() < 2 || layers.size() > static_cast<size_t>(fused::kMaxLayers)) {
    why = fmt::format("fused-mlp takes 2 to {} Linear layers", fused::kMaxLayers);
    return false;
  }
  if (in.size() != 3 || in[0] != 1 || in[1] != ih || in[2] != iw || layers[0].in != ih * iw) {
    why = "its input is not the images as they are (fused-mlp does not resize)";
    return false;
  }
  const fused::MlpLayer& head = layers.back();
  if (head.out > fused::kMaxClasses || head.out != model.classes()) {
    why = fmt::format("fused-mlp's loss takes at most {} classes", fused::kMaxClasses);
    return false;
  }
  if (layers[0].in % 4 != 0) {  // the tiles load runs of 4 inputs (fused_device.cuh)
    why = fmt::format("fused-mlp's first layer takes a multiple of 4 inputs (it has {})", layers[0].in);
    return false;
  }
  for (size_t l = 1; l < layers.size(); ++l)
    if (layers[l].in % 4 != 0 || layers[l].in > fused::kMaxHeadIn) {
      why = fmt::format("fused-mlp's layers after the first take a multiple of 4 inputs, at most {} (layer {} has {})",
                        fused::kMaxHeadIn, l + 1, layers[l].in);
      return false;
    }
  if (layers[0].out * fused::kMaxSplits > fused::kPartialRowFloats) {
    why = fmt::format("fused-mlp's first layer takes at most {} outputs", fused::kPartialRowFloats / fused::kMaxSplits);
    return false;
  }
  if (layers[0].in > fused::kMaxSplits * 64) {
    why = fmt::format("fused-mlp's first layer takes at most {} inputs", fused::kMaxSplits * 64);
    return false;
  }
  const std::int64_t row_bytes = 4 * fused::mlp_row_floats(layers.data(), static_cast<int>(layers.size()));
  if (row_bytes > fused::kMaxRowSmemBytes) {
    why = fmt::format("fused-mlp keeps the weights of every layer after the first in shared memory: {} KB > {} KB",
                      row_bytes / 1024, fused::kMaxRowSmemBytes / 1024);
    return false;
  }
  return true;
}

// fused-cnn: exactly simple-cnn's sequence (conv 1→1 5×5, pool 2, conv 1→1
// 5×5, pool 2, flatten, Linear 16→H, Linear H→C; biases everywhere) on 28×28
// images.
bool match_cnn(const Model& model, std::int64_t ih, std::int64_t iw, fused::CnnArgs& a, std::string& why) {
  const auto& ls = model.layers();
  why = "its layers are not simple-cnn's (conv 5×5, pool 2, conv 5×5, pool 2, flatten, Linear, Linear)";
  if (ls.size() != 7) return false;
  std::vector<LayerSpec> s;
  for (const auto& l : ls) s.push_back(l->spec());
  auto conv_ok = [](const LayerSpec& c) {
    return c.kind == Kind::Conv2d && c.c == 1 && c.k == 1 && c.kernel == 5 && c.stride == 1 && c.pad == 0 && c.bias &&
           plain_act(c.act);
  };
  auto pool_ok = [](const LayerSpec& p) { return p.kind == Kind::MaxPool2d && p.kernel == 2 && p.stride == 2; };
  if (!conv_ok(s[0]) || !pool_ok(s[1]) || !conv_ok(s[2]) || !pool_ok(s[3]) || s[4].kind != Kind::Flatten) return false;
  if (s[5].kind != Kind::Linear || s[5].in != 16 || !s[5].bias || !plain_act(s[5].act)) return false;
  if (s[6].kind != Kind::Linear || s[6].in != s[5].out || !s[6].bias || !plain_act(s[6].act)) return false;
  const Shape& in = model.input_shape();
  if (in != Shape{1, 28, 28} || ih != 28 || iw != 28) {
    why = "fused-cnn takes 28×28 images as they are";
    return false;
  }
  if (s[6].out > fused::kMaxClasses || s[6].out != model.classes()) {
    why = fmt::format("fused-cnn's loss takes at most {} classes", fused::kMaxClasses);
    return false;
  }
  if (s[5].out > 4096) {
    why = "fused-cnn's hidden layer takes at most 4096 features";
    return false;
  }
  a.c1w = model.param_offset(0);
  a.c1b = a.c1w + Layer::align(25);
  a.c2w = model.param_offset(2);
  a.c2b = a.c2w + Layer::align(25);
  a.f1w = model.param_offset(5);
  a.f1b = a.f1w + Layer::align(16 * s[5].out);
  a.f2w = model.param_offset(6);
  a.f2b = a.f2w + Layer::align(s[5].out * s[6].out);
  a.c1_relu = s[0].act == Activation::ReLU;
  a.c2_relu = s[2].act == Activation::ReLU;
  a.f1_relu = s[5].act == Activation::ReLU;
  a.f2_relu = s[6].act == Activation::ReLU;
  a.hidden = static_cast<int>(s[5].out);
  a.classes = static_cast<int>(s[6].out);
  why.clear();
  return true;
}

}  // namespace

namespace fused {

std::int64_t mlp_partial_floats(const MlpLayer& first, std::int64_t max_batch, int grid) {
  std::int64_t most = 0;
  for (std::int64_t r = 1; r <= max_batch; ++r) {
    const FirstPlan p = mlp_first_plan(static_cast<int>(r), first.out, first.in, grid);
    most = std::max(most, static_cast<std::int64_t>(p.splits) * r * first.out);
  }
  return most;
}

std::string mlp_phase_report(const std::vector<std::int64_t>& h) {
  const int P = kMaxPhases, marks = kTrainPhases + 1;
  if (h.size() != static_cast<size_t>((kPhaseSteps + 1) * P * 2))
    return fmt::format("fused-mlp phase report: {} values, expected {}\n", h.size(), (kPhaseSteps + 1) * P * 2);
  auto clk = [&](int row, int m) { return h[static_cast<size_t>(2 * (row * P + m))]; };
  auto ns = [&](int row, int m) { return h[static_cast<size_t>(2 * (row * P + m) + 1)]; };
  const char* names[kTrainPhases] = {"issue", "first", "barrier1", "stage",   "hidden",
                                     "loss",  "backward", "barrier2", "weights", "barrier3"};
  std::vector<int> rows;
  for (int t = 0; t < kPhaseSteps; ++t) {
    bool ok = clk(t, 0) != 0;
    for (int m = 1; m < marks && ok; ++m) ok = clk(t, m) > clk(t, m - 1);
    if (ok) rows.push_back(t);
  }
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::string out;
  if (rows.size() >= 2) {
    const int r0 = rows.front(), r1 = rows.back();
    const double ghz = static_cast<double>(clk(r1, marks - 1) - clk(r0, 0)) /
                       static_cast<double>(std::max<std::int64_t>(1, ns(r1, marks - 1) - ns(r0, 0)));
    out += fmt::format("fused-mlp training phases (block 0, median of {} steps, SM clock {:.0f} MHz):", rows.size(),
                       ghz * 1e3);
    for (int m = 1; m < marks; ++m) {
      std::vector<double> d;
      for (int t : rows) d.push_back(static_cast<double>(clk(t, m) - clk(t, m - 1)) / ghz / 1e3);
      out += fmt::format(" {} {:.2f} us |", names[m - 1], median(d));
    }
    std::vector<double> step;
    for (size_t i = 0; i + 1 < rows.size(); ++i)
      if (rows[i + 1] == rows[i] + 1) step.push_back(static_cast<double>(clk(rows[i + 1], 0) - clk(rows[i], 0)) / ghz / 1e3);
    out += fmt::format(" step {:.2f} us\n", median(step));
    const int ir = kPhaseSteps;
    if (clk(ir, 0) != 0) {
      out += "fused-mlp last inference (block 0):";
      const char* infer_names[kInferPhases] = {"first", "stage", "forward"};
      for (int m = 1; m <= kInferPhases; ++m)
        out += fmt::format(" {} {:.2f} us", infer_names[m - 1],
                           static_cast<double>(clk(ir, m) - clk(ir, m - 1)) / ghz / 1e3);
      out += "\n";
    }
  }
  return out.empty() ? "fused-mlp phase report: fewer than two training steps recorded\n" : out;
}

}  // namespace fused

namespace {

#if ROOFLINE_HAVE_CUDA

fused::BatchSource source(const FusedBatch& b) {
  fused::BatchSource s;
  s.images = b.images;
  s.labels = b.labels;
  s.order = b.order;
  s.pixels = static_cast<int>(b.shape.in_h * b.shape.in_w);
  s.stride = static_cast<int>(b.shape.stride);
  s.mean = b.shape.mean;
  s.inv_std = b.shape.inv_std;
  return s;
}

// What both fused paths check before a launch (an internal error: the trainer
// builds these arguments).
void check_batch(const FusedBatch& b, std::int64_t max_batch, std::int64_t pixels, std::int64_t steps,
                 const ops::LossStats& stats) {
  const ops::BatchShape& s = b.shape;
  ROOFLINE_ASSERT(s.batch > 0 && s.batch <= max_batch, "fused step: batch exceeds the network's size");
  ROOFLINE_ASSERT(s.in_h == s.out_h && s.in_w == s.out_w && s.in_h * s.in_w == pixels,
                  "fused step: images must have the model's input size");
  ROOFLINE_ASSERT(s.stride >= s.batch && s.stride <= INT_MAX, "fused step: stride");
  ROOFLINE_ASSERT(steps > 0 && steps <= INT_MAX, "fused step: steps");
  ROOFLINE_ASSERT(stats.step != nullptr, "fused step: the device step counter is required");
  ROOFLINE_ASSERT(b.images && b.labels && b.order, "fused step: data pointers");
}

// The trainer's device step counter: ops take it const because only the SGD
// op advances it on the layer path; a fused launch is that op too.
std::int32_t* step_counter(const ops::LossStats& s) { return const_cast<std::int32_t*>(s.step); }

// A training launch's arguments: the path's own (layers, buffers) with this
// call's batch, optimiser, statistics and step count, once checked.
template <class Args>
Args train_args(Args a, const FusedBatch& b, std::int64_t max_batch, std::int64_t pixels, std::int64_t steps,
                const ops::SgdConfig& sgd, const ops::LossStats& stats) {
  check_batch(b, max_batch, pixels, steps, stats);
  if (sgd.nesterov)  // the kernels' update is torch.optim.SGD without it
    throw_unsupported("the fused GPU paths run SGD without Nesterov momentum",
                      "use --gpu-path layers for Nesterov momentum");
  a.src = source(b);
  a.sgd = sgd;
  a.stats = stats;
  a.step = step_counter(stats);
  a.rows = static_cast<int>(b.shape.batch);
  a.steps = static_cast<int>(steps);
  return a;
}

// An inference launch's arguments: the path's own with this call's rows (of
// the network's input) and the probabilities' buffer.
template <class Args>
Args infer_args(Args a, std::int64_t rows, std::int64_t max_batch, const float* x, float* probs) {
  ROOFLINE_ASSERT(rows > 0 && rows <= max_batch, "fused inference: rows");
  a.x = x;
  a.probs = probs;
  a.rows = static_cast<int>(rows);
  return a;
}

class FusedMlp final : public FusedPath {
 public:
  FusedMlp(const Model& model, Network& net, const std::vector<fused::MlpLayer>& layers) : model_(model), net_(net) {
    Context& ctx = net.context();
    const std::int64_t B = net.max_batch();
    a_.layers = static_cast<int>(layers.size());
    for (size_t l = 0; l < layers.size(); ++l) {
      a_.layer[l] = layers[l];
      bufs_.push_back(ctx.empty({B * layers[l].out}, DType::F32, "fused activations"));
      a_.act[l] = bufs_.back().f32();
      bufs_.push_back(ctx.empty({B * layers[l].out}, DType::F32, "fused activation gradients"));
      a_.dz[l] = bufs_.back().f32();
    }
    // The launches' batches, gathered ahead by ops::gather_batch: at most
    // ~128 MB (xs_steps full batches of the Network's largest batch, at least
    // one; 326 steps at batch 128 when that is the largest); longer trains
    // run in several launches. The kernel reads the labels from the data set, the
    // gather writes them too (xs_labels_, unread).
    const std::int64_t step_floats = B * layers[0].in;
    a_.xs_steps = static_cast<int>(std::clamp<std::int64_t>((128LL << 20) / (4 * step_floats), 1, 1024));
    bufs_.push_back(ctx.empty({a_.xs_steps * step_floats}, DType::F32, "fused batches (normalised)"));
    a_.xs = bufs_.back().f32();
    xs_labels_ = ctx.empty({a_.xs_steps * B}, DType::I32, "fused batches' labels");
    a_.param_count = model.param_count();
    spare_ = ctx.empty({a_.param_count}, DType::F32, "fused spare parameter block");
    ctx.memset_async(spare_.raw(), 0, spare_.nbytes());  // its padding stays zero, as the Network's
    row_loss_ = ctx.empty({B}, DType::F32, "fused per-row losses");
    row_correct_ = ctx.empty({B}, DType::I32, "fused per-row hits");
    a_.params[0] = net.param_data();
    a_.params[1] = spare_.f32();
    a_.momentum = net.momentum_data();
    a_.row_loss = row_loss_.f32();
    a_.row_correct = row_correct_.i32();
    launch_ = fused::mlp_launch(ctx.cuda(), a_);
    partial_ = ctx.empty({fused::mlp_partial_floats(layers[0], B, launch_.blocks)}, DType::F32,
                         "fused first-layer partial sums");
    a_.partial = partial_.f32();
    if (auto on = env::get(env::Var::FusedPhases); on && *on != "0") {
      phases_ = ctx.empty({(fused::kPhaseSteps + 1) * fused::kMaxPhases * 2}, DType::F64, "fused phase clocks");
      ctx.memset_async(phases_.raw(), 0, phases_.nbytes());
      a_.phase_clock = reinterpret_cast<std::int64_t*>(phases_.raw());
    }
    ctx.synchronize();
  }
  ~FusedMlp() override {
    if (!a_.phase_clock) return;
    try {
      net_.context().synchronize();
      std::vector<std::int64_t> h(static_cast<size_t>(phases_.numel()));
      copy_bytes(h.data(), Device::cpu(), phases_.raw(), phases_.device(), h.size() * sizeof h[0]);
      fmt::print(stderr, "{}: {}\n{}", name(), describe(), fused::mlp_phase_report(h));
    } catch (const std::exception& e) {
      fmt::print(stderr, "fused-mlp phase report failed: {}\n", e.what());
    }
  }

  std::string name() const override { return "fused-mlp"; }
  std::string describe() const override {
    return fmt::format(
        "a batch gather, then one cooperative kernel per chunk of steps of at most {} samples in all, {} blocks x {} "
        "threads, {} KB shared memory, {} grid barriers per step",
        xs_rows(), launch_.blocks, fused::kThreads, launch_.smem / 1024, 3);
  }

  void train(const FusedBatch& b, std::int64_t steps, const ops::SgdConfig& sgd, const ops::LossStats& stats) override {
    fused::MlpArgs a = train_args(a_, b, net_.max_batch(), a_.layer[0].in, steps, sgd, stats);
    // Diagnostics: only launches of at least 4 steps are recorded, each
    // replacing the last (rows of different launches may come from different
    // SMs' clocks, and an epoch's short last chunk would overwrite a few).
    if (a.phase_clock && steps >= 4)
      net_.context().memset_async(phases_.raw(), 0, fused::kPhaseSteps * fused::kMaxPhases * 2 * sizeof(std::int64_t));
    else
      a.phase_clock = nullptr;
    NvtxRange range(model_.name() + "/fused/train");
    const std::int64_t per_launch = std::max<std::int64_t>(1, xs_rows() / a.rows);  // steps the batch buffer holds
    for (std::int64_t done = 0; done < steps;) {
      a.steps = static_cast<int>(std::min<std::int64_t>(steps - done, per_launch));
      gather_launch(b, a.steps, a.step);
      fused::mlp_train(net_.context().cuda(), a, launch_);
      if (done == 0 && a.steps < steps) a.phase_clock = nullptr;  // the first launch's record stays
      done += a.steps;
    }
  }

  void infer(std::int64_t rows, float* probs) override {
    const fused::MlpArgs a = infer_args(a_, rows, net_.max_batch(), net_.input(), probs);
    NvtxRange range(model_.name() + "/fused/forward");
    fused::mlp_infer(net_.context().cuda(), a, launch_);
  }

 private:
  // Samples the gathered-batch buffer holds.
  std::int64_t xs_rows() const { return std::int64_t(a_.xs_steps) * net_.max_batch(); }

  // The next `steps` steps' batches (from the device step counter) into a_.xs,
  // step t's at xs + t·rows·in: one gather when batches are full (a launch's
  // samples are then consecutive in the order), one a step when they are not.
  void gather_launch(const FusedBatch& b, int steps, const std::int32_t* step) {
    const std::int64_t rows = b.shape.batch, in = a_.layer[0].in;
    ops::BatchShape s = b.shape;
    if (rows == s.stride) {
      s.batch = rows * steps;
      ops::gather_batch(net_.context(), s, a_.xs, xs_labels_.i32(), b.images, b.labels, b.order, 0, step);
      return;
    }
    for (int t = 0; t < steps; ++t)
      ops::gather_batch(net_.context(), s, a_.xs + t * rows * in, xs_labels_.i32() + t * rows, b.images, b.labels,
                        b.order, t * s.stride, step);
  }

  const Model& model_;
  Network& net_;
  fused::MlpArgs a_;
  fused::Launch launch_;
  std::vector<Tensor> bufs_;
  Tensor spare_, row_loss_, row_correct_, partial_, phases_, xs_labels_;
};

class FusedCnn final : public FusedPath {
 public:
  FusedCnn(const Model& model, Network& net, const fused::CnnArgs& shape) : model_(model), net_(net), a_(shape) {
    Context& ctx = net.context();
    const std::int64_t B = net.max_batch();
    a_.param_count = model.param_count();
    a_.params = net.param_data();
    a_.momentum = net.momentum_data();
    launch_ = fused::cnn_launch(ctx.cuda(), a_);
    partials_ = ctx.empty({static_cast<std::int64_t>(launch_.blocks) * a_.param_count}, DType::F32,
                          "fused per-block gradients");
    row_loss_ = ctx.empty({B}, DType::F32, "fused per-row losses");
    row_correct_ = ctx.empty({B}, DType::I32, "fused per-row hits");
    a_.partials = partials_.f32();
    a_.row_loss = row_loss_.f32();
    a_.row_correct = row_correct_.i32();
  }

  std::string name() const override { return "fused-cnn"; }
  std::string describe() const override {
    return fmt::format(
        "one cooperative kernel per chunk of steps, {} blocks x {} threads (a block per sample), {} KB "
        "shared memory, 2 grid barriers per step",
        launch_.blocks, fused::kThreads, launch_.smem / 1024);
  }

  void train(const FusedBatch& b, std::int64_t steps, const ops::SgdConfig& sgd, const ops::LossStats& stats) override {
    const fused::CnnArgs a = train_args(a_, b, net_.max_batch(), 28 * 28, steps, sgd, stats);
    NvtxRange range(model_.name() + "/fused/train");
    fused::cnn_train(net_.context().cuda(), a, launch_);
  }

  void infer(std::int64_t rows, float* probs) override {
    const fused::CnnArgs a = infer_args(a_, rows, net_.max_batch(), net_.input(), probs);
    NvtxRange range(model_.name() + "/fused/forward");
    fused::cnn_infer(net_.context().cuda(), a);
  }

 private:
  const Model& model_;
  Network& net_;
  fused::CnnArgs a_;
  fused::Launch launch_;
  Tensor partials_, row_loss_, row_correct_;
};

#endif  // ROOFLINE_HAVE_CUDA

}  // namespace

std::string fused_kernel_name(const Model& model, std::int64_t image_h, std::int64_t image_w, std::string* why) {
  std::vector<fused::MlpLayer> mlp;
  fused::CnnArgs cnn;
  std::string why_mlp, why_cnn;
  if (why) why->clear();
  if (match_mlp(model, image_h, image_w, mlp, why_mlp)) return "fused-mlp";
  if (match_cnn(model, image_h, image_w, cnn, why_cnn)) return "fused-cnn";
  if (why) *why = fmt::format("{} has no fused kernel (fused-mlp: {}; fused-cnn: {})", model.name(), why_mlp, why_cnn);
  return "";
}

std::unique_ptr<FusedPath> make_fused_path(const Model& model, Network& net, std::int64_t image_h, std::int64_t image_w,
                                           std::string* why) {
  std::string reason;
  std::unique_ptr<FusedPath> out;
  const std::string kind = fused_kernel_name(model, image_h, image_w, &reason);
  if (!net.context().is_cuda()) {
    reason = "the fused kernels are GPU-only";
  } else if (!kind.empty()) {
#if ROOFLINE_HAVE_CUDA
    try {
      std::string unused;
      if (kind == "fused-mlp") {
        std::vector<fused::MlpLayer> mlp;
        match_mlp(model, image_h, image_w, mlp, unused);
        out = std::make_unique<FusedMlp>(model, net, mlp);
      } else {
        fused::CnnArgs cnn;
        match_cnn(model, image_h, image_w, cnn, unused);
        out = std::make_unique<FusedCnn>(model, net, cnn);
      }
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Unsupported) throw;
      reason = e.what();
    }
#else
    reason = "this build has no CUDA";
#endif
  }
  if (why) *why = out ? std::string() : reason;
  return out;
}

}  // namespace roofline::engine
