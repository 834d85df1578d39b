// The fused GPU paths (fused-mlp, fused-cnn) against the layer-by-layer path
// on the GPU and the plain-loop CPU reference (CpuRef), on fresh random data:
// the same initial parameters and the same sample order, step by step. Batch
// sizes 1, 64 and 128, each with a ragged last batch where the data allows;
// launches of different lengths (odd ones end in the spare parameter block);
// poisoned outputs; determinism; the trainer's choice of path.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/cpu/test_engine_fixtures.hpp"
#include "roofline/core/error.hpp"
#include "roofline/engine/fused.hpp"
#include "roofline/engine/network.hpp"
#include "roofline/engine/trainer.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

// Uniformly random pixels and labels: no structure a wrong kernel could lean on.
ImageSet random_images(std::int64_t n, Rng& r) {
  ImageSet s;
  s.n = n;
  s.h = s.w = 28;
  s.images.resize(static_cast<size_t>(n * 28 * 28));
  for (auto& p : s.images) p = static_cast<std::uint8_t>(r.below(256));
  s.labels.resize(static_cast<size_t>(n));
  for (auto& l : s.labels) l = static_cast<std::uint8_t>(r.below(10));
  return s;
}

DataSplit random_split(std::int64_t n_train, std::int64_t n_test, std::uint64_t seed) {
  Rng r(seed);
  DataSplit d;
  d.dir = "random";
  d.train = random_images(n_train, r);
  d.test = random_images(n_test, r);
  d.norm = compute_normalization(d.train);
  return d;
}

struct RunResult {
  std::vector<float> losses;  // per step (mean over the batch)
  std::vector<float> params;  // after the last step
  double loss_sum = 0;
  std::int32_t correct = 0, steps = 0;
};

// One epoch over `data` (its order drawn from `seed`) on `ctx`: full batches of
// `batch` and a ragged last one. The layer path is driven op by op as the
// trainer does; the fused path in launches of the lengths in `launches`
// (cycled; the tail is always its own launch).
RunResult run(Backend backend, bool fused, const Model& model, const DataSplit& data, std::int64_t batch,
              const std::vector<float>& p0, const std::vector<std::int64_t>& launches, std::uint64_t seed) {
  Context ctx(backend);
  Network net(model, ctx, batch);
  net.set_params(p0);
  const Device dev = ctx.device();
  const std::int64_t n = data.train.n, steps = (n + batch - 1) / batch;
  Tensor images = Tensor::empty({n * 28 * 28}, DType::U8, dev, "images");
  Tensor labels = Tensor::empty({n}, DType::U8, dev, "labels");
  copy_bytes(images.raw(), dev, data.train.images.data(), Device::cpu(), data.train.images.size());
  copy_bytes(labels.raw(), dev, data.train.labels.data(), Device::cpu(), data.train.labels.size());
  Rng r(seed);
  std::vector<std::int32_t> order = random_permutation(n, r);
  Tensor ord = Tensor::empty({n}, DType::I32, dev, "order");
  copy_bytes(ord.raw(), dev, order.data(), Device::cpu(), order.size() * 4);
  Tensor y = Tensor::empty({batch}, DType::I32, dev, "labels of a batch");
  Tensor loss_sum = Tensor::empty({1}, DType::F64, dev, "loss sum");
  Tensor ints = Tensor::empty({3}, DType::I32, dev, "correct, first bad, step");
  Tensor step_loss = Tensor::empty({steps}, DType::F32, dev, "step losses");
  const double zero = 0;
  const std::int32_t init[3] = {0, 1 << 30, 0};
  copy_bytes(loss_sum.raw(), dev, &zero, Device::cpu(), sizeof zero);
  copy_bytes(ints.raw(), dev, init, Device::cpu(), sizeof init);
  step_loss.fill(std::nanf(""));  // poison: every step must write its loss
  ops::LossStats st;
  st.loss_sum = static_cast<double*>(loss_sum.raw());
  st.correct = ints.i32();
  st.first_bad_step = ints.i32() + 1;
  st.step = ints.i32() + 2;
  st.step_loss = step_loss.f32();
  const ops::SgdConfig sgd{0.01f, 0.9f, 0.0f};
  auto shape = [&](std::int64_t rows) {
    return ops::BatchShape{rows, 28, 28, 28, 28, data.norm.mean, 1.0f / data.norm.std, batch};
  };
  const std::int64_t tail = n - (steps - 1) * batch, full = tail == batch ? steps : steps - 1;
  if (fused) {
    std::string why;
    auto f = make_fused_path(model, net, 28, 28, &why);
    if (!f) throw Error(ErrorKind::Internal, "no fused path: " + why);
    FusedBatch b;
    b.images = images.u8();
    b.labels = labels.u8();
    b.order = ord.i32();
    std::int64_t done = 0;
    for (size_t i = 0; done < full; ++i) {
      const std::int64_t k = std::min(launches[i % launches.size()], full - done);
      b.shape = shape(batch);
      f->train(b, k, sgd, st);
      done += k;
    }
    if (full < steps) {
      b.shape = shape(tail);
      f->train(b, 1, sgd, st);
    }
  } else {
    for (std::int64_t s = 0; s < steps; ++s) {
      const std::int64_t rows = s < full ? batch : tail;
      ops::gather_batch(ctx, shape(rows), net.input(), y.i32(), images.u8(), labels.u8(), ord.i32(), 0, st.step);
      net.forward(rows);
      ops::cross_entropy(ctx, {rows, model.classes()}, net.dlogits(), net.logits(), y.i32(),
                         1.0f / static_cast<float>(rows), st);
      net.backward(rows);
      net.sgd_step(sgd, ints.i32() + 2);
    }
  }
  ctx.synchronize();
  RunResult out;
  out.losses = step_loss.to_floats();
  out.params = net.params();
  std::int32_t h[3];
  copy_bytes(h, Device::cpu(), ints.raw(), dev, sizeof h);
  copy_bytes(&out.loss_sum, Device::cpu(), loss_sum.raw(), dev, sizeof(double));
  out.correct = h[0];
  out.steps = h[2];
  return out;
}

double rel_change_error(const std::vector<float>& p0, const std::vector<float>& ref, const std::vector<float>& got) {
  double d = 0, c = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    d += (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]);
    c += (double(ref[i]) - p0[i]) * (double(ref[i]) - p0[i]);
  }
  return std::sqrt(d) / std::max(std::sqrt(c), 1e-30);
}

// An MLP whose layer widths do not divide by any cluster size (a cluster of 8
// holds slices of 7, 5 and 3 rows, the last block of each fewer or none), a
// hidden layer without a bias, and a head without ReLU.
std::unique_ptr<Model> uneven_mlp() {
  LayerGraph g("uneven-mlp", Shape{1, 28, 28}, 10);
  int x = g.flatten("flatten", g.input());
  x = g.linear("fc1", x, 52, true, ops::Activation::ReLU);
  x = g.linear("fc2", x, 36, false, ops::Activation::ReLU);
  x = g.linear("fc3", x, 20, true, ops::Activation::ReLU);
  g.set_output(g.linear("fc4", x, 10));
  return std::make_unique<Model>(std::move(g));
}

// Fused vs the GPU layer path and the CPU reference at one batch size.
void compare(const char* name, std::int64_t batch, std::int64_t n_train) {
  SCOPED_TRACE(std::string(name) + " batch " + std::to_string(batch));
  auto model = std::string(name) == "uneven-mlp" ? uneven_mlp() : make_model(name);
  const DataSplit data = random_split(n_train, 16, 1000 + static_cast<std::uint64_t>(batch));
  const std::vector<float> p0 = model->init_params(7);
  const RunResult ref = run(Backend::CpuRef, false, *model, data, batch, p0, {1}, 3);
  const RunResult lay = run(Backend::Cuda, false, *model, data, batch, p0, {1}, 3);
  const RunResult fus = run(Backend::Cuda, true, *model, data, batch, p0, {1, 4}, 3);
  const size_t steps = ref.losses.size();
  ASSERT_EQ(fus.losses.size(), steps);
  EXPECT_EQ(fus.steps, static_cast<std::int32_t>(steps)) << "the device step counter";
  for (size_t i = 0; i < steps; ++i) {
    ASSERT_TRUE(std::isfinite(fus.losses[i])) << "step " << i + 1 << " wrote no loss";
    // fp32 with other summation orders: 2e-4 relative over the first steps
    // (as the trainer's CPU/GPU test), looser as rounding compounds.
    const double tol = (i < 10 ? 2e-4 : 2e-3) * std::abs(ref.losses[i]) + 1e-6;
    EXPECT_NEAR(fus.losses[i], ref.losses[i], tol) << "vs the CPU reference, step " << i + 1;
    EXPECT_NEAR(fus.losses[i], lay.losses[i], tol) << "vs the GPU layer path, step " << i + 1;
  }
  // Parameters after the epoch: the change from p0 agrees within 1e-3 relative (L2).
  EXPECT_LE(rel_change_error(p0, ref.params, fus.params), 1e-3) << "vs the CPU reference";
  EXPECT_LE(rel_change_error(p0, lay.params, fus.params), 1e-3) << "vs the GPU layer path";
  // The padding between parameter tensors stays zero.
  for (size_t i = 0; i < p0.size(); ++i)
    if (p0[i] == 0.0f) ASSERT_EQ(fus.params[i], 0.0f) << "padding at " << i;
  EXPECT_NEAR(fus.loss_sum, ref.loss_sum, 2e-4 * std::abs(ref.loss_sum));
  EXPECT_LE(std::abs(fus.correct - ref.correct), std::max<std::int32_t>(2, static_cast<std::int32_t>(n_train / 100)));
}

}  // namespace

TEST(FusedGpu, MlpMatchesTheLayerPathAndTheCpuReference) {
  ROOFLINE_REQUIRE_GPU();
  compare("simple-mlp", 1, 12);            // 12 steps of one sample
  compare("simple-mlp", 64, 64 * 5 + 21);  // 5 full batches and a ragged one of 21
  compare("simple-mlp", 128, 128 * 4 + 77);
  compare("simple-mlp", 200, 200 * 2 + 13);  // more rows than blocks: the row phase takes several a block
}

TEST(FusedGpu, AnUnevenMlpMatchesTheLayerPathAndTheCpuReference) {
  ROOFLINE_REQUIRE_GPU();
  compare("uneven-mlp", 1, 12);
  compare("uneven-mlp", 13, 13 * 3 + 5);  // groups of 8 rows and a partial one
  compare("uneven-mlp", 200, 200 * 2 + 13);
}

TEST(FusedGpu, CnnMatchesTheLayerPathAndTheCpuReference) {
  ROOFLINE_REQUIRE_GPU();
  compare("simple-cnn", 1, 12);
  compare("simple-cnn", 64, 64 * 5 + 21);
  compare("simple-cnn", 128, 128 * 4 + 77);
  compare("simple-cnn", 200, 200 * 2 + 13);  // more samples than blocks: blocks take several
}

TEST(FusedGpu, LaunchLengthsDoNotChangeABit) {
  ROOFLINE_REQUIRE_GPU();
  for (const char* name : {"simple-mlp", "simple-cnn"}) {
    SCOPED_TRACE(name);
    auto model = make_model(name);
    const DataSplit data = random_split(64 * 9 + 5, 16, 77);
    const std::vector<float> p0 = model->init_params(3);
    const RunResult one = run(Backend::Cuda, true, *model, data, 64, p0, {1000}, 5);
    const RunResult mixed = run(Backend::Cuda, true, *model, data, 64, p0, {1, 2, 3}, 5);
    const RunResult again = run(Backend::Cuda, true, *model, data, 64, p0, {1000}, 5);
    ASSERT_EQ(one.losses.size(), 10u);
    for (size_t i = 0; i < one.losses.size(); ++i) {
      EXPECT_EQ(one.losses[i], mixed.losses[i]) << "step " << i + 1;
      EXPECT_EQ(one.losses[i], again.losses[i]) << "step " << i + 1 << ": a moving result is a race";
    }
    EXPECT_EQ(one.params, mixed.params);
    EXPECT_EQ(one.params, again.params);
    EXPECT_EQ(one.loss_sum, again.loss_sum);
  }
}

TEST(FusedGpu, InferenceMatchesTheLayerPathAndWritesEveryProbability) {
  ROOFLINE_REQUIRE_GPU();
  for (const char* name : {"simple-mlp", "uneven-mlp", "simple-cnn"}) {
    auto model = std::string(name) == "uneven-mlp" ? uneven_mlp() : make_model(name);
    Context gpu(Backend::Cuda);
    Network net(*model, gpu, 128);
    net.set_params(model->init_params(11));
    std::string why;
    auto f = make_fused_path(*model, net, 28, 28, &why);
    ASSERT_NE(f, nullptr) << why;
    Rng r(5);
    for (std::int64_t rows : {1, 37, 64, 128}) {
      SCOPED_TRACE(std::string(name) + " rows " + std::to_string(rows));
      std::vector<float> x(static_cast<size_t>(rows * 28 * 28));
      for (auto& v : x) v = r.uniform(-1.0f, 2.5f);
      copy_bytes(net.input(), gpu.device(), x.data(), Device::cpu(), x.size() * 4);
      const std::int64_t nc = rows * model->classes();
      Tensor fused_p = gpu.empty({nc}), layer_p = gpu.empty({nc});
      fused_p.fill(std::nanf(""));
      layer_p.fill(std::nanf(""));
      f->infer(rows, fused_p.f32());
      net.forward(rows, false);
      ops::softmax_forward(gpu, {rows, model->classes()}, layer_p.f32(), net.logits());
      gpu.synchronize();  // the context's stream does not wait for plain copies, nor they for it
      const std::vector<float> a = fused_p.to_floats(), b = layer_p.to_floats();
      double d = 0, n = 0;
      for (std::int64_t i = 0; i < nc; ++i) {
        ASSERT_TRUE(std::isfinite(a[static_cast<size_t>(i)])) << "probability " << i << " not written";
        d += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        n += double(b[i]) * b[i];
      }
      EXPECT_LE(std::sqrt(d / n), 1e-5);
      for (std::int64_t row = 0; row < rows; ++row) {
        double s = 0;
        for (std::int64_t j = 0; j < model->classes(); ++j) s += a[static_cast<size_t>(row * model->classes() + j)];
        EXPECT_NEAR(s, 1.0, 1e-5) << "row " << row;
      }
    }
  }
}

TEST(FusedGpu, TheTrainerTakesTheFusedPathAndSaysWhichRan) {
  ROOFLINE_REQUIRE_GPU();
  const DataSplit data = random_split(300, 100, 9);
  Context gpu(Backend::Cuda);
  TrainOptions o;
  o.batch = 64;
  o.epochs = 2;
  o.infer_reps = 3;
  o.record_first_losses = 5;
  auto mlp = make_model("simple-mlp");
  TrainResult f = train_and_evaluate(gpu, *mlp, data, o);
  EXPECT_EQ(f.gpu_path, "fused-mlp");
  EXPECT_EQ(f.steps, 10);
  EXPECT_GT(f.infer_seconds.median, 0);
  TrainResult again = train_and_evaluate(gpu, *mlp, data, o);
  EXPECT_EQ(f.first_losses, again.first_losses) << "the same seed gives the same bits";
  EXPECT_NEAR(f.test_loss, again.test_loss, 1e-5 * f.test_loss);  // evaluated on the layer path (cuBLASLt)
  o.gpu_path = GpuPath::Layers;
  TrainResult l = train_and_evaluate(gpu, *mlp, data, o);
  EXPECT_EQ(l.gpu_path, "layers");
  ASSERT_EQ(l.first_losses.size(), f.first_losses.size());
  for (size_t i = 0; i < l.first_losses.size(); ++i)
    EXPECT_NEAR(f.first_losses[i], l.first_losses[i], 2e-4 * std::abs(l.first_losses[i])) << "step " << i + 1;
  EXPECT_NEAR(f.test_loss, l.test_loss, 1e-3 * l.test_loss);

  auto cnn = make_model("simple-cnn");
  o.gpu_path = GpuPath::Auto;
  o.use_graphs = false;  // profiling: the per-layer path
  TrainResult c = train_and_evaluate(gpu, *cnn, data, o);
  EXPECT_EQ(c.gpu_path, "layers");
  EXPECT_NE(c.gpu_path_note.find("--no-graphs"), std::string::npos) << c.gpu_path_note;
  o.use_graphs = true;
  EXPECT_EQ(train_and_evaluate(gpu, *cnn, data, o).gpu_path, "fused-cnn");

  auto ece = make_model("ece408");
  o.epochs = 1;
  o.max_steps = 2;
  TrainResult e = train_and_evaluate(gpu, *ece, data, o);
  EXPECT_EQ(e.gpu_path, "layers");
  EXPECT_NE(e.gpu_path_note.find("no fused kernel"), std::string::npos) << e.gpu_path_note;
  o.gpu_path = GpuPath::Fused;
  try {
    train_and_evaluate(gpu, *ece, data, o);
    FAIL() << "--gpu-path fused on a model without a fused kernel must be refused";
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(err.what()).find("--gpu-path fused"), std::string::npos) << err.what();
  }
}

TEST(FusedGpu, ANanInTheFusedMlpIsNamedAtItsStep) {
  ROOFLINE_REQUIRE_GPU();
  const DataSplit data = random_split(256, 64, 4);
  auto model = make_model("simple-mlp");
  Context gpu(Backend::Cuda);
  TrainOptions o;
  o.batch = 32;
  o.epochs = 1;
  o.infer_reps = 2;
  o.initial_params = model->init_params(1);
  o.initial_params[static_cast<size_t>(model->param_offset(3)) + 5] = std::nanf("");  // fc3's weights
  try {
    TrainResult r = train_and_evaluate(gpu, *model, data, o);
    FAIL() << "a NaN loss must stop the run (path " << r.gpu_path << ")";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Numeric);
    EXPECT_NE(std::string(e.what()).find("at step 1 of epoch 1"), std::string::npos) << e.what();
  }
}
