// Which models get a fused GPU kernel (no GPU needed to ask), --gpu-path
// parsing, and that the CPU never takes the fused path.
#include <gtest/gtest.h>

#include "tests/cpu/test_engine_fixtures.hpp"
#include "roofline/core/error.hpp"
#include "roofline/engine/fused.hpp"
#include "roofline/engine/layer.hpp"
#include "roofline/engine/network.hpp"
#include "roofline/engine/trainer.hpp"
#include "src/engine/fused/fused_launch.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using namespace roofline::engine;

TEST(FusedMatch, TheSeedModelsThatHaveAFusedKernel) {
  std::string why = "stale";
  EXPECT_EQ(fused_kernel_name(*make_model("simple-mlp"), 28, 28, &why), "fused-mlp");
  EXPECT_TRUE(why.empty()) << why;
  EXPECT_EQ(fused_kernel_name(*make_model("simple-cnn"), 28, 28, &why), "fused-cnn");
  EXPECT_TRUE(why.empty()) << why;
  EXPECT_EQ(fused_kernel_name(*make_model("ece408"), 28, 28, &why), "");
  EXPECT_NE(why.find("ece408 has no fused kernel"), std::string::npos) << why;
  EXPECT_NE(why.find("not all Linear"), std::string::npos) << why;
}

TEST(FusedMatch, ImagesThatWouldNeedResizingGoTheLayerPath) {
  std::string why;
  EXPECT_EQ(fused_kernel_name(*make_model("simple-mlp"), 32, 32, &why), "");
  EXPECT_NE(why.find("resize"), std::string::npos) << why;
  EXPECT_EQ(fused_kernel_name(*make_model("simple-cnn"), 32, 32, &why), "");
  EXPECT_NE(why.find("28×28"), std::string::npos) << why;
}

namespace {

struct Dense {
  std::int64_t out;
  bool relu = false, bias = true;
};

// flatten, then Linear layers: a Sequential model built from its graph.
Model mlp(const char* name, Shape input, const std::vector<Dense>& layers) {
  LayerGraph g(name, input, layers.back().out);
  int x = g.flatten("f", g.input());
  char id = 'a';
  for (const Dense& d : layers)
    x = g.linear(std::string(1, id++), x, d.out, d.bias, d.relu ? ops::Activation::ReLU : ops::Activation::None);
  g.set_output(x);
  return Model(std::move(g));
}

}  // namespace

TEST(FusedMatch, OtherStacksOfLinearLayersAndNearMisses) {
  std::string why;
  const Model deep = mlp("deep", {1, 28, 28}, {{64, true}, {64, true, false}, {32}, {10}});
  EXPECT_EQ(fused_kernel_name(deep, 28, 28, &why), "fused-mlp") << why;

  const Model one = mlp("one", {1, 28, 28}, {{10}});  // a single Linear: no hidden layer to fuse around
  EXPECT_EQ(fused_kernel_name(one, 28, 28, &why), "");

  const Model wide = mlp("wide", {1, 28, 28}, {{64, true}, {40}});  // more classes than a warp's lanes
  EXPECT_EQ(fused_kernel_name(wide, 28, 28, &why), "");
  EXPECT_NE(why.find("classes"), std::string::npos) << why;

  const Model odd = mlp("odd", {1, 28, 28}, {{30, true}, {10}});  // a hidden width the row phase's 16-byte copies cannot take
  EXPECT_EQ(fused_kernel_name(odd, 28, 28, &why), "");
  EXPECT_NE(why.find("multiple of 4 inputs"), std::string::npos) << why;

  // 729 pixels: the tiles load the first layer's inputs in runs of 4
  const Model odd_in = mlp("odd-in", {1, 27, 27}, {{64, true}, {10}});
  EXPECT_EQ(fused_kernel_name(odd_in, 27, 27, &why), "");
  EXPECT_NE(why.find("first layer takes a multiple of 4 inputs (it has 729)"), std::string::npos) << why;

  // 512 × 512 hidden weights: 1 MB, not in shared memory
  const Model big = mlp("big", {1, 28, 28}, {{512, true}, {512, true}, {10}});
  EXPECT_EQ(fused_kernel_name(big, 28, 28, &why), "");
  EXPECT_NE(why.find("shared memory"), std::string::npos) << why;

  const Model broad = mlp("broad", {1, 28, 28}, {{1024, true}, {10}});  // a first layer wider than a row's slices can hold
  EXPECT_EQ(fused_kernel_name(broad, 28, 28, &why), "");
  EXPECT_NE(why.find("first layer takes at most 512 outputs"), std::string::npos) << why;

  LayerGraph g("cnn3", {1, 28, 28}, 10);  // simple-cnn with a 3×3 first convolution: not its kernel
  int x = g.conv2d("conv1", g.input(), 1, 3, 1, 0, true);
  x = g.maxpool2d("pool1", x, 2, 2);
  x = g.conv2d("conv2", x, 1, 5, 1, 0, true);
  x = g.maxpool2d("pool2", x, 2, 2);
  x = g.flatten("flatten", x);
  x = g.linear("fc1", x, 100, true, ops::Activation::ReLU);
  g.set_output(g.linear("fc2", x, 10));
  const Model cnn3(std::move(g));
  EXPECT_EQ(fused_kernel_name(cnn3, 28, 28, &why), "");
}

TEST(FusedMatch, GpuPathNames) {
  EXPECT_EQ(parse_gpu_path("auto"), GpuPath::Auto);
  EXPECT_EQ(parse_gpu_path(" Fused "), GpuPath::Fused);
  EXPECT_EQ(parse_gpu_path("layers"), GpuPath::Layers);
  EXPECT_STREQ(to_string(GpuPath::Fused), "fused");
  try {
    parse_gpu_path("graphs");
    FAIL() << "an unknown path must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.hint()).find("auto, fused or layers"), std::string::npos);
  }
}

TEST(FusedMatch, TheCpuNeverTakesTheFusedPath) {
  auto model = make_model("simple-mlp");
  Context cpu(Backend::Cpu);
  Network net(*model, cpu, 4);
  std::string why;
  EXPECT_EQ(make_fused_path(*model, net, 28, 28, &why), nullptr);
  EXPECT_NE(why.find("GPU-only"), std::string::npos) << why;

  roofline::test::TempDir tmp;
  roofline::test::write_synthetic_mnist(tmp.path(), 64, 16);
  TrainOptions o;
  o.batch = 16;
  o.epochs = 1;
  o.infer_reps = 2;
  o.gpu_path = GpuPath::Fused;  // a GPU choice: the CPU run ignores it
  TrainResult r = train_and_evaluate(cpu, *model, load_mnist_dir(tmp.path()), o);
  EXPECT_EQ(r.gpu_path, "");
  EXPECT_EQ(r.steps, 4);
}

TEST(FusedMatch, BenchRefusesAnUnknownGpuPath) {
  roofline::test::TempDir tmp;
  auto r = roofline::test::run_cli(
      {"--db", tmp.file("r.db"), "bench", "simple-mlp", "--device", "cpu", "--gpu-path", "fast"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("unknown GPU path 'fast'"), std::string::npos) << r.err;
  auto s = roofline::test::run_cli(
      {"--db", tmp.file("r.db"), "bench", "simple-mlp", "--device", "cpu", "--fused-steps", "0"});
  EXPECT_EQ(s.exit_code, 2) << s.out << s.err;
  EXPECT_NE(s.err.find("--fused-steps"), std::string::npos) << s.err;
}

namespace {

// The phase clocks of `steps` training steps at 2 GHz: mark m of a step comes
// m µs after mark m − 1, and a step starts where the last ended.
std::vector<std::int64_t> synthetic_phases(int steps) {
  namespace f = roofline::engine::fused;
  std::vector<std::int64_t> h(static_cast<size_t>((f::kPhaseSteps + 1) * f::kMaxPhases * 2), 0);
  std::int64_t clk = 1000000, ns = 5000;
  for (int t = 0; t < steps; ++t)
    for (int m = 0; m <= f::kTrainPhases; ++m) {
      clk += 2000 * m;
      ns += 1000 * m;
      h[static_cast<size_t>(2 * (t * f::kMaxPhases + m))] = clk;
      h[static_cast<size_t>(2 * (t * f::kMaxPhases + m) + 1)] = ns;
    }
  return h;
}

}  // namespace

TEST(FusedPhaseReport, MedianPerPhaseAtTheClockTheTimerImplies) {
  namespace f = roofline::engine::fused;
  std::vector<std::int64_t> h = synthetic_phases(f::kPhaseSteps);
  // One step read from another SM's clock (it runs backwards) is left out, not averaged in.
  h[static_cast<size_t>(2 * (7 * f::kMaxPhases + 3))] = 1;
  const std::string r = f::mlp_phase_report(h);
  EXPECT_NE(r.find("median of 31 steps"), std::string::npos) << r;
  EXPECT_NE(r.find("SM clock 2000 MHz"), std::string::npos) << r;
  for (const char* want : {"issue 1.00 us", "first 2.00 us", "barrier1 3.00 us", "stage 4.00 us", "hidden 5.00 us",
                           "loss 6.00 us", "backward 7.00 us", "barrier2 8.00 us", "weights 9.00 us",
                           "barrier3 10.00 us", "step 55.00 us"})
    EXPECT_NE(r.find(want), std::string::npos) << want << " in " << r;
  EXPECT_EQ(r.find("inference"), std::string::npos) << "no inference was recorded: " << r;
}

TEST(FusedPhaseReport, SaysWhenThereIsNothingToReport) {
  namespace f = roofline::engine::fused;
  EXPECT_NE(f::mlp_phase_report(synthetic_phases(1)).find("fewer than two training steps"), std::string::npos);
  EXPECT_NE(f::mlp_phase_report(std::vector<std::int64_t>(10, 0)).find("expected"), std::string::npos);
}

TEST(FusedMlpPlan, FirstLayerSlicesFillTheGridAndCoverK) {
  namespace f = roofline::engine::fused;
  const int grid = 132, in = 784, out = 256;  // simple-mlp's first layer on an H100
  for (int rows : {1, 7, 64, 65, 128, 200, 1024}) {
    SCOPED_TRACE(rows);
    const f::FirstPlan p = f::mlp_first_plan(rows, out, in, grid);
    ASSERT_TRUE(p.kc == 32 || p.kc == 64) << p.kc;
    EXPECT_GE(p.splits * p.kc, in) << "the slices cover every input";
    EXPECT_LT((p.splits - 1) * p.kc, in) << "no empty slice";
    EXPECT_LE(p.splits, f::kMaxSplits);
    const int jobs = f::mlp_cdiv(rows, f::kSplitTile) * f::mlp_cdiv(out, f::kSplitTile) * p.splits;
    if (p.kc == 32) EXPECT_LE(jobs, grid) << "32-input slices only when they fit in one round";
  }
  EXPECT_EQ(f::mlp_first_plan(1, out, in, grid).kc, 32);    // 4 tiles × 25 slices = 100 jobs
  EXPECT_EQ(f::mlp_first_plan(128, out, in, grid).kc, 64);  // 8 tiles × 25 would be 200: 13 slices of 64
  EXPECT_EQ(f::mlp_first_plan(128, out, in, grid).splits, 13);
}

TEST(FusedMlpPlan, BuffersHoldEveryBatchSizesSlicesAndTheRowPhasesPieces) {
  namespace f = roofline::engine::fused;
  f::MlpLayer l[3];
  l[0].in = 784, l[0].out = 256, l[1].in = 256, l[1].out = 128, l[2].in = 128, l[2].out = 10;
  const std::int64_t most = f::mlp_partial_floats(l[0], 128, 132);
  for (int r = 1; r <= 128; ++r)
    EXPECT_GE(most, static_cast<std::int64_t>(f::mlp_first_plan(r, 256, 784, 132).splits) * r * 256) << r;
  EXPECT_EQ(most, 13LL * 128 * 256);  // batch 128: 13 slices × 128 rows (batch 64: 25 × 64, fewer)
  // Weights of layers 1 and 2, bias + gradient per layer, activations of layers 0 and 1 (each rounded
  // up to 4 floats), the logits and the scratch.
  EXPECT_EQ(f::mlp_row_floats(l, 3), 128 * 256 + 10 * 128 + 2 * (256 + 128 + 12) + (256 + 128) + 32 +
                                         f::kRowScratchFloats);
  EXPECT_LE(4 * f::mlp_row_floats(l, 3), f::kMaxRowSmemBytes);
}
