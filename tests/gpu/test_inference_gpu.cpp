// The inference fusions: the pooled convolution (ops::conv2d_maxpool_forward,
// the register-tiled kernel's pooled epilogue) and the Linear-Linear-softmax
// head (ops::linear_softmax_head_forward), each against float64 on fresh
// random values, and every model's Network::infer_probs, which takes them,
// against its training forward, which does not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "roofline/engine/context.hpp"
#include "roofline/engine/model.hpp"
#include "roofline/engine/network.hpp"
#include "roofline/engine/ops.hpp"
#include "roofline/engine/rng.hpp"
#include "tests/support/gpu.hpp"
#include "tests/support/numeric.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

using roofline::test::rel_error;

std::vector<float> normal(Rng& rng, std::int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = rng.normal();
  return v;
}

Tensor upload(Context& ctx, const std::vector<float>& v) {
  Tensor t = ctx.empty({static_cast<std::int64_t>(v.size())});
  copy_bytes(t.raw(), t.device(), v.data(), Device::cpu(), v.size() * sizeof(float));
  return t;
}

// max_pool(act(conv(in) + b)) in float64, straight from the definitions.
std::vector<double> reference(const ops::Conv2dShape& s, const ops::Pool2dShape& p, const std::vector<float>& in,
                              const std::vector<float>& w, const std::vector<float>& b) {
  const std::int64_t oh = s.oh(), ow = s.ow();
  std::vector<double> conv(static_cast<size_t>(s.n * s.k * oh * ow));
  for (std::int64_t n = 0; n < s.n; ++n)
    for (std::int64_t k = 0; k < s.k; ++k)
      for (std::int64_t y = 0; y < oh; ++y)
        for (std::int64_t x = 0; x < ow; ++x) {
          double acc = s.bias ? b[size_t(k)] : 0.0;
          for (std::int64_t c = 0; c < s.c; ++c)
            for (std::int64_t r = 0; r < s.r; ++r)
              for (std::int64_t q = 0; q < s.s; ++q) {
                const std::int64_t iy = y - s.pad + r, ix = x - s.pad + q;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                acc += double(in[size_t(((n * s.c + c) * s.h + iy) * s.w + ix)]) *
                       w[size_t(((k * s.c + c) * s.r + r) * s.s + q)];
              }
          if (s.act == ops::Activation::ReLU) acc = std::max(acc, 0.0);
          conv[size_t(((n * s.k + k) * oh + y) * ow + x)] = acc;
        }
  std::vector<double> out(static_cast<size_t>(s.n * s.k * p.oh() * p.ow()));
  for (std::int64_t nk = 0; nk < s.n * s.k; ++nk)
    for (std::int64_t y = 0; y < p.oh(); ++y)
      for (std::int64_t x = 0; x < p.ow(); ++x) {
        double m = -INFINITY;
        for (std::int64_t r = 0; r < p.kernel; ++r)
          for (std::int64_t q = 0; q < p.kernel; ++q)
            m = std::max(m, conv[size_t((nk * oh + y * p.stride + r) * ow + x * p.stride + q)]);
        out[size_t((nk * p.oh() + y) * p.ow() + x)] = m;
      }
  return out;
}

TEST(ConvMaxPoolGpu, MatchesTheFloat64Reference) {
  ROOFLINE_REQUIRE_GPU();
  struct Case {
    const char* why;
    std::int64_t n, c, h, w, k, r, pad, pool;
    bool bias, relu, applies;
  };
  const Case cases[] = {
      {"ece408 conv1 + pool 2 at batch 64", 64, 1, 86, 86, 4, 7, 0, 2, true, true, true},
      {"ece408 conv2 + pool 4 at batch 128 (34 → 8: the last rows unread)", 128, 4, 40, 40, 16, 7, 0, 4, true, true, true},
      {"ece408 conv2 at batch 24 (32-thread bands)", 24, 4, 40, 40, 16, 7, 0, 4, true, true, true},
      {"ece408 conv2 at batch 1: fewer blocks than SMs, the caller runs the two ops", 1, 4, 40, 40, 16, 7, 0, 4, true,
       true, false},
      {"5x5, padded, no ReLU (negative maxima), 13 channels: a tail tile (more than 16 go to cuDNN)", 40, 3, 17, 15,
       13, 5, 2, 2, true, false,
       true},
      {"3x3, no bias, rows of 9 pooled to 2", 150, 2, 11, 11, 6, 3, 0, 4, false, true, true},
      {"4x4 kernel: not compiled, the caller runs the two ops", 2, 1, 12, 12, 4, 4, 0, 2, true, true, false},
  };
  Context ctx(Backend::Cuda);
  Rng rng(4082);
  for (const Case& k : cases) {
    SCOPED_TRACE(k.why);
    ops::Conv2dShape s;
    s.n = k.n, s.c = k.c, s.h = k.h, s.w = k.w, s.k = k.k, s.r = s.s = k.r, s.pad = k.pad, s.bias = k.bias;
    s.act = k.relu ? ops::Activation::ReLU : ops::Activation::None;
    ops::Pool2dShape p;
    p.n = s.n, p.c = s.k, p.h = s.oh(), p.w = s.ow(), p.kernel = p.stride = k.pool;
    const auto in = normal(rng, s.n * s.c * s.h * s.w), w = normal(rng, s.k * s.c * s.r * s.s), b = normal(rng, s.k);
    Tensor din = upload(ctx, in), dw = upload(ctx, w), db = upload(ctx, b);
    const std::int64_t outs = s.n * s.k * p.oh() * p.ow();
    Tensor out = ctx.empty({outs + 64});  // 64 guard floats after the output
    out.fill(NAN);
    const bool ran = ops::conv2d_maxpool_forward(ctx, s, p, out.f32(), din.f32(), dw.f32(), db.f32());
    ctx.synchronize();
    ASSERT_EQ(ran, k.applies);
    const std::vector<float> got = out.to_floats();
    for (std::int64_t i = outs; i < outs + 64; ++i) ASSERT_TRUE(std::isnan(got[size_t(i)])) << "guard " << i - outs;
    if (!ran) {
      EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](float v) { return std::isnan(v); })) << "wrote nothing";
      continue;
    }
    const std::vector<double> want = reference(s, p, in, w, b);
    EXPECT_LE(rel_error(got, want), 1e-5);
  }
}

// softmax(l2(l1(x))) in float64.
std::vector<double> head_reference(const ops::LinearShape& l1, const ops::LinearShape& l2, const std::vector<float>& x,
                                   const std::vector<float>& w1, const std::vector<float>& b1,
                                   const std::vector<float>& w2, const std::vector<float>& b2) {
  std::vector<double> out(static_cast<size_t>(l1.n * l2.out));
  for (std::int64_t m = 0; m < l1.n; ++m) {
    std::vector<double> h(static_cast<size_t>(l1.out)), z(static_cast<size_t>(l2.out));
    for (std::int64_t f = 0; f < l1.out; ++f) {
      double acc = l1.bias ? b1[size_t(f)] : 0.0;
      for (std::int64_t k = 0; k < l1.in; ++k) acc += double(x[size_t(m * l1.in + k)]) * w1[size_t(f * l1.in + k)];
      h[size_t(f)] = l1.act == ops::Activation::ReLU ? std::max(acc, 0.0) : acc;
    }
    double mx = -INFINITY;
    for (std::int64_t c = 0; c < l2.out; ++c) {
      double acc = l2.bias ? b2[size_t(c)] : 0.0;
      for (std::int64_t k = 0; k < l2.in; ++k) acc += h[size_t(k)] * w2[size_t(c * l2.in + k)];
      z[size_t(c)] = l2.act == ops::Activation::ReLU ? std::max(acc, 0.0) : acc;
      mx = std::max(mx, z[size_t(c)]);
    }
    double sum = 0;
    for (double v : z) sum += std::exp(v - mx);
    for (std::int64_t c = 0; c < l2.out; ++c) out[size_t(m * l2.out + c)] = std::exp(z[size_t(c)] - mx) / sum;
  }
  return out;
}

TEST(LinearHeadGpu, MatchesTheFloat64Reference) {
  ROOFLINE_REQUIRE_GPU();
  struct Case {
    const char* why;
    ops::LinearShape l1, l2;
    bool applies;
  };
  using A = ops::Activation;
  const Case cases[] = {
      {"ece408's head at batch 64", {64, 1024, 32, true, A::ReLU}, {64, 32, 10, true, A::None}, true},
      {"ece408's head at batch 1: a row a block", {1, 1024, 32, true, A::ReLU}, {1, 32, 10, true, A::None}, true},
      {"batch 600: more rows than an H100 has SMs, 4 rows a block", {600, 64, 32, true, A::ReLU}, {600, 32, 10, true, A::None}, true},
      {"12 hidden features: fewer than the warps", {3, 8, 12, true, A::ReLU}, {3, 12, 10, true, A::None}, true},
      {"256 hidden features over 1024 inputs, 9 rows: W1 (1 MB) read from global memory, not staged",
       {9, 1024, 256, true, A::ReLU}, {9, 256, 10, false, A::None}, true},
      {"simple-mlp's fc2 + fc3 (ReLU before the softmax) at batch 5: a part-filled block",
       {5, 256, 128, true, A::ReLU}, {5, 128, 10, true, A::ReLU}, true},
      {"simple-cnn's head at batch 1 (16 inputs: half a warp), no biases", {1, 16, 100, false, A::ReLU},
       {1, 100, 10, false, A::None}, true},
      {"32 classes: every lane", {7, 8, 40, true, A::None}, {7, 40, 32, true, A::None}, true},
      {"33 classes: not a warp's lanes", {2, 8, 40, true, A::None}, {2, 40, 33, true, A::None}, false},
      {"30 inputs: not float4 rows", {3, 30, 12, true, A::ReLU}, {3, 12, 10, true, A::None}, false},
  };
  Context ctx(Backend::Cuda);
  Rng rng(3210);
  for (const Case& k : cases) {
    SCOPED_TRACE(k.why);
    const auto x = normal(rng, k.l1.n * k.l1.in), w1 = normal(rng, k.l1.out * k.l1.in), b1 = normal(rng, k.l1.out),
               w2 = normal(rng, k.l2.out * k.l2.in), b2 = normal(rng, k.l2.out);
    Tensor dx = upload(ctx, x), dw1 = upload(ctx, w1), db1 = upload(ctx, b1), dw2 = upload(ctx, w2), db2 = upload(ctx, b2);
    const std::int64_t outs = k.l1.n * k.l2.out;
    Tensor probs = ctx.empty({outs + 64});
    probs.fill(NAN);
    const bool ran = ops::linear_softmax_head_forward(ctx, k.l1, k.l2, probs.f32(), dx.f32(), dw1.f32(), db1.f32(),
                                                      dw2.f32(), db2.f32());
    ctx.synchronize();
    ASSERT_EQ(ran, k.applies);
    const std::vector<float> got = probs.to_floats();
    for (std::int64_t i = outs; i < outs + 64; ++i) ASSERT_TRUE(std::isnan(got[size_t(i)])) << "guard " << i - outs;
    if (!ran) continue;
    const std::vector<double> want = head_reference(k.l1, k.l2, x, w1, b1, w2, b2);
    EXPECT_LE(rel_error(got, want), 1e-5);
  }
}

// Every model's inference (Network::infer_probs: pooled convolutions and the
// fused head where they apply) gives the probabilities of its training
// forward (every layer on its own) followed by the softmax.
TEST(InferenceGpu, InferProbsMatchesTheTrainingForward) {
  ROOFLINE_REQUIRE_GPU();
  Context ctx(Backend::Cuda);
  for (const char* name : {"simple-mlp", "simple-cnn", "ece408"})
    for (const std::int64_t batch : {1, 64}) {
      SCOPED_TRACE(::testing::Message() << name << " batch " << batch);
      const auto model = make_model(name);
      Network net(*model, ctx, batch);
      net.set_params(model->init_params(7));
      Rng rng(static_cast<std::uint64_t>(batch));
      std::int64_t per = 1;
      for (std::int64_t d : model->input_shape()) per *= d;
      const auto x = normal(rng, batch * per);
      copy_bytes(net.input(), Device::cuda(0), x.data(), Device::cpu(), x.size() * sizeof(float));
      const std::int64_t n = batch * model->classes();
      Tensor want = ctx.empty({n}), got = ctx.empty({n + 64});
      got.fill(NAN);
      net.forward(batch, true);
      ops::softmax_forward(ctx, {batch, model->classes()}, want.f32(), net.logits());
      net.infer_probs(batch, got.f32());
      ctx.synchronize();
      const std::vector<float> a = want.to_floats(), b = got.to_floats();
      for (std::int64_t i = n; i < n + 64; ++i) ASSERT_TRUE(std::isnan(b[size_t(i)])) << "guard " << i - n;
      double num = 0, den = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_TRUE(std::isfinite(b[i])) << "output " << i;
        num += double(b[i] - a[i]) * (b[i] - a[i]);
        den += double(a[i]) * a[i];
      }
      EXPECT_LE(std::sqrt(num / std::max(den, 1e-30)), 1e-6);
    }
}

}  // namespace
