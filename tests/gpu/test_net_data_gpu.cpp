// --data on the GPU: the pinned, double-buffered input path. What reaches a
// bf16 ResNet-18's input (NHWC) is the loader's batch rounded to bf16, batch
// after batch while captured steps run; and the bench's data-fed cells train
// to a finite loss and record their data params.
#include <gtest/gtest.h>

#include <cmath>

#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/half.hpp"
#include "roofline/engine/net_bench.hpp"
#include "src/engine/bench/net_data.hpp"
#include "tests/cpu/image_folder_fixtures.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
using namespace roofline::engine;
namespace fx = roofline::test::image_folder;

TEST(NetDataGpu, InputIsTheLoadersBatchConvertedWhileStepsRun) {
  ROOFLINE_REQUIRE_GPU();
  fx::TestFolder f;
  const ImageFolder folder = scan_image_folder(f.root);
  const LayerGraph g = make_resnet18(1000, {3, 224, 224});
  Context ctx(Backend::Cuda);
  GraphOptions o;
  o.precision = Precision::BF16;
  const std::int64_t batch = 8;
  GraphNetwork net(g, ctx, batch, o);
  ASSERT_EQ(net.format(), MemoryFormat::NHWC);
  ASSERT_EQ(net.dtype(), DType::BF16);
  InputStager s(net, folder, true, 2);
  const size_t n = static_cast<size_t>(batch * 3 * 224 * 224);
  // Batch k: the loader's copy of it (held until the next prefetch) against input() and labels().
  const auto expect_input_is_held = [&](int k) {
    std::vector<float> x(s.held().x, s.held().x + n);
    std::vector<std::int32_t> y(s.held().y, s.held().y + batch);
    std::vector<std::uint16_t> got(n);
    std::vector<std::int32_t> labels(static_cast<size_t>(batch));
    ctx.copy_async(got.data(), Device::cpu(), net.input(), ctx.device(), n * 2);
    ctx.copy_async(labels.data(), Device::cpu(), net.labels(), ctx.device(), labels.size() * 4);
    ctx.synchronize();
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i) wrong += got[i] != bf16_from_float(x[i]);
    EXPECT_EQ(wrong, 0u) << "batch " << k << ": input values other than the loader's rounded to bf16";
    EXPECT_EQ(labels, y) << "batch " << k;
    float lo = x[0], hi = x[0];
    for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
    EXPECT_LT(lo, -0.5f) << "batch " << k << ": not normalised images";  // (0 - 0.485) / 0.229 = -2.1 at black
    EXPECT_GT(hi, 0.5f) << "batch " << k;
  };
  s.prefetch();
  s.load();
  expect_input_is_held(0);
  net.capture_train_step(batch);  // one eager step on batch 0, then the capture
  for (int k = 1; k <= 3; ++k) {  // both staging buffers, then the first again
    s.prefetch();                 // batch k's copy starts while step k-1 may still run
    s.load();
    expect_input_is_held(k);
    net.replay();
    const float loss = net.loss();
    EXPECT_TRUE(std::isfinite(loss)) << "step " << k << ": " << loss;
  }
}

TEST(NetDataGpu, BenchCellsOfResNet18Bf16ReadTheFolder) {
  ROOFLINE_REQUIRE_GPU();
  fx::TestFolder f;
  NetBenchConfig cfg;
  cfg.models = {"resnet18"};
  cfg.cpu = false;
  cfg.gpu = true;
  cfg.precisions = {Precision::BF16};
  cfg.batches = {8};
  cfg.steps = 3;
  cfg.warmup = 1;
  cfg.data = f.root;  // no train/ and val/: the folder serves both modes
  cfg.data_threads = 4;
  const auto records = run_net_bench(cfg, {}, {});
  ASSERT_EQ(records.size(), 2u);
  for (const auto& r : records) {
    SCOPED_TRACE(r.mode + ": " + r.params.dump());
    EXPECT_EQ(r.steps, 3);
    EXPECT_GT(r.median_s, 0.0);
    EXPECT_EQ(r.params.at("data").get<std::string>(), f.root);
    EXPECT_EQ(r.params.at("data_folder").get<std::string>(), f.root);
    EXPECT_EQ(r.params.at("data_threads").get<int>(), 4);
    EXPECT_GT(r.params.at("loader_images_per_s").get<double>(), 0.0);
    EXPECT_GT(r.params.at("loader_capacity_images_per_s").get<double>(), 0.0);
    EXPECT_GE(r.params.at("data_wait_ms").get<double>(), 0.0);
    // The device's own step is part of the step timed from start to start.
    EXPECT_GT(r.params.at("device_step_ms").get<double>(), 0.0);
    EXPECT_LE(r.params.at("device_step_ms").get<double>(), r.max_s * 1e3 * 1.05);
    EXPECT_GT(r.params.at("data_staging_bytes").get<double>(), 2 * 8 * 3 * 224 * 224 * 4 - 1.0);
    EXPECT_TRUE(r.params.at("data_bound").is_boolean());
    if (r.mode == "train") {
      ASSERT_TRUE(r.loss.has_value());
      EXPECT_TRUE(std::isfinite(*r.loss)) << *r.loss;
    }
  }
  Report rep("bench");
  add_net_data_warnings(rep, records);  // the 3 bad files of the folder, told once
  nlohmann::json j = to_json(rep);
  EXPECT_NE(j.dump().find("3 files could not be decoded"), std::string::npos) << j.dump();
}
