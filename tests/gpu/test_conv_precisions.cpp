// Conv2d and Linear on the GPU in every precision and format (cuDNN's graph
// API, cuBLASLt), against the float64 CPU reference computed on the inputs
// rounded to the tested dtype, so only the GPU's own arithmetic is measured:
// fp32 accumulation and the rounding of the outputs.
//
// Bounds on ‖out − ref‖₂ / ‖ref‖₂ (per output; ReLU and bias included):
//  - true fp32 (tf32 off): 1e-5, the op harness's fp32 bound (fp32 sums over
//    a few thousand products measure ~1e-6).
//  - tf32: 3e-3. TF32 keeps 10 of fp32's 23 mantissa bits: each operand's
//    relative error is up to 2^-11 rounded (RMS 2.8e-4) or 2^-10 truncated,
//    the product's RMS √2 times that, and a sum of products with random signs
//    keeps that relative RMS: 4e-4 rounded, ~1e-3 truncated.
//  - bf16: 1e-2. The inputs are exact in bf16 and the sums fp32, so the
//    error is the output's rounding to bf16 (8 significant bits: RMS relative
//    error ~2e-3, twice rounded ~2.7e-3 where the bias and ReLU run after the
//    convolution); dw is fp32 (≤ 1e-5) or bf16 converted (~2e-3).
//  - fp16: 2e-3. The same with 11 significant bits: ~2.5e-4, twice ~3.5e-4.
// The true-fp32 test at a long reduction (2,304 products per output for the
// convolution, 4,096 for Linear) proves TF32 is off: TF32's ~1e-3 would be
// 100 times its 1e-5 bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/engine/half.hpp"
#include "roofline/engine/ops.hpp"
#include "roofline/engine/rng.hpp"
#include "src/engine/cpu/ref_ops.hpp"
#include "src/engine/cuda/cuda_api.hpp"
#include "src/engine/cuda/ops_cuda.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

double bound(DType t, bool tf32) {
  switch (t) {
    case DType::BF16:
      return 1e-2;
    case DType::F16:
      return 2e-3;
    default:
      return tf32 ? 3e-3 : 1e-5;
  }
}

double round_to(DType t, double v) {
  const float f = static_cast<float>(v);
  if (t == DType::BF16) return float_from_bf16(bf16_from_float(f));
  if (t == DType::F16) return float_from_f16(f16_from_float(f));
  return f;
}

// Random normal values, exactly representable in t.
std::vector<double> values(Rng& r, std::int64_t n, DType t) {
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = round_to(t, r.normal());
  return v;
}

// A device buffer of n elements of t holding v (or NaN everywhere when v is empty: unwritten outputs show).
Tensor upload(Context& ctx, DType t, std::int64_t n, const std::vector<double>& v = {}) {
  Tensor d = ctx.empty({n}, t, "test buffer");
  std::vector<std::uint8_t> bytes(static_cast<size_t>(n) * dtype_size(t), 0xff);  // 0xff..: NaN in every type
  for (size_t i = 0; i < v.size(); ++i) {
    const float f = static_cast<float>(v[i]);
    if (t == DType::F32) {
      std::memcpy(bytes.data() + 4 * i, &f, 4);
    } else {
      const std::uint16_t h = t == DType::BF16 ? bf16_from_float(f) : f16_from_float(f);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    }
  }
  copy_bytes(d.raw(), d.device(), bytes.data(), Device::cpu(), bytes.size());
  return d;
}

std::vector<double> download(const Tensor& d) {
  const DType t = d.dtype();
  std::vector<std::uint8_t> bytes(d.nbytes());
  copy_bytes(bytes.data(), Device::cpu(), d.raw(), d.device(), bytes.size());
  std::vector<double> v(static_cast<size_t>(d.numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DType::F32) {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      v[i] = f;
    } else {
      std::uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      v[i] = t == DType::BF16 ? float_from_bf16(h) : float_from_f16(h);
    }
  }
  return v;
}

double rel_l2(const std::vector<double>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

std::string name(const ops::Conv2dShape& s) {
  return std::string(to_string(s.dtype)) + (s.dtype == DType::F32 ? (s.tf32 ? " tf32" : " true-fp32") : "") + " " +
         to_string(s.format) + " n=" + std::to_string(s.n) + " c=" + std::to_string(s.c) + " " +
         std::to_string(s.h) + "x" + std::to_string(s.w) + " k=" + std::to_string(s.k) + " " + std::to_string(s.r) +
         "x" + std::to_string(s.s) + " stride=" + std::to_string(s.stride) + " pad=" + std::to_string(s.pad) +
         " groups=" + std::to_string(s.groups);
}

struct Errors {
  double out = 0, din = 0, dw = 0, db = 0;
};

// Forward (bias and activation as the shape says), input gradient, weight and
// bias gradients, each against the float64 reference.
Errors check_conv(Context& ctx, const ops::Conv2dShape& s, Rng& rng) {
  const DType t = s.dtype;
  const std::int64_t ni = s.n * s.c * s.h * s.w, nw = s.k * s.cg() * s.r * s.s, no = s.n * s.k * s.oh() * s.ow();
  const auto in = values(rng, ni, t), w = values(rng, nw, t), dpre = values(rng, no, t), b = values(rng, s.k, DType::F32);
  std::vector<double> out_ref(static_cast<size_t>(no)), din_ref(static_cast<size_t>(ni)), dw_ref(static_cast<size_t>(nw)),
      db_ref(static_cast<size_t>(s.k));
  ref::conv2d_forward<double>(s, out_ref.data(), in.data(), w.data(), s.bias ? b.data() : nullptr);
  ref::conv2d_backward_input<double>(s, din_ref.data(), dpre.data(), w.data());
  ref::conv2d_backward_weight<double>(s, dw_ref.data(), db_ref.data(), dpre.data(), in.data());

  Tensor d_in = upload(ctx, t, ni, in), d_w = upload(ctx, t, nw, w), d_dpre = upload(ctx, t, no, dpre),
         d_b = upload(ctx, DType::F32, s.k, b);
  Tensor d_out = upload(ctx, t, no), d_din = upload(ctx, t, ni), d_dw = upload(ctx, DType::F32, nw),
         d_db = upload(ctx, DType::F32, s.k);
  ops::conv2d_forward(ctx, s, d_out.raw(), d_in.raw(), d_w.raw(), s.bias ? d_b.f32() : nullptr);
  ops::conv2d_backward_input(ctx, s, d_din.raw(), d_dpre.raw(), d_w.raw());
  ops::conv2d_backward_weight(ctx, s, d_dw.f32(), s.bias ? d_db.f32() : nullptr, d_dpre.raw(), d_in.raw());
  ctx.synchronize();
  Errors e;
  e.out = rel_l2(download(d_out), out_ref);
  e.din = rel_l2(download(d_din), din_ref);
  e.dw = rel_l2(download(d_dw), dw_ref);
  e.db = s.bias ? rel_l2(download(d_db), db_ref) : 0;
  const double limit = bound(t, s.tf32);
  auto path = [&](Pass p) { return cuda_ops::conv2d_path(ctx.cuda(), s, p); };
  EXPECT_LE(e.out, limit) << name(s) << " forward; path: " << path(Pass::Forward);
  EXPECT_LE(e.din, limit) << name(s) << " input gradient; path: " << path(Pass::InputGrad);
  EXPECT_LE(e.dw, limit) << name(s) << " weight gradient; path: " << path(Pass::WeightGrad);
  EXPECT_LE(e.db, limit) << name(s) << " bias gradient; path: " << path(Pass::WeightGrad);
  return e;
}

ops::Conv2dShape conv(std::int64_t c, std::int64_t hw, std::int64_t k, std::int64_t r, std::int64_t stride,
                      std::int64_t pad, bool bias_relu, std::int64_t groups = 1) {
  ops::Conv2dShape s;
  s.n = 2;
  s.c = c;
  s.h = s.w = hw;
  s.k = k;
  s.r = s.s = r;
  s.stride = stride;
  s.pad = pad;
  s.bias = bias_relu;
  s.act = bias_relu ? ops::Activation::ReLU : ops::Activation::None;
  s.groups = groups;
  return s;
}

// The geometries of AlexNet and ResNet-18 at small sizes, grouped and depthwise too.
std::vector<ops::Conv2dShape> shapes() {
  return {conv(3, 31, 24, 11, 4, 2, true),  conv(16, 13, 32, 5, 1, 2, true), conv(32, 9, 48, 3, 1, 1, true),
          conv(3, 20, 16, 7, 2, 3, false),  conv(24, 12, 32, 3, 2, 1, false), conv(32, 10, 64, 1, 2, 0, false),
          conv(32, 9, 32, 3, 1, 1, true, 4), conv(16, 9, 16, 3, 1, 1, false, 16)};
}

struct Precision {
  DType dtype;
  bool tf32;
};
constexpr Precision kPrecisions[] = {{DType::F32, false}, {DType::F32, true}, {DType::BF16, false}, {DType::F16, false}};

TEST(ConvPrecisionsGpu, EveryDtypeAndFormatMatchesTheFloat64Reference) {
  ROOFLINE_REQUIRE_GPU();
  Context ctx(Backend::Cuda);
  Rng rng(2211);
  for (const Precision& p : kPrecisions)
    for (MemoryFormat f : {MemoryFormat::NCHW, MemoryFormat::NHWC})
      for (ops::Conv2dShape s : shapes()) {
        s.dtype = p.dtype;
        s.tf32 = p.tf32;
        s.format = f;
        const Errors e = check_conv(ctx, s, rng);
        std::cout << name(s) << ": out " << e.out << " din " << e.din << " dw " << e.dw << " db " << e.db << "\n"
                  << "  forward: " << cuda_ops::conv2d_path(ctx.cuda(), s, Pass::Forward) << "\n"
                  << "  input-grad: " << cuda_ops::conv2d_path(ctx.cuda(), s, Pass::InputGrad) << "\n"
                  << "  weight-grad: " << cuda_ops::conv2d_path(ctx.cuda(), s, Pass::WeightGrad) << "\n";
      }
}

// The im2col path (few-channel 16-bit NHWC layers) where A is built in more
// than one chunk of images (at most 128 MB each: 15.2 MB an image here, so
// 8 + 4 images): the forward's and weight gradient's chunks against float64.
TEST(ConvPrecisionsGpu, Im2colChunksMatchTheFloat64Reference) {
  ROOFLINE_REQUIRE_GPU();
  Context ctx(Backend::Cuda);
  Rng rng(4096);
  for (DType t : {DType::BF16, DType::F16}) {
    ops::Conv2dShape s = conv(3, 224, 8, 7, 1, 3, true);
    s.n = 12;
    s.dtype = t;
    s.format = MemoryFormat::NHWC;
    const Errors e = check_conv(ctx, s, rng);
    std::cout << name(s) << ": out " << e.out << " dw " << e.dw << " db " << e.db << "\n";
    EXPECT_NE(cuda_ops::conv2d_path(ctx.cuda(), s, Pass::Forward).find("im2col"), std::string::npos);
    // 7·7·3 = 147 columns padded to 152: the bias rides in the padding.
    EXPECT_NE(cuda_ops::conv2d_path(ctx.cuda(), s, Pass::Forward).find("fp32 bias"), std::string::npos);
    EXPECT_NE(cuda_ops::conv2d_path(ctx.cuda(), s, Pass::WeightGrad).find("im2col"), std::string::npos);
  }
}

// A long reduction (c·r·s = 2,304 products per output) in true fp32: within
// 1e-5, which TF32 (~1e-3 here) would fail by two orders of magnitude, and
// no engine carrying the tensor-core note took any pass.
TEST(ConvPrecisionsGpu, TrueFp32IsNotTf32) {
  ROOFLINE_REQUIRE_GPU();
  Context ctx(Backend::Cuda);
  Rng rng(77);
  for (MemoryFormat f : {MemoryFormat::NCHW, MemoryFormat::NHWC}) {
    ops::Conv2dShape s = conv(256, 8, 64, 3, 1, 1, true);
    s.format = f;
    check_conv(ctx, s, rng);
    for (Pass p : {Pass::Forward, Pass::InputGrad, Pass::WeightGrad}) {
      const std::string path = cuda_ops::conv2d_path(ctx.cuda(), s, p);
      EXPECT_FALSE(path.empty()) << name(s) << " " << to_string(p);
      EXPECT_EQ(path.find("tensor_core"), std::string::npos) << name(s) << " " << to_string(p) << ": " << path;
    }
    // For the record: the same shape with TF32 allowed.
    s.tf32 = true;
    const Errors e = check_conv(ctx, s, rng);
    std::cout << name(s) << ": out " << e.out << " din " << e.din << " dw " << e.dw << "; forward path "
              << cuda_ops::conv2d_path(ctx.cuda(), s, Pass::Forward) << "\n";
  }
}

// Plans are made on the first call; later calls are captured into a CUDA graph
// and replayed with the same result, and a first call during a capture is
// refused with a message saying what to do.
TEST(ConvPrecisionsGpu, CallsAfterTheFirstAreCapturedIntoAGraph) {
  ROOFLINE_REQUIRE_GPU();
  Context ctx(Backend::Cuda);
  Rng rng(5);
  ops::Conv2dShape s = conv(16, 13, 32, 5, 1, 2, true);
  s.dtype = DType::BF16;
  s.format = MemoryFormat::NHWC;
  const std::int64_t ni = s.n * s.c * s.h * s.w, nw = s.k * s.cg() * s.r * s.s, no = s.n * s.k * s.oh() * s.ow();
  Tensor in = upload(ctx, s.dtype, ni, values(rng, ni, s.dtype)), w = upload(ctx, s.dtype, nw, values(rng, nw, s.dtype)),
         b = upload(ctx, DType::F32, s.k, values(rng, s.k, DType::F32)), out = upload(ctx, s.dtype, no),
         dw = upload(ctx, DType::F32, nw), db = upload(ctx, DType::F32, s.k);
  auto step = [&] {
    ops::conv2d_forward(ctx, s, out.raw(), in.raw(), w.raw(), b.f32());
    ops::conv2d_backward_weight(ctx, s, dw.f32(), db.f32(), out.raw(), in.raw());
  };
  step();  // eager: plans and workspace
  ctx.synchronize();
  const auto out_eager = download(out), dw_eager = download(dw);
  auto graph = detail::cuda_capture(ctx.cuda(), step);
  detail::cuda_launch(ctx.cuda(), graph.get());
  ctx.synchronize();
  EXPECT_EQ(download(out), out_eager);
  EXPECT_EQ(download(dw), dw_eager);  // fixed-order sums: the same bits

  ops::Conv2dShape fresh = s;
  fresh.k = 24;  // a shape with no plan yet
  Tensor out2 = upload(ctx, s.dtype, s.n * fresh.k * s.oh() * s.ow()), w2 = upload(ctx, s.dtype, fresh.k * s.c * 25);
  try {
    detail::cuda_capture(ctx.cuda(), [&] { ops::conv2d_forward(ctx, fresh, out2.raw(), in.raw(), w2.raw(), b.f32()); });
    FAIL() << "a first call during a capture must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal) << e.what();
    EXPECT_NE(std::string(e.what()).find("captured"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("eagerly"), std::string::npos) << e.hint();
  }
}

// Linear in every precision: forward with bias and ReLU, input gradient,
// fp32 weight and bias gradients.
void check_linear(Context& ctx, const ops::LinearShape& s, Rng& rng) {
  const DType t = s.dtype;
  const auto in = values(rng, s.n * s.in, t), w = values(rng, s.out * s.in, t), dpre = values(rng, s.n * s.out, t),
             b = values(rng, s.out, DType::F32);
  std::vector<double> out_ref(static_cast<size_t>(s.n * s.out)), din_ref(static_cast<size_t>(s.n * s.in)),
      dw_ref(static_cast<size_t>(s.out * s.in)), db_ref(static_cast<size_t>(s.out));
  ref::linear_forward<double>(s, out_ref.data(), in.data(), w.data(), s.bias ? b.data() : nullptr);
  ref::linear_backward_input<double>(s, din_ref.data(), dpre.data(), w.data());
  ref::linear_backward_weight<double>(s, dw_ref.data(), db_ref.data(), dpre.data(), in.data());
  Tensor d_in = upload(ctx, t, s.n * s.in, in), d_w = upload(ctx, t, s.out * s.in, w),
         d_dpre = upload(ctx, t, s.n * s.out, dpre), d_b = upload(ctx, DType::F32, s.out, b);
  Tensor d_out = upload(ctx, t, s.n * s.out), d_din = upload(ctx, t, s.n * s.in),
         d_dw = upload(ctx, DType::F32, s.out * s.in), d_db = upload(ctx, DType::F32, s.out);
  ops::linear_forward(ctx, s, d_out.raw(), d_in.raw(), d_w.raw(), s.bias ? d_b.f32() : nullptr);
  ops::linear_backward_input(ctx, s, d_din.raw(), d_dpre.raw(), d_w.raw());
  ops::linear_backward_weight(ctx, s, d_dw.f32(), s.bias ? d_db.f32() : nullptr, d_dpre.raw(), d_in.raw());
  ctx.synchronize();
  const double limit = bound(t, s.tf32);
  const std::string what = std::string("linear ") + to_string(t) + (s.tf32 ? " tf32" : "") + " n=" +
                           std::to_string(s.n) + " in=" + std::to_string(s.in) + " out=" + std::to_string(s.out);
  auto path = [&](Pass p) { return cuda_ops::linear_path(ctx.cuda(), s, p); };
  EXPECT_LE(rel_l2(download(d_out), out_ref), limit) << what << " forward: " << path(Pass::Forward);
  EXPECT_LE(rel_l2(download(d_din), din_ref), limit) << what << " input gradient: " << path(Pass::InputGrad);
  EXPECT_LE(rel_l2(download(d_dw), dw_ref), limit) << what << " weight gradient: " << path(Pass::WeightGrad);
  if (s.bias) EXPECT_LE(rel_l2(download(d_db), db_ref), limit) << what << " bias gradient: " << path(Pass::WeightGrad);
  std::cout << what << "\n  forward: " << path(Pass::Forward) << "\n  weight-grad: " << path(Pass::WeightGrad) << "\n";
}

TEST(LinearPrecisionsGpu, EveryDtypeMatchesTheFloat64Reference) {
  ROOFLINE_REQUIRE_GPU();
  Context ctx(Backend::Cuda);
  Rng rng(42);
  for (const Precision& p : kPrecisions)
    for (ops::LinearShape s : {ops::LinearShape{8, 512, 96, true, ops::Activation::ReLU},
                               ops::LinearShape{33, 300, 40, false, ops::Activation::None},
                               ops::LinearShape{128, 1024, 1000, true, ops::Activation::None}}) {
      s.dtype = p.dtype;
      s.tf32 = p.tf32;
      check_linear(ctx, s, rng);
    }
}

// 4,096 products per output in true fp32: within 1e-5 (TF32 would not be).
TEST(LinearPrecisionsGpu, TrueFp32IsNotTf32) {
  ROOFLINE_REQUIRE_GPU();
  Context ctx(Backend::Cuda);
  Rng rng(9);
  check_linear(ctx, {64, 4096, 256, true, ops::Activation::None}, rng);
}

}  // namespace
