// The CNN ops on the GPU beyond the op harness (which checks every pass against
// float64 in every format and dtype, tests/gpu/test_ops_gpu.cpp): BatchNorm's
// grid-wide reductions give the same bits call after call and inside a CUDA
// graph captured after one eager call (nothing allocated or synchronised while
// capturing); a captured Dropout draws a new mask at each step read from device
// memory, the CPU's mask bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "roofline/engine/context.hpp"
#include "roofline/engine/half.hpp"
#include "roofline/engine/ops_cnn.hpp"
#include "roofline/engine/rng.hpp"
#include "src/engine/cuda/cuda_api.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

// Host values as the bytes of `t` (F32, BF16 or F16).
std::vector<std::uint8_t> encode(const std::vector<float>& v, DType t) {
  std::vector<std::uint8_t> b(v.size() * dtype_size(t));
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DType::F32) {
      std::memcpy(b.data() + 4 * i, &v[i], 4);
    } else {
      const std::uint16_t u = t == DType::BF16 ? bf16_from_float(v[i]) : f16_from_float(v[i]);
      std::memcpy(b.data() + 2 * i, &u, 2);
    }
  }
  return b;
}

Tensor upload(Context& ctx, const std::vector<std::uint8_t>& bytes, const char* what) {
  Tensor t = ctx.empty({static_cast<std::int64_t>(bytes.size())}, DType::U8, what);
  copy_bytes(t.raw(), t.device(), bytes.data(), Device::cpu(), bytes.size());
  return t;
}

std::vector<std::uint8_t> download(const Tensor& t) {
  std::vector<std::uint8_t> b(t.nbytes());
  copy_bytes(b.data(), Device::cpu(), t.raw(), t.device(), b.size());
  return b;
}

std::vector<float> random_values(Rng& r, std::int64_t n, float mean) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = mean + r.normal();
  return v;
}

struct BnRun {
  std::vector<std::uint8_t> out, din, dpre, stats;  // stats: save_mean, save_invstd, running, dgamma, dbeta
};

// One BatchNorm training step (forward, backward) on fresh copies of the
// inputs, through `run` (eager, or a replayed graph).
class BnFixture {
 public:
  BnFixture(Context& ctx, const ops::BatchNormShape& s) : ctx_(ctx), s_(s) {
    Rng r(7);
    const std::int64_t n = s.n * s.c * s.h * s.w;
    in_ = encode(random_values(r, n, 3.f), s.dtype);
    res_ = encode(random_values(r, n, 0.f), s.dtype);
    dout_ = encode(random_values(r, n, 0.f), s.dtype);
    // gamma (c), beta (c), running mean (c), running variance (c): 1 + N(0, 1)², positive
    params_ = random_values(r, 4 * s.c, 1.f);
    for (std::int64_t k = 3 * s.c; k < 4 * s.c; ++k) params_[size_t(k)] = 1.f + params_[size_t(k)] * params_[size_t(k)];
    t_in_ = upload(ctx, in_, "in");
    t_res_ = upload(ctx, res_, "residual");
    t_out_ = upload(ctx, std::vector<std::uint8_t>(in_.size()), "out");
    t_din_ = upload(ctx, std::vector<std::uint8_t>(in_.size()), "din");
    t_dout_ = upload(ctx, dout_, "dout");
    t_p_ = upload(ctx, encode(params_, DType::F32), "parameters");
    // save_mean (c), save_invstd (c), dgamma (c), dbeta (c)
    t_stats_ = upload(ctx, std::vector<std::uint8_t>(size_t(4 * s.c) * 4), "statistics");
  }
  // Resets what a step changes: the running statistics and dout (turned into dpre).
  void reset() {
    copy_bytes(t_dout_.raw(), t_dout_.device(), dout_.data(), Device::cpu(), dout_.size());
    const auto p = encode(params_, DType::F32);
    copy_bytes(t_p_.raw(), t_p_.device(), p.data(), Device::cpu(), p.size());
  }
  // Enqueues one step: forward, backward.
  void step() {
    float* p = static_cast<float*>(t_p_.raw());
    float* st = static_cast<float*>(t_stats_.raw());
    const std::int64_t C = s_.c;
    ops::batchnorm_forward_train(ctx_, s_, t_out_.raw(), t_in_.raw(), s_.residual ? t_res_.raw() : nullptr, p, p + C,
                                 p + 2 * C, p + 3 * C, st, st + C);
    ops::batchnorm_backward(ctx_, s_, t_din_.raw(), st + 2 * C, st + 3 * C, t_dout_.raw(), t_out_.raw(), t_in_.raw(), p,
                            st, st + C);
  }
  BnRun result() {
    ctx_.synchronize();
    BnRun r{download(t_out_), download(t_din_), download(t_dout_), download(t_stats_)};
    const auto p = download(t_p_);
    r.stats.insert(r.stats.end(), p.begin(), p.end());  // the running statistics
    return r;
  }

 private:
  Context& ctx_;
  ops::BatchNormShape s_;
  std::vector<std::uint8_t> in_, res_, dout_;
  std::vector<float> params_;
  Tensor t_in_, t_res_, t_out_, t_din_, t_dout_, t_p_, t_stats_;
};

}  // namespace

TEST(BatchNormGpu, SameBitsEveryCallAndInACapturedGraph) {
  ROOFLINE_REQUIRE_GPU();
  struct Case {
    const char* why;
    std::int64_t n, c, h, w;
    MemoryFormat format;
    DType dtype;
    bool residual;
  };
  const Case cases[] = {
      {"NHWC bf16, 16-byte vectors, several blocks per channel, residual", 16, 64, 14, 14, MemoryFormat::NHWC,
       DType::BF16, true},
      {"NCHW fp32, 16-byte vectors, several blocks per channel", 8, 3, 64, 64, MemoryFormat::NCHW, DType::F32, false},
      {"NCHW fp16, single elements (7x7 planes)", 32, 20, 7, 7, MemoryFormat::NCHW, DType::F16, true},
      {"NHWC fp32, single elements (6 channels)", 4, 6, 30, 30, MemoryFormat::NHWC, DType::F32, false},
  };
  Context ctx(Backend::Cuda);
  for (const Case& k : cases) {
    SCOPED_TRACE(k.why);
    ops::BatchNormShape s;
    s.n = k.n, s.c = k.c, s.h = k.h, s.w = k.w, s.format = k.format, s.dtype = k.dtype;
    s.act = ops::Activation::ReLU;
    s.residual = k.residual;
    BnFixture f(ctx, s);
    f.reset();
    f.step();  // eager: the first call allocates the reduction scratch
    const BnRun first = f.result();
    f.reset();
    f.step();
    const BnRun second = f.result();
    EXPECT_EQ(first.out, second.out);
    EXPECT_EQ(first.din, second.din);
    EXPECT_EQ(first.stats, second.stats);
    // Captured (thread-local mode: an allocation or a synchronisation while
    // capturing fails the capture), then replayed.
    std::shared_ptr<void> graph = detail::cuda_capture(ctx.cuda(), [&] { f.step(); });
    f.reset();
    detail::cuda_launch(ctx.cuda(), graph.get());
    const BnRun replayed = f.result();
    EXPECT_EQ(first.out, replayed.out);
    EXPECT_EQ(first.din, replayed.din);
    EXPECT_EQ(first.dpre, replayed.dpre);
    EXPECT_EQ(first.stats, replayed.stats);
  }
}

TEST(DropoutGpu, ACapturedGraphDrawsTheCpusMaskForEachStep) {
  ROOFLINE_REQUIRE_GPU();
  const std::int64_t n = 100003;  // not a multiple of the 16-byte vectors: a tail of single elements
  const ops::DropoutShape s{n, 0.3f, DType::F32};
  const std::uint64_t seed = 0x5eedull;
  Rng r(11);
  const std::vector<float> in = random_values(r, n, 0.f);
  Context gpu(Backend::Cuda), cpu(Backend::Cpu);
  Tensor t_in = upload(gpu, encode(in, DType::F32), "in");
  Tensor t_out = upload(gpu, std::vector<std::uint8_t>(size_t(n) * 4), "out");
  std::int32_t step = 0;
  Tensor t_step = upload(gpu, std::vector<std::uint8_t>(4), "step");
  std::shared_ptr<void> graph = detail::cuda_capture(gpu.cuda(), [&] {
    ops::dropout_forward(gpu, s, t_out.raw(), t_in.raw(), seed, static_cast<std::int32_t*>(t_step.raw()));
  });
  std::vector<std::vector<float>> masks;
  for (step = 0; step < 2; ++step) {
    copy_bytes(t_step.raw(), t_step.device(), &step, Device::cpu(), 4);
    detail::cuda_launch(gpu.cuda(), graph.get());
    gpu.synchronize();
    const auto bytes = download(t_out);
    std::vector<float> got(static_cast<size_t>(n)), want(static_cast<size_t>(n));
    std::memcpy(got.data(), bytes.data(), bytes.size());
    ops::dropout_forward(cpu, s, want.data(), in.data(), seed, &step);
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), bytes.size())) << "step " << step;
    std::int64_t kept = 0;
    for (float v : got) kept += v != 0.f;
    EXPECT_NEAR(double(kept) / double(n), 0.7, 0.01) << "step " << step;
    masks.push_back(got);
  }
  EXPECT_NE(masks[0], masks[1]) << "the step must change the mask";
}

// An inference max pool writes no argmax (null): the same output bits as with
// one, in every dtype and layout the networks use (ResNet-18's 3×3 stride-2
// pad-1 pool and the small models' 2×2 fp32 NCHW one).
TEST(MaxPoolGpu, ANullArgmaxGivesTheSameOutput) {
  ROOFLINE_REQUIRE_GPU();
  Context ctx(Backend::Cuda);
  Rng rng(11);
  struct Case {
    DType t;
    MemoryFormat f;
    std::int64_t kernel, stride, pad;
  };
  for (const Case c : {Case{DType::BF16, MemoryFormat::NHWC, 3, 2, 1}, Case{DType::F16, MemoryFormat::NHWC, 3, 2, 1},
                       Case{DType::F32, MemoryFormat::NCHW, 3, 2, 1}, Case{DType::F32, MemoryFormat::NCHW, 2, 2, 0}}) {
    ops::Pool2dShape s;
    s.n = 3, s.c = 16, s.h = 17, s.w = 19, s.kernel = c.kernel, s.stride = c.stride, s.pad = c.pad;
    s.dtype = c.t, s.format = c.f;
    const std::int64_t no = s.n * s.c * s.oh() * s.ow();
    Tensor in = upload(ctx, encode(random_values(rng, s.n * s.c * s.h * s.w, 0.f), c.t), "in");
    Tensor a = ctx.empty({no * std::int64_t(dtype_size(c.t))}, DType::U8, "out");
    Tensor b = ctx.empty({no * std::int64_t(dtype_size(c.t))}, DType::U8, "out (no argmax)");
    Tensor arg = ctx.empty({no}, DType::I32, "argmax");
    ops::maxpool2d_forward(ctx, s, a.raw(), arg.i32(), in.raw());
    ops::maxpool2d_forward(ctx, s, b.raw(), nullptr, in.raw());
    ctx.synchronize();
    EXPECT_EQ(download(a), download(b)) << to_string(c.t) << " " << to_string(c.f) << " kernel " << c.kernel;
  }
}
