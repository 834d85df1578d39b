// The fast CPU path's oneDNN convolutions and Linear layers
// (src/engine/cpu/dnnl_conv.hpp): AlexNet's and ResNet-18's layer shapes,
// scaled down to run in seconds, through the op harness on both CPU paths
// (oneDNN's and our tiles') against float64; NHWC and grouped convolutions,
// which only oneDNN takes, against a float64 loop here; the choice between
// the two paths; calls from inside a parallel region and from a forked child.
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <limits>
#include <thread>
#include <vector>

#include "roofline/engine/op_harness.hpp"
#include "roofline/engine/ops.hpp"
#include "src/engine/cpu/dnnl_conv.hpp"
#include "src/engine/cpu/dnnl_util.hpp"
#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/thread_pool.hpp"

using namespace roofline::engine;
namespace onednn = roofline::engine::fast::onednn;
using std::int64_t;

namespace {

// Restores the rule when a test ends, whatever it set.
struct ChoiceScope {
  explicit ChoiceScope(onednn::Choice c) { onednn::set_choice_for_testing(c); }
  ~ChoiceScope() { onednn::set_choice_for_testing(onednn::Choice::Rule); }
};

ops::Conv2dShape conv(int64_t n, int64_t c, int64_t h, int64_t k, int64_t r, int64_t stride, int64_t pad,
                      ops::Activation act = ops::Activation::ReLU) {
  ops::Conv2dShape s;
  s.n = n;
  s.c = c;
  s.h = s.w = h;
  s.k = k;
  s.r = s.s = r;
  s.stride = stride;
  s.pad = pad;
  s.act = act;
  return s;
}

// The two networks' convolutions with their kernels, strides, padding and
// channels, on small images (batch 2; the 512-channel one batch 1).
std::vector<ops::Conv2dShape> network_convs() {
  return {
      conv(2, 3, 32, 64, 7, 2, 3),      // ResNet-18 conv1, 7×7/2 (224 → 32)
      conv(2, 64, 8, 64, 3, 1, 1),      // ResNet-18 3×3 64→64 (56 → 8)
      conv(2, 64, 8, 128, 3, 2, 1),     // ResNet-18 3×3/2 64→128
      conv(2, 64, 8, 128, 1, 2, 0, ops::Activation::None),  // ResNet-18 1×1/2 downsample
      conv(1, 512, 3, 512, 3, 1, 1),    // ResNet-18 3×3 512→512 (7 → 3)
      conv(2, 3, 31, 64, 11, 4, 2),     // AlexNet conv1, 11×11/4 (224 → 31)
      conv(2, 64, 7, 192, 5, 1, 2),     // AlexNet 5×5 64→192 (27 → 7)
      conv(2, 192, 5, 384, 3, 1, 1),    // AlexNet 3×3 192→384 (13 → 5)
      conv(2, 384, 5, 256, 3, 1, 1),    // AlexNet 3×3 384→256
      conv(2, 256, 5, 256, 3, 1, 1),    // AlexNet 3×3 256→256
  };
}

void expect_passed(const std::vector<harness::CheckResult>& results, const char* path) {
  ASSERT_FALSE(results.empty());
  for (const auto& r : results) EXPECT_TRUE(r.passed()) << path << ": " << r.describe();
}

}  // namespace

TEST(OneDnn, NetworkConvolutionsMatchTheFloat64ReferenceOnBothCpuPaths) {
  Context ctx(Backend::Cpu);
  Rng rng(22);
  // The rule sends every one of them to oneDNN (the next test); Never to our tiles.
  for (auto choice : {onednn::Choice::Rule, onednn::Choice::Never}) {
    ChoiceScope scope(choice);
    const char* path = choice == onednn::Choice::Rule ? "oneDNN" : "ours";
    for (const auto& s : network_convs()) expect_passed(harness::check_conv(s, ctx, rng), path);
  }
}

TEST(OneDnn, TheRuleSendsTheNetworksToOneDnnAndKeepsTheSmallModelsOnOurTiles) {
  for (const auto& s : network_convs())
    for (auto p : {onednn::Pass::Forward, onednn::Pass::InputGrad, onednn::Pass::WeightGrad})
      EXPECT_TRUE(onednn::conv_prefers({s}, p)) << s.c << "→" << s.k << " " << s.r << "×" << s.s;
  // simple-cnn's and ece408's convolutions at batch 64 (stride 1, no padding, ≤ 4 input channels).
  for (const auto& s : {conv(64, 1, 28, 1, 5, 1, 0), conv(64, 1, 86, 4, 7, 1, 0), conv(64, 4, 40, 16, 7, 1, 0)})
    EXPECT_FALSE(onednn::conv_prefers({s}, onednn::Pass::Forward)) << s.c << "→" << s.k;
  // Under one thread's worth of FLOPs: our tiles on the calling thread.
  EXPECT_FALSE(onednn::conv_prefers({conv(1, 8, 6, 8, 1, 1, 0)}, onednn::Pass::Forward));
  // Layouts and groupings our tiles lack go to oneDNN whatever the choice.
  ChoiceScope never(onednn::Choice::Never);
  EXPECT_TRUE(onednn::conv_prefers({conv(1, 1, 28, 1, 5, 1, 0), 1, MemoryFormat::NHWC}, onednn::Pass::Forward));
  EXPECT_TRUE(onednn::conv_prefers({conv(1, 4, 28, 4, 3, 1, 0), 2}, onednn::Pass::Forward));
}

TEST(OneDnn, TheLinearRuleSplitsAtTwoToTheEighteenWeights) {
  for (auto p : {onednn::Pass::Forward, onednn::Pass::InputGrad, onednn::Pass::WeightGrad}) {
    EXPECT_TRUE(onednn::linear_prefers({1, 9216, 4096}, p));
    EXPECT_TRUE(onednn::linear_prefers({1, 512, 512}, p));
    EXPECT_TRUE(onednn::linear_prefers({3, 1152, 512}, p));
    EXPECT_TRUE(onednn::linear_prefers({64, 512, 1000}, p));
    EXPECT_FALSE(onednn::linear_prefers({64, 784, 256}, p));  // simple-mlp's fc1
    EXPECT_FALSE(onednn::linear_prefers({64, 1024, 32}, p));  // ece408's fc1
  }
}

TEST(OneDnn, ThePlanSaysWhatOneDnnRunsAndWhatItReorders) {
  const ops::Conv2dShape s = conv(1, 64, 6, 48, 3, 1, 1);  // a shape no other test runs
  std::vector<float> in(static_cast<size_t>(s.n * s.c * s.h * s.w), 0.5f), w(static_cast<size_t>(s.k * s.c * 9), 0.1f);
  std::vector<float> b(static_cast<size_t>(s.k), 0.f), out(static_cast<size_t>(s.n * s.k * s.oh() * s.ow()));
  for (MemoryFormat f : {MemoryFormat::NCHW, MemoryFormat::NHWC}) {
    const onednn::ConvSpec c{s, 1, f};
    EXPECT_EQ(onednn::conv_impl(c, onednn::Pass::Forward), "") << "no plan before the first call";
    onednn::conv2d_forward(c, out.data(), in.data(), w.data(), b.data());
    const std::string plan = onednn::conv_impl(c, onednn::Pass::Forward);
    EXPECT_FALSE(plan.empty());
    EXPECT_TRUE(onednn::is_fast_impl(plan.substr(0, plan.find(' ')))) << plan;  // a JIT implementation
    EXPECT_NEAR(out[0], 0.5f * 0.1f * 64 * 4, 1e-4f);  // a corner: 2 × 2 taps inside the padded input
  }
}

TEST(OneDnn, NetworkLinearsMatchTheFloat64ReferenceOnBothCpuPaths) {
  Context ctx(Backend::Cpu);
  Rng rng(23);
  for (auto choice : {onednn::Choice::Rule, onednn::Choice::Never}) {
    ChoiceScope scope(choice);
    const char* path = choice == onednn::Choice::Rule ? "oneDNN" : "ours";
    // AlexNet's classifier (9216 → 4096 → 4096 → 1000) at an eighth of its
    // widths (each still ≥ 2^18 weights) and ResNet-18's fc, at batch 1 and 3.
    for (int64_t n : {1, 3})
      for (auto [in, out] : {std::pair<int64_t, int64_t>{1152, 512}, {512, 512}, {512, 1000}})
        expect_passed(harness::check_linear({n, in, out, true, n == 1 ? ops::Activation::None : ops::Activation::ReLU},
                                            ctx, rng),
                      path);
  }
}

namespace {

// Element offsets of a convolution's operands in either layout.
struct Index {
  onednn::ConvSpec c;
  bool nhwc() const { return c.format == MemoryFormat::NHWC; }
  int64_t cg() const { return c.s.c / c.groups; }
  int64_t act(int64_t n, int64_t ch, int64_t chans, int64_t y, int64_t x, int64_t h, int64_t w) const {
    return nhwc() ? ((n * h + y) * w + x) * chans + ch : ((n * chans + ch) * h + y) * w + x;
  }
  int64_t in(int64_t n, int64_t ch, int64_t y, int64_t x) const { return act(n, ch, c.s.c, y, x, c.s.h, c.s.w); }
  int64_t out(int64_t n, int64_t k, int64_t y, int64_t x) const { return act(n, k, c.s.k, y, x, c.s.oh(), c.s.ow()); }
  // (k, c/groups, r, s) for NCHW, (k, r, s, c/groups) for NHWC
  int64_t wt(int64_t k, int64_t ci, int64_t r, int64_t q) const {
    return nhwc() ? ((k * c.s.r + r) * c.s.s + q) * cg() + ci : ((k * cg() + ci) * c.s.r + r) * c.s.s + q;
  }
};

// Calls f(n, k, y, x, ci, ch, r, q) for every multiply-add of the grouped
// convolution: output (n, k, y, x), input channel ch = group·c/groups + ci.
template <class F>
void each_tap(const onednn::ConvSpec& c, F f) {
  const ops::Conv2dShape& s = c.s;
  const int64_t kg = s.k / c.groups, cg = s.c / c.groups;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.k; ++k)
      for (int64_t y = 0; y < s.oh(); ++y)
        for (int64_t x = 0; x < s.ow(); ++x)
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t r = 0; r < s.r; ++r)
              for (int64_t q = 0; q < s.s; ++q) {
                const int64_t iy = y * s.stride - s.pad + r, ix = x * s.stride - s.pad + q;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                f(n, k, y, x, ci, (k / kg) * cg + ci, iy, ix, r, q);
              }
}

double rel_error(const std::vector<float>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = double(got[i]) - want[i];
    num += d * d;
    den += want[i] * want[i];
  }
  return std::isfinite(num) ? std::sqrt(num / den) : std::numeric_limits<double>::infinity();
}

std::vector<float> random_floats(Rng& rng, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = rng.uniform(-1.f, 1.f);
  return v;
}

// Forward (bias, ReLU), input gradient and weight gradient of `c` on oneDNN
// against float64 loops, outputs poisoned with NaN first.
void check_layout_and_groups(const onednn::ConvSpec& c, Rng& rng) {
  const ops::Conv2dShape& s = c.s;
  const Index ix{c};
  const int64_t n_in = s.n * s.c * s.h * s.w, n_out = s.n * s.k * s.oh() * s.ow();
  const int64_t n_w = s.k * (s.c / c.groups) * s.r * s.s;
  const std::vector<float> in = random_floats(rng, n_in), w = random_floats(rng, n_w), b = random_floats(rng, s.k);
  const std::vector<float> dpre = random_floats(rng, n_out);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<double> out_ref(static_cast<size_t>(n_out)), din_ref(static_cast<size_t>(n_in), 0.0);
  std::vector<double> dw_ref(static_cast<size_t>(n_w), 0.0), db_ref(static_cast<size_t>(s.k), 0.0);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.k; ++k)
      for (int64_t y = 0; y < s.oh(); ++y)
        for (int64_t x = 0; x < s.ow(); ++x) {
          out_ref[static_cast<size_t>(ix.out(n, k, y, x))] = b[static_cast<size_t>(k)];
          db_ref[static_cast<size_t>(k)] += dpre[static_cast<size_t>(ix.out(n, k, y, x))];
        }
  each_tap(c, [&](int64_t n, int64_t k, int64_t y, int64_t x, int64_t ci, int64_t ch, int64_t iy, int64_t ixx,
                  int64_t r, int64_t q) {
    const size_t o = static_cast<size_t>(ix.out(n, k, y, x)), i = static_cast<size_t>(ix.in(n, ch, iy, ixx));
    const size_t wi = static_cast<size_t>(ix.wt(k, ci, r, q));
    out_ref[o] += double(in[i]) * w[wi];
    din_ref[i] += double(dpre[o]) * w[wi];
    dw_ref[wi] += double(dpre[o]) * in[i];
  });
  for (double& v : out_ref) v = v > 0 ? v : 0;  // ReLU
  std::vector<float> out(static_cast<size_t>(n_out), nan), din(static_cast<size_t>(n_in), nan);
  std::vector<float> dw(static_cast<size_t>(n_w), nan), db(static_cast<size_t>(s.k), nan);
  onednn::conv2d_forward(c, out.data(), in.data(), w.data(), b.data());
  onednn::conv2d_backward_input(c, din.data(), dpre.data(), w.data());
  onednn::conv2d_backward_weight(c, dw.data(), db.data(), dpre.data(), in.data());
  const std::string what = std::string(to_string(c.format)) + " groups " + std::to_string(c.groups) + " " +
                           std::to_string(s.c) + "→" + std::to_string(s.k) + " " + std::to_string(s.r) + "×" +
                           std::to_string(s.s) + "/" + std::to_string(s.stride) + " pad " + std::to_string(s.pad);
  EXPECT_LE(rel_error(out, out_ref), 1e-5) << what << " forward";
  EXPECT_LE(rel_error(din, din_ref), 1e-5) << what << " input gradient";
  EXPECT_LE(rel_error(dw, dw_ref), 1e-5) << what << " weight gradient";
  EXPECT_LE(rel_error(db, db_ref), 1e-5) << what << " bias gradient";
}

}  // namespace

TEST(OneDnn, NhwcAndGroupedConvolutionsMatchFloat64Loops) {
  Rng rng(24);
  for (MemoryFormat f : {MemoryFormat::NCHW, MemoryFormat::NHWC}) {
    check_layout_and_groups({conv(2, 3, 17, 16, 7, 2, 3), 1, f}, rng);   // ResNet-18's conv1, scaled
    check_layout_and_groups({conv(2, 16, 9, 32, 3, 1, 1), 1, f}, rng);   // a 3×3 block
    check_layout_and_groups({conv(2, 16, 9, 32, 1, 2, 0), 1, f}, rng);   // a 1×1/2 downsample
    check_layout_and_groups({conv(2, 3, 19, 8, 11, 4, 2), 1, f}, rng);   // AlexNet's conv1, scaled
    check_layout_and_groups({conv(2, 8, 7, 16, 3, 1, 1), 2, f}, rng);    // two groups
    check_layout_and_groups({conv(2, 8, 7, 8, 3, 2, 1), 8, f}, rng);     // depthwise
    check_layout_and_groups({conv(1, 4, 12, 4, 5, 1, 0), 1, f}, rng);    // a shape our tiles take in NCHW
  }
}

// oneDNN 2.6's AVX-512 1×1 weight gradient at stride 2 corrupts the heap with
// 2 or 4 threads at these shapes (dnnl_conv.cpp, past_skipped): the plan takes
// the next implementation, whose values match the float64 loops. On a CPU
// without AVX-512 that kernel is never offered and the values are checked alone.
TEST(OneDnn, AStridedOneByOneWeightGradientAvoidsTheCorruptingKernel) {
  const int before = omp_get_max_threads();
  Rng rng(28);
  for (int threads : {2, 4}) {
    omp_set_num_threads(threads);
    for (MemoryFormat f : {MemoryFormat::NHWC, MemoryFormat::NCHW})
      for (const auto& s : {conv(3, 8, 14, 16, 1, 2, 0), conv(1, 12, 8, 1, 1, 2, 0), conv(4, 12, 7, 20, 1, 2, 0)}) {
        const onednn::ConvSpec c{s, 1, f};
        check_layout_and_groups(c, rng);
        const std::string impl = onednn::conv_impl(c, onednn::Pass::WeightGrad);
        EXPECT_FALSE(impl.empty());
        EXPECT_NE(impl.rfind("jit_1x1:avx512", 0), 0u) << impl;
        EXPECT_TRUE(onednn::is_fast_impl(impl.substr(0, impl.find(' ')))) << impl;
      }
  }
  omp_set_num_threads(before);
}

// Inside one of the fast path's parallel regions each call runs oneDNN on its
// own thread (plans per thread, a team of one): the same values as a call
// outside, and the thread count is restored afterwards.
TEST(OneDnn, CallsFromInsideAParallelRegionRunOnTheirOwnThread) {
  const ops::Conv2dShape s = conv(1, 16, 10, 32, 3, 1, 1);
  Rng rng(25);
  const std::vector<float> w = random_floats(rng, s.k * s.c * 9), b = random_floats(rng, s.k);
  constexpr int kThreads = 4;
  std::vector<std::vector<float>> in, out(kThreads), alone(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    in.push_back(random_floats(rng, s.c * s.h * s.w));
    alone[t].resize(static_cast<size_t>(s.k * s.oh() * s.ow()));
    out[t].assign(alone[t].size(), std::numeric_limits<float>::quiet_NaN());
    onednn::conv2d_forward({s}, alone[t].data(), in[t].data(), w.data(), b.data());
  }
  const int before = omp_get_max_threads();
  std::vector<int> threads_seen(kThreads, 0);
  auto task = [&](int t) {
    onednn::conv2d_forward({s}, out[t].data(), in[t].data(), w.data(), b.data());
    threads_seen[t] = omp_get_max_threads();
  };
  fast::run_on_threads(kThreads, task);
  EXPECT_EQ(omp_get_max_threads(), before);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(threads_seen[t], t == 0 ? before : threads_seen[t]) << "restored on thread " << t;
    for (size_t i = 0; i < out[t].size(); ++i) ASSERT_NEAR(out[t][i], alone[t][i], 1e-4f) << "thread " << t << " at " << i;
  }
}

// linear_backward_weight_sgd stays the same bits as linear_backward_weight then
// sgd_update where oneDNN computes the gradient.
TEST(OneDnn, TheFusedLinearWeightGradientAndSgdIsTheTwoOps) {
  Context ctx(Backend::Cpu);
  Rng rng(26);
  const ops::LinearShape s{5, 1024, 300, true};
  ASSERT_TRUE(onednn::linear_prefers(s, onednn::Pass::WeightGrad));
  const std::vector<float> in = random_floats(rng, s.n * s.in), dpre = random_floats(rng, s.n * s.out);
  std::vector<float> w = random_floats(rng, s.out * s.in), b = random_floats(rng, s.out);
  std::vector<float> mw = random_floats(rng, s.out * s.in), mb = random_floats(rng, s.out);
  std::vector<float> w2 = w, b2 = b, mw2 = mw, mb2 = mb, dw(w.size()), db(b.size()), dw2(w.size()), db2(b.size());
  const ops::SgdConfig cfg{0.01f, 0.9f, 1e-4f};
  ops::linear_backward_weight_sgd(ctx, s, {w.data(), b.data(), dw.data(), db.data(), mw.data(), mb.data()}, dpre.data(),
                                  in.data(), cfg);
  ops::linear_backward_weight(ctx, s, dw2.data(), db2.data(), dpre.data(), in.data());
  ops::sgd_update(ctx, {s.out * s.in, true}, w2.data(), dw2.data(), mw2.data(), cfg);
  ops::sgd_update(ctx, {s.out, true}, b2.data(), db2.data(), mb2.data(), cfg);
  EXPECT_EQ(w, w2);
  EXPECT_EQ(b, b2);
  EXPECT_EQ(mw, mw2);
  EXPECT_EQ(dw, dw2);
  EXPECT_EQ(db, db2);
}

// A child forked after oneDNN ran on a team (the CLI's tests fork and run
// commands) runs oneDNN on its calling thread: a libgomp team there would
// never end.
TEST(OneDnn, AForkedChildRunsOneDnnOnItsOwnThread) {
  const ops::Conv2dShape s = conv(2, 16, 12, 32, 3, 1, 1);
  Rng rng(27);
  const std::vector<float> in = random_floats(rng, s.n * s.c * s.h * s.w), w = random_floats(rng, s.k * s.c * 9);
  const std::vector<float> b = random_floats(rng, s.k);
  std::vector<float> parent(static_cast<size_t>(s.n * s.k * s.oh() * s.ow()));
  onednn::conv2d_forward({s}, parent.data(), in.data(), w.data(), b.data());
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::vector<float> child(parent.size());
    onednn::conv2d_forward({s}, child.data(), in.data(), w.data(), b.data());
    onednn::conv2d_forward({s, 1, MemoryFormat::NHWC}, child.data(), in.data(), w.data(), b.data());
    onednn::conv2d_forward({s}, child.data(), in.data(), w.data(), b.data());
    for (size_t i = 0; i < child.size(); ++i)
      if (std::fabs(child[i] - parent[i]) > 1e-4f * (1.f + std::fabs(parent[i]))) _exit(2);
    _exit(0);
  }
  int status = 0;
  for (int waited_ms = 0; waited_ms < 30000; waited_ms += 10) {
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (waited_ms + 10 >= 30000) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      FAIL() << "the forked child's oneDNN call did not end in 30 s";
    }
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: the child's result differs from the parent's";
}
