// GraphNetwork on the CPU backends: the gradients of a whole network (with a
// residual, BatchNorm, pools and Linear layers) against directional finite
// differences of its loss, the fast CPU backend against the reference, and
// that SGD steps lower the loss.
#include <gtest/gtest.h>

#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/ops.hpp"
#include "roofline/engine/rng.hpp"
#include "tests/support/golden_init.hpp"

using namespace roofline;
using namespace roofline::engine;
using ops::Activation;

namespace {

// A small network with every kind of node the models use and a residual.
LayerGraph tiny_graph() {
  LayerGraph g("tiny", {3, 8, 8}, 5);
  int x = g.conv2d("c1", g.input(), 4, 3, 1, 1, false);
  int a = g.batchnorm2d("bn1", x, Activation::ReLU);
  int y = g.conv2d("c2", a, 4, 3, 1, 1, false);
  y = g.batchnorm2d("bn2", y, Activation::ReLU, a);
  y = g.maxpool2d("p", y, 3, 2, 1);
  y = g.conv2d("c3", y, 6, 3, 2, 1, true, Activation::ReLU);
  y = g.adaptive_avgpool2d("avg", y, 1, 1);
  y = g.flatten("flat", y);
  y = g.linear("l1", y, 7, true, Activation::ReLU);
  y = g.dropout("drop", y, 0.0f);
  y = g.linear("l2", y, 5);
  g.set_output(y);
  return g;
}

std::vector<float> flat(const std::vector<std::vector<float>>& t) {
  std::vector<float> out;
  for (const auto& v : t) out.insert(out.end(), v.begin(), v.end());
  return out;
}

struct Fixture {
  LayerGraph g = tiny_graph();
  std::int64_t batch = 4;
  std::vector<float> x = test::golden_input(batch, 8);
  std::vector<std::int32_t> y = test::golden_labels(batch, 5);
};

float loss_at(GraphNetwork& net, const Fixture& f, const std::vector<std::vector<float>>& state) {
  net.load_state(state);
  net.forward(f.batch, true);
  net.loss_forward(f.batch);
  return net.loss();
}

}  // namespace

TEST(GraphNetwork, GradientsMatchDirectionalDifferences) {
  Fixture f;
  Context ctx(Backend::CpuRef);
  GraphNetwork net(f.g, ctx, f.batch);
  const auto state = test::golden_state(f.g);
  net.set_batch(f.x, f.y, f.batch);
  net.load_state(state);
  net.forward(f.batch, true);
  net.loss_forward(f.batch);
  net.backward(f.batch);
  const auto grads = net.grads();
  Rng rng(11);
  // One direction per learnable tensor, so a wrong gradient is named.
  for (size_t t = 0; t < state.size(); ++t) {
    if (!f.g.params()[t].learnable) continue;
    std::vector<float> d(state[t].size());
    double gd = 0;
    for (size_t i = 0; i < d.size(); ++i) {
      d[i] = rng.uniform(-1.0f, 1.0f);
      gd += static_cast<double>(grads[t][i]) * d[i];
    }
    // ReLU and max-pool kinks make a wider step unreliable, and float losses a
    // narrower one; the ops' own gradients are checked exactly in float64 by the
    // harness, so this checks the routing (a missing or doubled path is off by tens
    // of percent, not by 5).
    const float eps = 1e-3f;
    auto plus = state, minus = state;
    for (size_t i = 0; i < d.size(); ++i) {
      plus[t][i] += eps * d[i];
      minus[t][i] -= eps * d[i];
    }
    const double fd = (static_cast<double>(loss_at(net, f, plus)) - loss_at(net, f, minus)) / (2.0 * eps);
    EXPECT_NEAR(fd, gd, 5e-2 * std::fabs(gd) + 2e-4) << f.g.params()[t].name;
  }
}

TEST(GraphNetwork, FastCpuMatchesTheReference) {
  Fixture f;
  Context ref(Backend::CpuRef), fast(Backend::Cpu);
  GraphNetwork a(f.g, ref, f.batch), b(f.g, fast, f.batch);
  const auto state = test::golden_state(f.g);
  for (GraphNetwork* n : {&a, &b}) {
    n->load_state(state);
    n->set_batch(f.x, f.y, f.batch);
    n->forward(f.batch, true);
    n->loss_forward(f.batch);
    n->backward(f.batch);
  }
  const auto la = a.logits(f.batch), lb = b.logits(f.batch);
  for (size_t i = 0; i < la.size(); ++i) EXPECT_NEAR(la[i], lb[i], 1e-4f * (1 + std::fabs(la[i])));
  const auto ga = flat(a.grads()), gb = flat(b.grads());
  double num = 0, den = 0;
  for (size_t i = 0; i < ga.size(); ++i) num += (ga[i] - gb[i]) * double(ga[i] - gb[i]), den += ga[i] * double(ga[i]);
  EXPECT_LT(std::sqrt(num / den), 1e-4);
  // Running statistics moved the same way.
  const auto sa = flat(a.state()), sb = flat(b.state());
  for (size_t i = 0; i < sa.size(); ++i) EXPECT_NEAR(sa[i], sb[i], 1e-5f * (1 + std::fabs(sa[i])));
}

TEST(GraphNetwork, SgdLowersTheLoss) {
  Fixture f;
  Context ctx(Backend::Cpu);
  GraphOptions o;
  o.sgd = {0.05f, 0.9f, 0.0f};
  GraphNetwork net(f.g, ctx, f.batch, o);
  net.load_state(test::golden_state(f.g));
  net.set_batch(f.x, f.y, f.batch);
  net.train_step(f.batch);
  const float first = net.loss();
  for (int i = 0; i < 30; ++i) net.train_step(f.batch);
  EXPECT_LT(net.loss(), 0.5f * first);
}

TEST(GraphNetwork, RefusesMixedPrecisionOnTheCpu) {
  Fixture f;
  Context ctx(Backend::Cpu);
  GraphOptions o;
  o.precision = Precision::BF16;
  try {
    GraphNetwork net(f.g, ctx, 2, o);
    FAIL() << "bf16 on the CPU was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.hint()).find("fp32"), std::string::npos);
  }
}

// bf16 and TF32 need Ampere's tensor cores: a V100 or a T4 is refused with the
// reason; fp16 and fp32 run anywhere.
TEST(GraphNetwork, PrecisionsNeedTheirTensorCores) {
  using roofline::engine::Precision;
  using roofline::engine::precision_unsupported_reason;
  EXPECT_NE(precision_unsupported_reason(Precision::BF16, 7, 0).find("8.0 (Ampere)"), std::string::npos);
  EXPECT_NE(precision_unsupported_reason(Precision::TF32, 7, 5).find("this GPU is 7.5"), std::string::npos);
  EXPECT_EQ(precision_unsupported_reason(Precision::FP16, 7, 0), "");
  EXPECT_EQ(precision_unsupported_reason(Precision::FP32, 6, 1), "");
  EXPECT_EQ(precision_unsupported_reason(Precision::BF16, 8, 0), "");
  EXPECT_EQ(precision_unsupported_reason(Precision::BF16, 9, 0), "");
}

// An inference max pool writes no argmax (null): the same output as with one
// on both CPU paths, NCHW and NHWC, padded or not.
TEST(MaxPool, ANullArgmaxGivesTheSameOutputOnTheCpu) {
  for (Backend be : {Backend::CpuRef, Backend::Cpu})
    for (MemoryFormat f : {MemoryFormat::NCHW, MemoryFormat::NHWC})
      for (std::int64_t pad : {0, 1}) {
        Context ctx(be);
        ops::Pool2dShape s;
        s.n = 2, s.c = 8, s.h = 13, s.w = 11, s.kernel = 3, s.stride = 2, s.pad = pad, s.format = f;
        const std::int64_t ni = s.n * s.c * s.h * s.w, no = s.n * s.c * s.oh() * s.ow();
        Rng rng(5);
        std::vector<float> in(static_cast<size_t>(ni)), a(static_cast<size_t>(no)), b(static_cast<size_t>(no));
        for (auto& x : in) x = rng.normal();
        std::vector<std::int32_t> arg(static_cast<size_t>(no));
        ops::maxpool2d_forward(ctx, s, a.data(), arg.data(), in.data());
        ops::maxpool2d_forward(ctx, s, b.data(), nullptr, in.data());
        EXPECT_EQ(a, b) << (be == Backend::Cpu ? "fast" : "reference") << " " << to_string(f) << " pad " << pad;
      }
}
