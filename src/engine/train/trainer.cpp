// The training loop, the same for every backend. On a GPU nothing in an
// epoch waits for the host: the data set lives on the device, each epoch's
// order is uploaded once, a step reads its index from device memory (so one
// captured graph replays every step), and the loss statistics are reduced on
// the device and read once per epoch.
#include "roofline/engine/trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include "roofline/core/clock.hpp"
#include "roofline/core/error.hpp"
#include "roofline/engine/graph.hpp"
#include "roofline/engine/network.hpp"

namespace roofline::engine {

namespace {

KernelTimeFactory& factory_slot() {
  static KernelTimeFactory f;
  return f;
}

// Statistics accumulated on the device; read back once per epoch.
struct StatsBlock {
  double loss_sum;
  std::int32_t correct;
  std::int32_t step;
  std::int32_t first_bad;
  std::int32_t pad;
};

struct DeviceSet {
  Tensor images, labels;  // u8 (n, h, w), u8 (n)
  std::int64_t n = 0, h = 0, w = 0;
};

DeviceSet upload(Context& ctx, const ImageSet& s) {
  DeviceSet d;
  d.n = s.n;
  d.h = s.h;
  d.w = s.w;
  d.images = ctx.empty({s.n * s.h * s.w}, DType::U8, "data set images");
  d.labels = ctx.empty({s.n}, DType::U8, "data set labels");
  copy_bytes(d.images.raw(), d.images.device(), s.images.data(), Device::cpu(), s.images.size());
  copy_bytes(d.labels.raw(), d.labels.device(), s.labels.data(), Device::cpu(), s.labels.size());
  return d;
}

class Trainer {
 public:
  Trainer(Context& ctx, const Model& model, const DataSplit& data, const TrainOptions& o)
      : ctx_(ctx),
        model_(model),
        data_(data),
        o_(o),
        eval_batch_(std::max<std::int64_t>(1, std::min(o.eval_batch, data.test.n))),
        net_(model, ctx, std::max(o.batch, eval_batch_)) {
    if (o.initial_params.empty()) {
      net_.set_params(model.init_params(o.seed));
    } else {
      if (static_cast<std::int64_t>(o.initial_params.size()) != model.param_count())
        throw_usage(fmt::format("{} initial parameters given, model {} has {}", o.initial_params.size(), model.name(),
                                model.param_count()));
      net_.set_params(o.initial_params);
    }
    train_ = upload(ctx, data.train);
    test_ = upload(ctx, data.test);
    order_ = ctx.empty({data.train.n}, DType::I32, "epoch order");
    std::vector<std::int32_t> identity(static_cast<size_t>(data.test.n));
    for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<std::int32_t>(i);
    test_order_ = ctx.empty({data.test.n}, DType::I32, "test order");
    copy_bytes(test_order_.raw(), test_order_.device(), identity.data(), Device::cpu(), identity.size() * 4);
    // Every buffer a step reads holds valid values before the first step: the
    // warm-up step runs before the first epoch's order is uploaded.
    identity.resize(static_cast<size_t>(data.train.n));
    for (size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<std::int32_t>(i);
    copy_bytes(order_.raw(), order_.device(), identity.data(), Device::cpu(), identity.size() * 4);
    labels_ = ctx.empty({net_.max_batch()}, DType::I32, "batch labels");
    stats_ = ctx.empty({static_cast<std::int64_t>(sizeof(StatsBlock))}, DType::U8, "loss statistics");
    steps_ = (data.train.n + o.batch - 1) / o.batch;
    if (o.max_steps > 0) steps_ = std::min(steps_, o.max_steps);
    step_losses_ = ctx.empty({steps_}, DType::F32, "per-step losses");
    probs_ = ctx.empty({net_.max_batch() * model.classes()}, DType::F32, "inference probabilities");
    choose_gpu_path();
  }

  TrainResult run() {
    TrainResult r;
    r.model = model_.name();
    r.backend = to_string(ctx_.backend());
    r.batch = o_.batch;
    r.params = model_.param_count();
    r.norm = data_.norm;
    r.step_cost = model_.cost(o_.batch);
    if (ctx_.is_cuda()) r.gpu_path = fused_ ? fused_->name() : "layers";
    r.gpu_path_note = path_note_;

    std::unique_ptr<KernelTimeSource> kernels;
    if (ctx_.is_cuda()) {
      if (kernel_time_factory())
        kernels = kernel_time_factory()(ctx_.device().index);
      else
        r.busy_note = "needs the profiler's in-process CUPTI tracer, which this build does not register";
    } else {
      r.busy_note = "GPU only";
    }
    if (ctx_.is_cuda() && (o_.use_graphs || fused_) && o_.epochs > 0) {
      warm_up();
      if (!fused_) capture_graphs();
    }

    ctx_.synchronize();
    if (kernels) kernels->start();
    Rng shuffle(o_.seed ^ 0x5eedULL);
    for (int e = 0; e < o_.epochs; ++e) {
      EpochResult er = epoch(e, shuffle);
      r.train_seconds += er.seconds;
      r.steps += er.steps;
      r.epochs.push_back(er);
      if (e == 0) {
        std::vector<float> losses = step_losses_.to_floats();
        losses.resize(static_cast<size_t>(std::min<std::int64_t>(o_.record_first_losses, er.steps)));
        r.first_losses = losses;
      }
    }
    if (kernels && r.train_seconds > 0) {
      ctx_.synchronize();
      r.busy_fraction = kernels->stop() / r.train_seconds;
    }

    EvalResult ev = evaluate();
    r.test_loss = ev.loss;
    r.test_accuracy = ev.accuracy;
    r.test_predictions = ev.predictions;
    r.infer_seconds = inference_latency(r);
    return r;
  }

 private:
  StatsBlock* stats_host_view() { return reinterpret_cast<StatsBlock*>(stats_.raw()); }
  double* loss_sum_ptr() { return &stats_host_view()->loss_sum; }
  std::int32_t* correct_ptr() { return &stats_host_view()->correct; }
  std::int32_t* step_ptr() { return &stats_host_view()->step; }
  std::int32_t* first_bad_ptr() { return &stats_host_view()->first_bad; }

  void reset_stats() {
    StatsBlock init{0.0, 0, 0, INT_MAX, 0};
    ctx_.copy_async(stats_.raw(), stats_.device(), &init, Device::cpu(), sizeof init);
    ctx_.synchronize();  // `init` is on this stack frame
  }

  StatsBlock read_stats() {
    StatsBlock s{};
    ctx_.synchronize();
    copy_bytes(&s, Device::cpu(), stats_.raw(), stats_.device(), sizeof s);
    return s;
  }

  ops::BatchShape batch_shape(std::int64_t rows, std::int64_t stride, const DeviceSet& set) const {
    ops::BatchShape b;
    b.batch = rows;
    b.in_h = set.h;
    b.in_w = set.w;
    const Shape& in = model_.input_shape();
    b.out_h = in[1];
    b.out_w = in[2];
    b.mean = data_.norm.mean;
    b.inv_std = 1.0f / data_.norm.std;
    b.stride = stride;
    return b;
  }

  // The fused path (fused.hpp) when the model has one and it was not declined;
  // --gpu-path fused without one is an error, auto says why in the result.
  void choose_gpu_path() {
    if (!ctx_.is_cuda()) return;
    if (o_.gpu_path == GpuPath::Layers) {
      path_note_ = "--gpu-path layers";
      return;
    }
    if (o_.gpu_path == GpuPath::Auto && !o_.use_graphs) {
      path_note_ = "--no-graphs: one kernel per op, with per-layer NVTX ranges";
      return;
    }
    std::string why;
    fused_ = make_fused_path(model_, net_, data_.train.h, data_.train.w, &why);
    if (fused_) return;
    if (o_.gpu_path == GpuPath::Fused)
      throw Error(ErrorKind::Unsupported, "--gpu-path fused: " + why, "use --gpu-path auto (or layers)");
    path_note_ = why;
  }

  ops::LossStats train_stats() {
    ops::LossStats st;
    st.loss_sum = loss_sum_ptr();
    st.correct = correct_ptr();
    st.step_loss = step_losses_.f32();
    st.first_bad_step = first_bad_ptr();
    st.step = step_ptr();
    return st;
  }

  // `k` fused steps of `rows` samples from the device step counter on.
  void fused_steps(std::int64_t rows, std::int64_t k) {
    FusedBatch b;
    b.shape = batch_shape(rows, o_.batch, train_);
    b.images = train_.images.u8();
    b.labels = train_.labels.u8();
    b.order = order_.i32();
    fused_->train(b, k, o_.sgd, train_stats());
  }

  // One training step on `rows` samples: order[step·batch + i].
  void step(std::int64_t rows) {
    if (fused_) {
      fused_steps(rows, 1);
      return;
    }
    ops::gather_batch(ctx_, batch_shape(rows, o_.batch, train_), net_.input(), labels_.i32(), train_.images.u8(),
                      train_.labels.u8(), order_.i32(), 0, step_ptr());
    net_.forward(rows);
    const ops::LossStats st = train_stats();
    {
      NvtxRange range(model_.name() + "/loss/forward");
      ops::cross_entropy(ctx_, {rows, model_.classes()}, net_.dlogits(), net_.logits(), labels_.i32(),
                         1.0f / static_cast<float>(rows), st);
    }
    net_.backward_sgd(rows, o_.sgd, step_ptr());
  }

  std::int64_t tail_rows() const {
    const std::int64_t last = data_.train.n - (steps_ - 1) * o_.batch;
    return std::min(last, o_.batch);
  }

  // One eager step of each shape before capturing: loads every kernel's module
  // and builds every cuBLASLt plan outside the capture (as frameworks warm up
  // before graph capture). Its effects on the weights, the momentum and the
  // statistics are undone.
  void warm_up() {
    const std::int64_t np = model_.param_count();
    Tensor p = ctx_.empty({np}, DType::F32, "warm-up copy of the parameters");
    Tensor m = ctx_.empty({np}, DType::F32, "warm-up copy of the momentum");
    const size_t bytes = static_cast<size_t>(np) * sizeof(float);
    ctx_.copy_async(p.raw(), p.device(), net_.param_data(), p.device(), bytes);
    ctx_.copy_async(m.raw(), m.device(), net_.momentum_data(), m.device(), bytes);
    reset_stats();
    step(o_.batch);
    if (tail_rows() != o_.batch) step(tail_rows());
    ctx_.copy_async(net_.param_data(), p.device(), p.raw(), p.device(), bytes);
    ctx_.copy_async(net_.momentum_data(), m.device(), m.raw(), m.device(), bytes);
    ctx_.synchronize();
  }

  void capture_graphs() {
    const std::int64_t k = std::max(1, o_.steps_per_graph);
    const std::int64_t full = tail_rows() == o_.batch ? steps_ : steps_ - 1;
    if (full >= k)
      multi_.capture(ctx_, [&] {
        for (std::int64_t i = 0; i < k; ++i) step(o_.batch);
      });
    if (full > 0) single_.capture(ctx_, [&] { step(o_.batch); });
    if (tail_rows() != o_.batch) tail_.capture(ctx_, [&] { step(tail_rows()); });
  }

  // Epoch e's order of the training images: one fork of `shuffle` per epoch.
  std::vector<std::int32_t> epoch_order(int e, const Rng& shuffle) const {
    Rng er = shuffle.fork(static_cast<std::uint64_t>(e));
    return random_permutation(data_.train.n, er);
  }

  EpochResult epoch(int e, Rng& shuffle) {
    EpochResult res;
    reset_stats();
    ctx_.synchronize();
    const double t0 = now_seconds();
    // This epoch's order: drawn while the device ran the last epoch (below),
    // or now (epoch_order: where it is drawn does not change it).
    std::vector<std::int32_t> order = next_order_epoch_ == e ? std::move(next_order_) : epoch_order(e, shuffle);
    next_order_epoch_ = -1;
    ctx_.copy_async(order_.raw(), order_.device(), order.data(), Device::cpu(), order.size() * 4);
    const std::int64_t full = tail_rows() == o_.batch ? steps_ : steps_ - 1;
    const std::int64_t k = std::max(1, o_.steps_per_graph);
    std::int64_t done = 0;
    auto progress = [&] {
      if (o_.progress) o_.progress(e, done, steps_);
    };
    auto check = [&] {
      if (!o_.check_every_step) return;
      StatsBlock s = read_stats();
      if (s.first_bad != INT_MAX) fail_non_finite(e, s.first_bad);
    };
    const bool graphs = ctx_.is_cuda() && o_.use_graphs;
    while (done < full) {
      if (fused_) {
        const std::int64_t n =
            o_.check_every_step ? 1 : std::min(std::max<std::int64_t>(1, o_.fused_steps_per_launch), full - done);
        fused_steps(o_.batch, n);
        done += n;
      } else if (graphs && multi_.ready() && full - done >= k && !o_.check_every_step) {
        multi_.launch(ctx_);
        done += k;
      } else {
        if (graphs)
          single_.launch(ctx_);
        else
          step(o_.batch);
        ++done;
      }
      check();
      progress();
    }
    if (full < steps_) {
      if (fused_)
        fused_steps(tail_rows(), 1);
      else if (graphs)
        tail_.launch(ctx_);
      else
        step(tail_rows());
      ++done;
      check();
      progress();
    }
    // The next epoch's order, drawn on the host while the device runs this
    // one's steps (a GPU epoch's launches are asynchronous; the ~0.3 ms of
    // shuffling 60,000 indices left the GPU idle at each epoch's start).
    if (e + 1 < o_.epochs) {
      next_order_ = epoch_order(e + 1, shuffle);
      next_order_epoch_ = e + 1;
    }
    // Keep `order` alive until the (possibly asynchronous) copy has run.
    StatsBlock s = read_stats();
    res.seconds = now_seconds() - t0;
    res.steps = done;
    if (s.first_bad != INT_MAX) fail_non_finite(e, s.first_bad);
    if (s.step != done)
      throw Error(ErrorKind::Internal, fmt::format("the device ran {} steps, the host launched {}", s.step, done));
    const double samples = static_cast<double>(full * o_.batch + (full < steps_ ? tail_rows() : 0));
    res.train_loss = s.loss_sum / samples;
    res.train_accuracy = s.correct / samples;
    if (!std::isfinite(res.train_loss)) fail_non_finite(e, 0);
    return res;
  }

  [[noreturn]] void fail_non_finite(int e, std::int32_t step) {
    const std::int64_t of_run = static_cast<std::int64_t>(e) * steps_ + step + 1;
    throw NonFiniteLoss(
        fmt::format("the training loss of {} is not finite (NaN or Inf) at step {} of epoch {} (step {} "
                    "of the run, batch {}, lr {})",
                    model_.name(), step + 1, e + 1, of_run, o_.batch, o_.sgd.lr),
        "lower --lr or --momentum; results stored before this run are kept", e + 1, step + 1, of_run);
  }

 public:
  EvalResult evaluate() {
    reset_stats();
    ops::LossStats st;
    st.loss_sum = loss_sum_ptr();
    st.correct = correct_ptr();
    const std::int64_t C = model_.classes();
    EvalResult ev;
    ev.predictions.assign(static_cast<size_t>(C), 0);
    std::vector<float> logits(static_cast<size_t>(eval_batch_ * C));
    for (std::int64_t first = 0; first < test_.n; first += eval_batch_) {
      const std::int64_t rows = std::min(eval_batch_, test_.n - first);
      ops::gather_batch(ctx_, batch_shape(rows, eval_batch_, test_), net_.input(), labels_.i32(), test_.images.u8(),
                        test_.labels.u8(), test_order_.i32(), first, nullptr);
      net_.forward(rows, false);
      ops::cross_entropy(ctx_, {rows, C}, nullptr, net_.logits(), labels_.i32(), 1.0f, st);
      // Which class each image is predicted as (untimed; one small copy per batch on a GPU).
      ctx_.synchronize();
      copy_bytes(logits.data(), Device::cpu(), net_.logits(), ctx_.device(), static_cast<size_t>(rows * C) * 4);
      for (std::int64_t i = 0; i < rows; ++i) {
        const float* x = logits.data() + i * C;
        std::int64_t arg = 0;
        for (std::int64_t j = 1; j < C; ++j)
          if (x[j] > x[arg]) arg = j;
        ++ev.predictions[static_cast<size_t>(arg)];
      }
    }
    StatsBlock s = read_stats();
    ev.loss = s.loss_sum / static_cast<double>(test_.n);
    ev.accuracy = static_cast<double>(s.correct) / static_cast<double>(test_.n);
    return ev;
  }

  // Forward of one batch of `batch` test images to probabilities, each
  // repetition synchronised (the latency a caller waiting for the answer sees).
  // With a fused path and --gpu-path auto both GPU forwards are candidates:
  // the fused kernel (one cooperative launch) and the layer path (a graph of
  // a few kernels); the one with the lower median of kPickReps calls, taken
  // in alternating rounds, is timed. At batch 1 simple-mlp's fused forward
  // costs a cooperative launch (11.5 µs round trip on the H100 against 9.8
  // for a plain kernel) plus 11.8 µs of kernel.
  Summary inference_latency(TrainResult& r) {
    const std::int64_t rows = std::min(o_.batch, test_.n);
    {
      const double t0 = now_seconds();
      if (net_.prepare_inference()) r.infer_prepare_seconds = now_seconds() - t0;
    }
    ops::gather_batch(ctx_, batch_shape(rows, rows, test_), net_.input(), labels_.i32(), test_.images.u8(),
                      test_.labels.u8(), test_order_.i32(), 0, nullptr);
    auto layers = [&] { net_.infer_probs(rows, probs_.f32()); };
    StepGraph g;
    bool fused = fused_ != nullptr;
    if (!fused || o_.gpu_path == GpuPath::Auto) {
      layers();  // eager first: kernels loaded and plans built outside the capture
      ctx_.synchronize();
      if (ctx_.is_cuda() && o_.use_graphs) g.capture(ctx_, layers);
    }
    auto once = [&](bool use_fused) {
      if (use_fused)
        fused_->infer(rows, probs_.f32());  // one launch: nothing to capture
      else if (g.ready())
        g.launch(ctx_);
      else
        layers();
      ctx_.synchronize();
    };
    auto time = [&](bool use_fused, int reps, std::vector<double>& samples) {
      for (int i = 0; i < reps; ++i) {
        const double t0 = now_seconds();
        once(use_fused);
        samples.push_back(now_seconds() - t0);
      }
    };
    if (fused && o_.gpu_path == GpuPath::Auto) {
      constexpr int kPickReps = 100, kRounds = 5;
      for (int i = 0; i < 10; ++i) once(true), once(false);
      std::vector<double> f, l;
      for (int k = 0; k < kRounds; ++k) time(true, kPickReps / kRounds, f), time(false, kPickReps / kRounds, l);
      const double fm = summarize(f).median, lm = summarize(l).median;
      fused = fm <= lm;
      r.infer_path_note = fmt::format("{} {:.1f} µs, {} {:.1f} µs (median of {} synchronised calls each)",
                                      fused_->name(), fm * 1e6, "layers", lm * 1e6, kPickReps);
    }
    r.infer_path = ctx_.is_cuda() ? (fused ? fused_->name() : std::string("layers")) : std::string();
    for (int i = 0; i < 10; ++i) once(fused);
    std::vector<double> samples;
    time(fused, std::max(1, o_.infer_reps), samples);
    return summarize(samples);
  }

 private:
  Context& ctx_;
  const Model& model_;
  const DataSplit& data_;
  TrainOptions o_;
  std::int64_t eval_batch_;
  Network net_;
  DeviceSet train_, test_;
  Tensor order_, test_order_, labels_, stats_, step_losses_, probs_;
  std::vector<std::int32_t> next_order_;  // epoch next_order_epoch_'s order, drawn ahead (-1: none)
  int next_order_epoch_ = -1;
  std::int64_t steps_ = 0;
  StepGraph multi_, single_, tail_;
  std::unique_ptr<FusedPath> fused_;  // null: the layer path
  std::string path_note_;
};

}  // namespace

void register_kernel_time_factory(KernelTimeFactory f) { factory_slot() = std::move(f); }
const KernelTimeFactory& kernel_time_factory() { return factory_slot(); }

TrainResult train_and_evaluate(Context& ctx, const Model& model, const DataSplit& data, const TrainOptions& o) {
  if (o.batch <= 0)
    throw_usage(fmt::format("batch size {} is not positive", o.batch), "use --batch 1 or more (e.g. 1,64,128)");
  if (o.batch > data.train.n)
    throw_usage(fmt::format("batch size {} is larger than the training set ({} images)", o.batch, data.train.n),
                fmt::format("use --batch {} or less", data.train.n));
  if (o.epochs < 0)
    throw_usage(fmt::format("{} epochs: the count cannot be negative", o.epochs), "use --epochs 0 or more");
  if (o.max_steps < 0) throw_usage("--max-steps cannot be negative", "use --max-steps 0 (no limit) or more");
  if (!(o.sgd.lr > 0) || !std::isfinite(o.sgd.lr)) throw_usage("--lr must be a positive number", "e.g. --lr 0.01");
  if (!(o.sgd.momentum >= 0 && o.sgd.momentum < 1)) throw_usage("--momentum must be in [0, 1)", "e.g. --momentum 0.9");
  if (!(o.sgd.weight_decay >= 0) || !std::isfinite(o.sgd.weight_decay))
    throw_usage("--weight-decay cannot be negative", "e.g. --weight-decay 0");
  const Shape& in = model.input_shape();
  if (in.size() != 3 || in[0] != 1)
    throw_usage(
        fmt::format("model {} takes {} inputs; the data sets are single-channel images", model.name(), to_string(in)));
  Trainer t(ctx, model, data, o);
  return t.run();
}

}  // namespace roofline::engine
