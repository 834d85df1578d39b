// BatchNorm folded into the convolutions of inference networks
// (graph_fold.cpp): which pairs fold, the folded logits against the unfolded
// ones and against PyTorch's eval logits, that the fold follows load_state,
// the arena, and the inference cost the benchmark reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/net_bench.hpp"
#include "roofline/engine/rng.hpp"
#include "roofline/engine/safetensors.hpp"
#include "tests/support/golden_init.hpp"

using namespace roofline;
using namespace roofline::engine;
using ops::Activation;

namespace {

// Every kind of pair: a BatchNorm with ReLU, one adding a residual, a conv with
// a bias, a conv whose output is also read elsewhere and a conv with its own
// ReLU (neither folds).
LayerGraph pairs_graph() {
  LayerGraph g("pairs", {3, 8, 8}, 5);
  int x = g.conv2d("c1", g.input(), 4, 3, 1, 1, true);
  int a = g.batchnorm2d("bn1", x, Activation::ReLU);
  int y = g.conv2d("c2", a, 4, 3, 1, 1, false);
  y = g.batchnorm2d("bn2", y, Activation::ReLU, a);
  int z = g.conv2d("c3", y, 4, 1, 1, 0, false);
  int w = g.batchnorm2d("bn3", z);
  w = g.add("sum", w, z);  // c3's output is read twice: no fold
  w = g.conv2d("c4", w, 6, 3, 2, 1, true, Activation::ReLU);
  w = g.batchnorm2d("bn4", w);  // after a ReLU: no fold
  w = g.adaptive_avgpool2d("avg", w, 1, 1);
  w = g.flatten("flat", w);
  w = g.linear("fc", w, 5);
  g.set_output(w);
  return g;
}

double rel(const std::vector<float>& a, const std::vector<float>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    num += (static_cast<double>(a[i]) - ref[i]) * (static_cast<double>(a[i]) - ref[i]);
    den += static_cast<double>(ref[i]) * ref[i];
  }
  return std::sqrt(num / den);
}

std::vector<float> infer(const LayerGraph& g, Context& ctx, const std::vector<std::vector<float>>& state, bool fold,
                         std::int64_t batch, std::int64_t size, MemoryFormat format = MemoryFormat::NCHW) {
  GraphOptions o;
  o.training = false;
  o.fold_batchnorm = fold;
  o.format = format;
  GraphNetwork net(g, ctx, batch, o);
  EXPECT_EQ(net.folded_batchnorms() > 0, fold);
  net.load_state(state);
  net.set_batch(test::golden_input(batch, size), test::golden_labels(batch, g.classes()), batch);
  net.forward(batch, false);
  return net.logits(batch);
}

std::string golden_file(const std::string& model) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/tests/data/golden/golden-" + model + "-fp64-64.safetensors";
}

}  // namespace

TEST(GraphFold, PairsFoldWhereTheConvolutionFeedsOnlyTheBatchNorm) {
  const LayerGraph g = pairs_graph();
  const auto f = batchnorm_folds(g);
  std::vector<std::string> folded;
  for (size_t i = 0; i < f.size(); ++i)
    if (f[i] >= 0) {
      folded.push_back(g.nodes()[i].name);
      EXPECT_EQ(f[static_cast<size_t>(f[i])], static_cast<int>(i)) << "the partner of a partner";
    }
  EXPECT_EQ(folded, (std::vector<std::string>{"c1", "bn1", "c2", "bn2"}));

  int resnet = 0, alexnet = 0;
  const LayerGraph r = make_resnet18(10, {3, 32, 32}), a = make_alexnet(10, {3, 64, 64}, 0.0f);
  for (size_t i = 0; i < r.nodes().size(); ++i)
    resnet += batchnorm_folds(r)[i] >= 0 && r.nodes()[i].op == NodeOp::Conv2d;
  for (int p : batchnorm_folds(a)) alexnet += p >= 0;
  EXPECT_EQ(resnet, 20);  // the stem, 16 in the blocks, 3 downsampling shortcuts
  EXPECT_EQ(alexnet, 0);
}

// Folding moves γ/√(var + ε) from the activations to the weights: the same
// arithmetic reassociated, so fp32 rounding apart (ResNet-18's 20 layers and
// its residuals keep it near 1e-6).
TEST(GraphFold, FoldedResNet18FollowsTheUnfoldedOne) {
  const LayerGraph g = make_resnet18(1000, {3, 64, 64});
  const auto state = test::golden_state(g);
  Context ctx(Backend::Cpu);
  const auto folded = infer(g, ctx, state, true, 2, 64), plain = infer(g, ctx, state, false, 2, 64);
  const double e = rel(folded, plain);
  std::printf("[fold] resnet18 64x64 batch 2 fp32: folded vs unfolded logits %.2e\n", e);
  EXPECT_LE(e, 1e-5);
}

TEST(GraphFold, FoldedPairsOfEveryKindFollowTheUnfoldedOnes) {
  const LayerGraph g = pairs_graph();
  const auto state = test::golden_state(g);
  for (Backend b : {Backend::Cpu, Backend::CpuRef}) {
    Context ctx(b);
    for (MemoryFormat f : {MemoryFormat::NCHW, MemoryFormat::NHWC}) {
      const auto folded = infer(g, ctx, state, true, 3, 8, f), plain = infer(g, ctx, state, false, 3, 8, f);
      EXPECT_LE(rel(folded, plain), 1e-5) << to_string(b) << " " << to_string(f);
    }
  }
}

TEST(GraphFold, FoldedResNet18MatchesPyTorchsEvalLogits) {
  const LayerGraph g = make_resnet18(1000, {3, 64, 64});
  const SafetensorsFile file = SafetensorsFile::open(golden_file("resnet18"));
  Context ctx(Backend::Cpu);
  const auto folded = infer(g, ctx, test::golden_state(g), true, 2, 64);
  EXPECT_LE(rel(folded, file.read_f32("eval_logits")), 1e-4);  // the golden tests' fp32 bound
}

// The folded weights are made from the state loaded, not the one the network started with.
TEST(GraphFold, FoldFollowsLoadState) {
  const LayerGraph g = make_resnet18(10, {3, 32, 32});
  auto state = test::golden_state(g);
  Context ctx(Backend::Cpu);
  GraphOptions o;
  o.training = false;
  GraphNetwork net(g, ctx, 2, o);
  net.set_batch(test::golden_input(2, 32), test::golden_labels(2, 10), 2);
  net.load_state(state);
  net.forward(2, false);
  const auto before = net.logits(2);
  // Other running statistics (and a BatchNorm weight), as after more training.
  for (size_t i = 0; i < state.size(); ++i) {
    const std::string& name = g.params()[i].name;
    for (auto& v : state[i]) {
      if (name.ends_with("running_var")) v *= 1.7f;
      if (name.ends_with("running_mean")) v += 0.05f;
      if (name == "layer2.0.bn1.weight") v = -v;
    }
  }
  net.load_state(state);
  net.forward(2, false);
  const auto after = net.logits(2);
  const auto plain = infer(g, ctx, state, false, 2, 32);
  EXPECT_GT(rel(before, plain), 1e-2) << "the new state hardly changes the logits: the test could not fail";
  EXPECT_LE(rel(after, plain), 1e-5);
  // state() gives back what was loaded: the fold lives in its own buffer.
  EXPECT_EQ(net.state(), state);
}

// The pair's two values share one buffer: the arena cannot grow, and the
// buffers summed shrink by a convolution output per pair.
TEST(GraphFold, FoldingNeverGrowsTheArena) {
  const LayerGraph g = make_resnet18(1000, {3, 224, 224});
  Context ctx(Backend::CpuRef);  // nothing runs: only the plans are compared
  GraphOptions o;
  o.training = false;
  o.fold_batchnorm = false;
  const GraphNetwork plain(g, ctx, 8, o);
  o.fold_batchnorm = true;
  const GraphNetwork folded(g, ctx, 8, o);
  std::printf("[fold] resnet18 batch 8 inference arena: %zu bytes folded, %zu unfolded\n", folded.memory().arena,
              plain.memory().arena);
  EXPECT_LE(folded.memory().arena, plain.memory().arena);
  EXPECT_LT(folded.arena_unshared(), plain.arena_unshared());
}

// A conv (no bias) and its BatchNorm, counted by hand: folded, the conv gains a
// bias add per output and the BatchNorm's pass is gone.
TEST(GraphFold, InferenceCostCountsWhatRuns) {
  LayerGraph g("one", {2, 4, 4}, 3);
  int x = g.conv2d("c", g.input(), 3, 3, 1, 1, false);
  x = g.batchnorm2d("bn", x);
  x = g.adaptive_avgpool2d("avg", x, 1, 1);
  x = g.flatten("flat", x);
  x = g.linear("fc", x, 3);
  g.set_output(x);
  const std::int64_t n = 5;
  const double outs = n * 3 * 16, macs = outs * 2 * 9;
  const auto rest = g.describe(n, DType::F32);
  const double tail = rest[2].cost.forward.flops + rest[4].cost.forward.flops;  // avg pool, fc
  EXPECT_DOUBLE_EQ(inference_cost(g, n, DType::F32, true).flops, 2 * macs + outs + tail);
  EXPECT_DOUBLE_EQ(inference_cost(g, n, DType::F32, false).flops, 2 * macs + 3 * outs + tail);  // eval BN: 3 a value
  EXPECT_LT(inference_cost(g, n, DType::F32, true).bytes, inference_cost(g, n, DType::F32, false).bytes);
}

// The benchmark's inference cells say whether BatchNorm was folded, and count
// the FLOPs of what ran.
TEST(GraphFold, BenchRecordsSayWhetherBatchNormWasFolded) {
  NetBenchConfig cfg;
  cfg.cpu = true, cfg.gpu = false, cfg.train = false, cfg.infer = true;
  cfg.batches = {1};
  cfg.steps = 1, cfg.warmup = 0;
  std::vector<NetRecord> r[2];
  for (int fold = 0; fold < 2; ++fold) {
    cfg.fold_batchnorm = fold == 1;
    r[fold] = run_net_bench(cfg, {}, {});
    ASSERT_EQ(r[fold].size(), 1u);
  }
  EXPECT_EQ(r[1][0].params.value("batchnorm", ""), "folded into the convolutions");
  EXPECT_EQ(r[0][0].params.value("batchnorm", ""), "separate");
  EXPECT_LT(r[1][0].flops, r[0][0].flops);
  EXPECT_GT(r[1][0].flops, 0.95 * r[0][0].flops);  // BatchNorm is a sliver of ResNet-18's FLOPs
}

// A measurement, not a check (run by name; docs/perf-notes/cpu-onednn.md):
// ResNet-18 at 224 × 224, folded and unfolded inference networks side by side,
// their forwards interleaved so that the host's other load falls on both
// alike; the minimum and median of each over 21 rounds (--gtest_repeat for more runs).
TEST(GraphFold, DISABLED_FoldedAgainstUnfoldedTiming) {
  const LayerGraph g = make_resnet18();
  const int rounds = 21;
  Context ctx(Backend::Cpu);
  for (std::int64_t batch : {1, 8}) {
    std::vector<std::unique_ptr<GraphNetwork>> nets;
    for (bool fold : {true, false}) {
      GraphOptions o;
      o.training = false;
      o.fold_batchnorm = fold;
      nets.push_back(std::make_unique<GraphNetwork>(g, ctx, batch, o));
      std::vector<float> x(static_cast<size_t>(batch * 3 * 224 * 224));
      Rng rng(1);
      for (auto& v : x) v = rng.normal();
      nets.back()->set_batch(x, std::vector<std::int32_t>(static_cast<size_t>(batch), 0), batch);
      for (int i = 0; i < 2; ++i) nets.back()->forward(batch, false);
    }
    std::vector<double> t[2];
    for (int r = 0; r < rounds; ++r)
      for (int k = 0; k < 2; ++k) {
        const auto a = std::chrono::steady_clock::now();
        nets[static_cast<size_t>(k)]->forward(batch, false);
        ctx.synchronize();
        t[k].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count() * 1e3);
      }
    // What folding removes and what it keeps, op by op on the same shapes: every
    // BatchNorm's eval pass, and the residual adds left after folding (best of the rounds).
    double bn_ms = 1e30, add_ms = 1e30;
    {
      Tensor a = ctx.empty({batch * 64 * 112 * 112}, DType::F32, "x"),
             b = ctx.empty({batch * 64 * 112 * 112}, DType::F32, "y");
      Tensor c = ctx.empty({batch * 64 * 112 * 112}, DType::F32, "r"), p = ctx.empty({4096}, DType::F32, "p");
      std::vector<float> ones(4096, 1.0f);
      copy_bytes(p.raw(), p.device(), ones.data(), Device::cpu(), ones.size() * 4);
      for (int r = 0; r < std::max(3, rounds / 3); ++r) {
        double bn = 0, add = 0;
        for (const GraphNode& n : g.nodes()) {
          if (n.op != NodeOp::BatchNorm2d) continue;
          const Shape& in = g.values()[static_cast<size_t>(n.inputs[0])].shape;
          const auto s = batchnorm_shape(n, in, batch, MemoryFormat::NCHW, DType::F32);
          auto t0 = std::chrono::steady_clock::now();
          ops::batchnorm_forward_eval(ctx, s, b.raw(), a.raw(), s.residual ? c.raw() : nullptr, p.f32(), p.f32(),
                                      p.f32(), p.f32());
          auto t1 = std::chrono::steady_clock::now();
          bn += std::chrono::duration<double>(t1 - t0).count() * 1e3;
          if (!s.residual) continue;
          ops::add_forward(ctx, {batch * numel(in), n.act, DType::F32}, b.raw(), b.raw(), c.raw());
          add += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count() * 1e3;
        }
        bn_ms = std::min(bn_ms, bn), add_ms = std::min(add_ms, add);
      }
    }
    std::printf("[fold timing] batch %lld: the 20 BatchNorm passes %.2f ms, the 8 residual adds left %.2f ms\n",
                static_cast<long long>(batch), bn_ms, add_ms);
    for (auto& v : t) std::sort(v.begin(), v.end());
    std::printf(
        "[fold timing] batch %lld, %d rounds: folded min %.1f median %.1f ms; unfolded min %.1f median %.1f "
        "ms; unfolded/folded min %.3f median %.3f\n",
        static_cast<long long>(batch), rounds, t[0][0], t[0][t[0].size() / 2], t[1][0], t[1][t[1].size() / 2],
        t[1][0] / t[0][0], t[1][t[1].size() / 2] / t[0][t[0].size() / 2]);
  }
}
