// The reference convolution's memory formats and groups, checked against
// each other (the harness checks every backend against this reference, so
// the reference itself is checked here by other means): NHWC equals NCHW on
// transposed data, a grouped convolution equals one convolution per group,
// the cost counts groups and dtype widths, and the CPU backends refuse, with
// Error(Unsupported), what they do not run.
#include <gtest/gtest.h>

#include <cmath>

#include <functional>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/engine/ops.hpp"
#include "roofline/engine/rng.hpp"
#include "src/engine/cpu/ref_ops.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

std::vector<double> random(Rng& r, std::int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = r.normal();
  return v;
}

// (n, c, h, w) NCHW <-> NHWC
std::vector<double> to_nhwc(const std::vector<double>& a, std::int64_t n, std::int64_t c, std::int64_t h,
                            std::int64_t w) {
  std::vector<double> b(a.size());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t ch = 0; ch < c; ++ch)
      for (std::int64_t y = 0; y < h; ++y)
        for (std::int64_t x = 0; x < w; ++x)
          b[static_cast<size_t>(((i * h + y) * w + x) * c + ch)] = a[static_cast<size_t>(((i * c + ch) * h + y) * w + x)];
  return b;
}

ops::Conv2dShape shape(std::int64_t groups) {
  ops::Conv2dShape s;
  s.n = 2;
  s.c = 6;
  s.h = 9;
  s.w = 7;
  s.k = 9;
  s.r = 3;
  s.s = 5;
  s.stride = 2;
  s.pad = 1;
  s.groups = groups;
  s.act = ops::Activation::ReLU;
  return s;
}

TEST(ConvLayouts, NhwcEqualsNchwOnTransposedData) {
  for (std::int64_t groups : {1, 3}) {
    Rng rng(5 + groups);
    ops::Conv2dShape s = shape(groups);
    const std::int64_t ni = s.n * s.c * s.h * s.w, nw = s.k * s.cg() * s.r * s.s, no = s.n * s.k * s.oh() * s.ow();
    const auto in = random(rng, ni), w = random(rng, nw), b = random(rng, s.k), dpre = random(rng, no);
    std::vector<double> out(no), din(ni), dw(nw), db(s.k);
    ref::conv2d_forward<double>(s, out.data(), in.data(), w.data(), b.data());
    ref::conv2d_backward_input<double>(s, din.data(), dpre.data(), w.data());
    ref::conv2d_backward_weight<double>(s, dw.data(), db.data(), dpre.data(), in.data());

    ops::Conv2dShape t = s;
    t.format = MemoryFormat::NHWC;
    // Weights (k, cg, r, s) -> (k, r, s, cg): the same transpose with k as the batch.
    const auto in_t = to_nhwc(in, s.n, s.c, s.h, s.w), w_t = to_nhwc(w, s.k, s.cg(), s.r, s.s),
               dpre_t = to_nhwc(dpre, s.n, s.k, s.oh(), s.ow());
    std::vector<double> out_t(no), din_t(ni), dw_t(nw), db_t(s.k);
    ref::conv2d_forward<double>(t, out_t.data(), in_t.data(), w_t.data(), b.data());
    ref::conv2d_backward_input<double>(t, din_t.data(), dpre_t.data(), w_t.data());
    ref::conv2d_backward_weight<double>(t, dw_t.data(), db_t.data(), dpre_t.data(), in_t.data());
    // Same products summed in the same order: equal, not just close.
    EXPECT_EQ(out_t, to_nhwc(out, s.n, s.k, s.oh(), s.ow())) << "groups " << groups;
    EXPECT_EQ(din_t, to_nhwc(din, s.n, s.c, s.h, s.w)) << "groups " << groups;
    EXPECT_EQ(dw_t, to_nhwc(dw, s.k, s.cg(), s.r, s.s)) << "groups " << groups;
    EXPECT_EQ(db_t, db) << "groups " << groups;
  }
}

// Output channels [g·k/G, (g+1)·k/G) see only input channels [g·c/G, (g+1)·c/G).
TEST(ConvLayouts, AGroupedConvolutionIsOneConvolutionPerGroup) {
  Rng rng(11);
  const ops::Conv2dShape s = shape(3);
  const std::int64_t G = s.groups, cg = s.cg(), kg = s.k / G, plane_in = s.h * s.w, plane_out = s.oh() * s.ow();
  const auto in = random(rng, s.n * s.c * plane_in), w = random(rng, s.k * cg * s.r * s.s), b = random(rng, s.k);
  std::vector<double> out(static_cast<size_t>(s.n * s.k * plane_out));
  ref::conv2d_forward<double>(s, out.data(), in.data(), w.data(), b.data());
  ops::Conv2dShape one = s;
  one.groups = 1;
  one.c = cg;
  one.k = kg;
  for (std::int64_t g = 0; g < G; ++g) {
    std::vector<double> in_g, out_g(static_cast<size_t>(s.n * kg * plane_out));
    for (std::int64_t i = 0; i < s.n; ++i)
      for (std::int64_t j = 0; j < cg * plane_in; ++j) in_g.push_back(in[static_cast<size_t>((i * s.c + g * cg) * plane_in + j)]);
    const double* w_g = w.data() + g * kg * cg * s.r * s.s;
    ref::conv2d_forward<double>(one, out_g.data(), in_g.data(), w_g, b.data() + g * kg);
    for (std::int64_t i = 0; i < s.n; ++i)
      for (std::int64_t j = 0; j < kg * plane_out; ++j)
        EXPECT_EQ(out_g[static_cast<size_t>(i * kg * plane_out + j)],
                  out[static_cast<size_t>((i * s.k + g * kg) * plane_out + j)])
            << "group " << g;
  }
}

TEST(ConvLayouts, CostCountsGroupsAndDtypeWidths) {
  ops::Conv2dShape dense = shape(1), grouped = shape(3);
  dense.act = grouped.act = ops::Activation::None;
  dense.bias = grouped.bias = false;
  EXPECT_DOUBLE_EQ(grouped.cost().forward.flops * 3, dense.cost().forward.flops);
  ops::Conv2dShape half = dense;
  half.dtype = DType::BF16;
  const double ins = 2.0 * 6 * 9 * 7, ws = 9.0 * 6 * 3 * 5, outs = 2.0 * 9 * dense.oh() * dense.ow();
  EXPECT_DOUBLE_EQ(half.cost().forward.bytes, 2 * (ins + ws + outs));
  // The weight gradient reads bf16 activations and writes fp32 dw.
  EXPECT_DOUBLE_EQ(half.cost().weight_grad.bytes, 2 * (outs + ins) + 4 * ws);
  ops::LinearShape l{8, 64, 32, true, ops::Activation::None, DType::BF16};
  EXPECT_DOUBLE_EQ(l.cost().forward.bytes, 2 * (8 * 64 + 32 * 64 + 8 * 32) + 4 * 32);
  ops::Conv2dShape bad = dense;
  bad.groups = 4;  // does not divide 6 channels
  EXPECT_FALSE(bad.valid());
  bad = dense;
  bad.dtype = DType::I32;
  EXPECT_FALSE(bad.valid());
}

ErrorKind kind_of(const std::function<void()>& f, std::string* what = nullptr, std::string* hint = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (what) *what = e.what();
    if (hint) *hint = e.hint();
    return e.kind();
  }
  return ErrorKind::Internal;  // nothing thrown: the tests below expect a throw
}

TEST(ConvLayouts, CpuBackendsRefuse16BitWithAHintAndRunNhwc) {
  ops::Conv2dShape s = shape(1);
  const std::int64_t ni = s.n * s.c * s.h * s.w, no = s.n * s.k * s.oh() * s.ow();
  std::vector<float> in(static_cast<size_t>(ni), 1.f), w(static_cast<size_t>(s.k * s.c * s.r * s.s), 1.f),
      b(static_cast<size_t>(s.k), 0.f), out(static_cast<size_t>(no));
  Context fast(Backend::Cpu), ref_ctx(Backend::CpuRef);
  std::string what, hint;
  // NHWC and groups run on both CPU backends (the fast one through oneDNN) and agree.
  s.format = MemoryFormat::NHWC;
  std::vector<float> out_ref(out.size());
  ops::conv2d_forward(fast, s, out.data(), in.data(), w.data(), b.data());
  ops::conv2d_forward(ref_ctx, s, out_ref.data(), in.data(), w.data(), b.data());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], out_ref[i], 1e-4f * (1 + std::fabs(out_ref[i])));
  s = shape(1);
  s.dtype = DType::BF16;
  for (Context* ctx : {&fast, &ref_ctx}) {
    EXPECT_EQ(kind_of([&] { ops::conv2d_forward(*ctx, s, out.data(), in.data(), w.data(), b.data()); }, &what, &hint),
              ErrorKind::Unsupported);
    EXPECT_NE(what.find("GPU only"), std::string::npos) << what;
    EXPECT_NE(hint.find("--precision fp32"), std::string::npos) << hint;
  }
  ops::LinearShape l{2, 4, 3, true, ops::Activation::None, DType::F16};
  EXPECT_EQ(kind_of([&] { ops::linear_forward(fast, l, out.data(), in.data(), w.data(), b.data()); }),
            ErrorKind::Unsupported);
}

}  // namespace
