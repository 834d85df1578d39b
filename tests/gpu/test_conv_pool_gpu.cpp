// The pooled inference convolution (ops::conv2d_maxpool_forward, the
// register-tiled kernel's pooled epilogue): against a float64 convolution +
// ReLU + max pool on fresh random values, and the inference forward of a
// network that takes it against the training forward that does not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "roofline/engine/context.hpp"
#include "roofline/engine/model.hpp"
#include "roofline/engine/network.hpp"
#include "roofline/engine/ops.hpp"
#include "roofline/engine/rng.hpp"
#include "support/gpu.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

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
      {"ece408 conv2 at batch 1 (32-thread bands)", 1, 4, 40, 40, 16, 7, 0, 4, true, true, true},
      {"5x5, padded, no ReLU (negative maxima), 33 channels: a tail tile", 3, 3, 17, 15, 33, 5, 2, 2, true, false, true},
      {"3x3, no bias, rows of 9 pooled to 2", 2, 2, 11, 11, 6, 3, 0, 4, false, true, true},
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
    double num = 0, den = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_TRUE(std::isfinite(got[i])) << "output " << i;
      num += (got[i] - want[i]) * (got[i] - want[i]);
      den += want[i] * want[i];
    }
    EXPECT_LE(std::sqrt(num / den), 1e-5);
  }
}

// ece408's inference forward (both convolutions pooled in their kernels)
// gives the logits of its training forward (convolution, then pool).
TEST(ConvMaxPoolGpu, InferenceForwardMatchesTheTrainingForward) {
  ROOFLINE_REQUIRE_GPU();
  Context ctx(Backend::Cuda);
  const auto model = make_model("ece408");
  for (const std::int64_t batch : {1, 64}) {
    SCOPED_TRACE(batch);
    Network net(*model, ctx, batch);
    net.set_params(model->init_params(7));
    Rng rng(static_cast<std::uint64_t>(batch));
    const auto x = normal(rng, batch * 86 * 86);
    copy_bytes(net.input(), Device::cuda(0), x.data(), Device::cpu(), x.size() * sizeof(float));
    const std::int64_t n = batch * 10;
    net.forward(batch, true);
    std::vector<float> train(static_cast<size_t>(n)), infer(static_cast<size_t>(n));
    ctx.synchronize();
    copy_bytes(train.data(), Device::cpu(), net.logits(), Device::cuda(0), train.size() * sizeof(float));
    net.forward(batch, false);
    ctx.synchronize();
    copy_bytes(infer.data(), Device::cpu(), net.logits(), Device::cuda(0), infer.size() * sizeof(float));
    double num = 0, den = 0;
    for (size_t i = 0; i < train.size(); ++i) {
      ASSERT_TRUE(std::isfinite(infer[i]));
      num += double(infer[i] - train[i]) * (infer[i] - train[i]);
      den += double(train[i]) * train[i];
    }
    EXPECT_LE(std::sqrt(num / std::max(den, 1e-30)), 1e-6);
  }
}

}  // namespace
