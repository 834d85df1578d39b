// Engine core: tensors, the generator, costs, models, initialisation, and a
// whole-network gradient check (the wiring between layers).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "roofline/core/error.hpp"
#include "roofline/engine/model.hpp"
#include "roofline/engine/network.hpp"
#include "roofline/engine/ops.hpp"

using namespace roofline;
using namespace roofline::engine;

TEST(EngineTensor, ViewsShareStorageAndCopiesDoNot) {
  Tensor t = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.raw()) % 64, 0u);
  Tensor v = t.narrow0(1, 2);
  EXPECT_EQ(v.shape(), (Shape{2, 2}));
  EXPECT_EQ(v.to_floats(), (std::vector<float>{3, 4, 5, 6}));
  v.f32()[0] = 30;
  EXPECT_EQ(t.to_floats()[2], 30);
  Tensor r = t.reshape({6});
  EXPECT_EQ(r.f32(), t.f32());
  Tensor c = t.to(Device::cpu());
  c.f32()[0] = 100;
  EXPECT_EQ(t.to_floats()[0], 1);
  EXPECT_THROW(t.reshape({4}), Error);
  EXPECT_THROW(t.i32(), Error);
  EXPECT_THROW(t.narrow0(2, 2), Error);
}

TEST(EngineRng, SameSeedSameStreamAndPermutationsArePermutations) {
  Rng a(7), b(7), c(8);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next(), b.next());
  EXPECT_NE(Rng(7).next(), c.next());
  Rng r(3);
  auto p = random_permutation(1000, r);
  std::set<std::int32_t> seen(p.begin(), p.end());
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), 999);
  int fixed = 0;
  for (int i = 0; i < 1000; ++i) fixed += p[static_cast<size_t>(i)] == i;
  EXPECT_LT(fixed, 10);  // a shuffle, not the identity
  Rng u(5);
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    float x = u.uniform();
    ASSERT_GE(x, 0.f);
    ASSERT_LT(x, 1.f);
    sum += x;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

TEST(EngineCost, CountsFmaAsTwoAndEachPassFromItsOwnLoops) {
  ops::LinearShape l{64, 784, 256, true, ops::Activation::ReLU};
  PassCosts c = l.cost();
  EXPECT_DOUBLE_EQ(c.forward.flops, 2.0 * 64 * 784 * 256 + 64 * 256 + 64 * 256);
  EXPECT_DOUBLE_EQ(c.forward.bytes, 4.0 * (64 * 784 + 256 * 784 + 256 + 64 * 256));
  EXPECT_DOUBLE_EQ(c.input_grad.flops, 2.0 * 64 * 784 * 256 + 64 * 256);
  EXPECT_DOUBLE_EQ(c.weight_grad.flops, 2.0 * 64 * 784 * 256 + 64 * 256);
  ops::Conv2dShape k;
  k.n = 10;
  k.c = 4;
  k.h = k.w = 40;
  k.k = 16;
  k.r = k.s = 7;
  EXPECT_EQ(k.oh(), 34);
  PassCosts cc = k.cost();
  const double macs = 10.0 * 16 * 34 * 34 * 4 * 49;
  EXPECT_DOUBLE_EQ(cc.forward.flops, 2 * macs + 10.0 * 16 * 34 * 34);
  EXPECT_DOUBLE_EQ(cc.input_grad.flops, 2 * macs);
  EXPECT_DOUBLE_EQ(cc.forward.bytes, 4.0 * (10 * 4 * 40 * 40 + 16 * 4 * 49 + 16 + 10 * 16 * 34 * 34));
  EXPECT_EQ(std::string(to_string(Pass::WeightGrad)), "weight-grad");
}

TEST(EngineModels, LayerShapesAreThoseOfTheSeeds) {
  auto mlp = make_model("simple-mlp");
  auto d = mlp->describe(1);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[1].op, "linear+relu");
  EXPECT_EQ(d[3].op, "linear+relu");  // the seed's ReLU after fc3
  EXPECT_EQ(d[3].out, (Shape{10}));

  auto cnn = make_model("simple-cnn");
  EXPECT_EQ(cnn->shape_before(1), (Shape{1, 24, 24}));
  EXPECT_EQ(cnn->shape_before(4), (Shape{1, 4, 4}));
  EXPECT_EQ(cnn->shape_before(7), (Shape{10}));

  auto e = make_model("ece408");
  EXPECT_EQ(e->input_shape(), (Shape{1, 86, 86}));
  EXPECT_EQ(e->shape_before(1), (Shape{4, 80, 80}));
  EXPECT_EQ(e->shape_before(2), (Shape{4, 40, 40}));
  EXPECT_EQ(e->shape_before(3), (Shape{16, 34, 34}));
  EXPECT_EQ(e->shape_before(4), (Shape{16, 8, 8}));
  EXPECT_EQ(e->shape_before(5), (Shape{1024}));
  EXPECT_EQ(e->shape_before(7), (Shape{10}));

  try {
    make_model("resnet-1000");
    FAIL() << "an unknown model must throw";
  } catch (const Error& err) {
    EXPECT_EQ(err.kind(), ErrorKind::Usage);
    EXPECT_NE(err.hint().find("simple-mlp"), std::string::npos);
  }
}

TEST(EngineModels, InitialisationIsPyTorchsUniformAndSeeded) {
  auto m = make_model("simple-mlp");
  auto p = m->init_params(1), q = m->init_params(1), r = m->init_params(2);
  EXPECT_EQ(p, q);
  EXPECT_NE(p, r);
  // fc1: weights (256, 784) then bias, both U(±1/√784).
  const std::int64_t off = m->param_offset(1);
  const float bound = 1.0f / std::sqrt(784.0f);
  float lo = 1, hi = -1;
  double sum = 0, sq = 0;
  for (std::int64_t i = 0; i < 256 * 784; ++i) {
    float w = p[static_cast<size_t>(off + i)];
    lo = std::min(lo, w);
    hi = std::max(hi, w);
    sum += w;
    sq += double(w) * w;
  }
  EXPECT_GE(lo, -bound);
  EXPECT_LE(hi, bound);
  EXPECT_LT(lo, -0.99f * bound);
  EXPECT_GT(hi, 0.99f * bound);
  const double var = sq / (256 * 784);
  EXPECT_NEAR(var, bound * bound / 3, 0.02 * bound * bound / 3);  // Var U(-b, b) = b²/3
  // The padding between tensors is zero: fc3's bias has 10 values in a block of 64.
  const std::int64_t bias3 = m->param_offset(3) + 128 * 10;
  EXPECT_NE(p[static_cast<size_t>(bias3 + 9)], 0.0f);
  for (int i = 10; i < 64; ++i) EXPECT_EQ(p[static_cast<size_t>(bias3 + i)], 0.0f);
}

// Loss of a whole network (mean cross-entropy over a batch) against its
// gradients, by central differences in float on the reference backend, for
// the largest gradients of each layer: this checks the wiring (buffers,
// offsets, which layers get input gradients); the ops themselves are checked
// in float64 by the harness.
static void network_gradient_check(const std::string& name, std::int64_t batch) {
  auto model = make_model(name);
  Context ctx(Backend::CpuRef);
  Network net(*model, ctx, batch);
  net.set_params(model->init_params(11));
  Rng rng(5);
  const std::int64_t in = numel(model->input_shape());
  std::vector<float> x(static_cast<size_t>(batch * in));
  for (auto& v : x) v = rng.normal();
  std::vector<std::int32_t> y(static_cast<size_t>(batch));
  for (auto& v : y) v = static_cast<std::int32_t>(rng.below(10));
  auto loss = [&] {
    std::copy(x.begin(), x.end(), net.input());
    net.forward(batch);
    double sum = 0;
    ops::LossStats st;
    st.loss_sum = &sum;
    ops::cross_entropy(ctx, {batch, 10}, net.dlogits(), net.logits(), y.data(), 1.0f / static_cast<float>(batch), st);
    return sum / static_cast<double>(batch);
  };
  loss();
  net.backward(batch);
  const std::vector<float> g = net.grads();
  float* p = net.param_data();
  int checked = 0, close = 0;
  for (size_t li = 0; li < model->layers().size(); ++li) {
    const std::int64_t n = model->layers()[li]->param_count();
    if (n == 0) continue;
    const std::int64_t off = model->param_offset(li);
    // The largest gradients of each layer: far above float rounding of the loss.
    std::vector<std::int64_t> idx;
    for (std::int64_t i = 0; i < n; ++i) idx.push_back(off + i);
    std::partial_sort(idx.begin(), idx.begin() + std::min<std::int64_t>(8, n), idx.end(),
                      [&](auto a, auto b) { return std::abs(g[size_t(a)]) > std::abs(g[size_t(b)]); });
    for (std::int64_t k = 0; k < std::min<std::int64_t>(8, n); ++k) {
      const auto i = static_cast<size_t>(idx[static_cast<size_t>(k)]);
      const float save = p[i], h = 1e-3f;
      p[i] = save + h;
      const double lp = loss();
      p[i] = save - h;
      const double lm = loss();
      p[i] = save;
      const double fd = (lp - lm) / (2 * h);
      ++checked;
      close += std::abs(fd - g[i]) <= 0.02 * std::max(std::abs(double(g[i])), 1e-3);
    }
  }
  // A perturbation may cross a ReLU or max-pool kink now and then; a wiring
  // bug makes most gradients wrong.
  ASSERT_GT(checked, 0);
  EXPECT_GE(close, checked * 9 / 10) << name << ": " << close << " of " << checked << " gradients within 2%";
}

TEST(EngineNetwork, GradientsOfEveryModelMatchFiniteDifferences) {
  network_gradient_check("simple-mlp", 3);
  network_gradient_check("simple-cnn", 3);
  network_gradient_check("ece408", 2);
}

TEST(EngineNetwork, SgdMatchesTorchOptimSgd) {
  // Two steps of p, g, buf by hand, as torch.optim.SGD(lr, momentum, weight_decay) does them.
  Context ctx(Backend::Cpu);
  std::vector<float> p = {1.0f, -2.0f}, g = {0.5f, 0.25f}, buf = {0, 0};
  ops::SgdConfig cfg{0.1f, 0.9f, 0.01f};
  ops::sgd_update(ctx, {2, true}, p.data(), g.data(), buf.data(), cfg);
  // step 1: d = g + wd p = (0.51, 0.23); buf = d; p -= lr buf
  EXPECT_FLOAT_EQ(buf[0], 0.51f);
  EXPECT_FLOAT_EQ(p[0], 1.0f - 0.051f);
  ops::sgd_update(ctx, {2, true}, p.data(), g.data(), buf.data(), cfg);
  const float d0 = 0.5f + 0.01f * (1.0f - 0.051f);
  EXPECT_FLOAT_EQ(buf[0], 0.9f * 0.51f + d0);
  EXPECT_FLOAT_EQ(p[0], (1.0f - 0.051f) - 0.1f * (0.9f * 0.51f + d0));
}
