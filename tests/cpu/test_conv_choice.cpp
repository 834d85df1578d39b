// The CUDA convolution kernel choice and the register-tiled kernel's launch
// plan (src/engine/cuda/conv_choice.cpp): host arithmetic, tested without a GPU.
#include <gtest/gtest.h>

#include "roofline/core/error.hpp"
#include "src/engine/cuda/conv_choice.hpp"

using namespace roofline;
using namespace roofline::engine::cuda_ops;

namespace {

std::string usage_error(const char* text) {
  try {
    parse_conv_kernel(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << text;
    EXPECT_FALSE(e.hint().empty()) << text;
    return e.what();
  }
  return "";
}

TEST(ConvChoice, ParsesTheOverride) {
  EXPECT_EQ(parse_conv_kernel("").kind, ConvKernelChoice::Kind::Auto);
  EXPECT_EQ(parse_conv_kernel("auto").kind, ConvKernelChoice::Kind::Auto);
  EXPECT_EQ(parse_conv_kernel("tiled").kind, ConvKernelChoice::Kind::Tiled);
  const ConvKernelChoice a = parse_conv_kernel("regtile:8:2");
  EXPECT_EQ(a.kind, ConvKernelChoice::Kind::RegTile);
  EXPECT_EQ(a.kb, 8);
  EXPECT_EQ(a.rows, 2);
  EXPECT_EQ(a.threads, 0);
  EXPECT_EQ(parse_conv_kernel("regtile:16:1:64").threads, 64);
  EXPECT_EQ(parse_conv_kernel("cudnn").kind, ConvKernelChoice::Kind::Cudnn);
}

// Our kernels take the small models' fp32 NCHW layers; every layer of AlexNet
// and ResNet-18 (64 or more output channels), every bf16/fp16, NHWC or
// grouped convolution goes to cuDNN; the override forces either side.
TEST(ConvChoice, OwnKernelsTakeTheSmallModelsLayersAndCudnnTheRest) {
  using roofline::engine::DType;
  using roofline::engine::MemoryFormat;
  const ConvKernelChoice automatic, tiled = parse_conv_kernel("tiled"), cudnn = parse_conv_kernel("cudnn");
  const auto F32 = DType::F32;
  const auto NCHW = MemoryFormat::NCHW;
  EXPECT_TRUE(own_conv_applies(automatic, F32, NCHW, 1, 1, 1));    // simple-cnn
  EXPECT_TRUE(own_conv_applies(automatic, F32, NCHW, 1, 1, 4));    // ece408 conv1
  EXPECT_TRUE(own_conv_applies(automatic, F32, NCHW, 1, 4, 16));   // ece408 conv2
  EXPECT_FALSE(own_conv_applies(automatic, F32, NCHW, 1, 3, 64));  // AlexNet and ResNet-18's first layers
  EXPECT_FALSE(own_conv_applies(automatic, F32, NCHW, 1, 64, 64));
  EXPECT_FALSE(own_conv_applies(automatic, F32, NCHW, 1, 17, 8));
  EXPECT_FALSE(own_conv_applies(automatic, DType::BF16, NCHW, 1, 4, 16));
  EXPECT_FALSE(own_conv_applies(automatic, F32, MemoryFormat::NHWC, 1, 4, 16));
  EXPECT_FALSE(own_conv_applies(automatic, F32, NCHW, 2, 4, 16));
  EXPECT_TRUE(own_conv_applies(tiled, F32, NCHW, 1, 64, 64));
  EXPECT_FALSE(own_conv_applies(tiled, DType::F16, NCHW, 1, 64, 64));
  EXPECT_FALSE(own_conv_applies(cudnn, F32, NCHW, 1, 1, 4));
}

TEST(ConvChoice, RejectsBadOverridesByName) {
  EXPECT_NE(usage_error("direct").find("names no convolution kernel"), std::string::npos);
  EXPECT_NE(usage_error("regtile:8").find("lacks the rows"), std::string::npos);
  EXPECT_NE(usage_error("regtile:8:x").find("not a whole number"), std::string::npos);
  EXPECT_NE(usage_error("regtile:8:1:").find("not a whole number"), std::string::npos);
  EXPECT_NE(usage_error("regtile:16:2").find("no 16 channels × 2 rows tile"), std::string::npos);
  EXPECT_NE(usage_error("regtile:6:1").find("tile"), std::string::npos);
  EXPECT_NE(usage_error("regtile:8:1:16").find("16 threads"), std::string::npos);
  EXPECT_NE(usage_error("regtile:8:1:64:1").find("too many fields"), std::string::npos);
}

TEST(ConvChoice, PlansEce408sLayers) {
  RegTilePlan p;
  // conv2 at batch 64: 34 rows of 9 pixel groups; 14 rows fit 128 threads,
  // so 3 bands of 12 rows (108 threads, rounded up to 128).
  ASSERT_TRUE(plan_regtile({64, 4, 16, 34, 34, 7, 7}, 132, 8, 1, 0, p));
  EXPECT_EQ(p.band, 12);
  EXPECT_EQ(p.bands, 3);
  EXPECT_EQ(p.threads, 128);
  // input rows (12 + 6) × 44 floats (8 groups · 4 + a 12-float window) per channel, then 4·49·8 weights
  EXPECT_EQ(p.smem_floats, 4 * 18 * 44 + 4 * 49 * 8);
  // Batch 1: 6 blocks of 128 threads would idle the GPU; the target halves to 32 threads (3 rows a band).
  ASSERT_TRUE(plan_regtile({1, 4, 16, 34, 34, 7, 7}, 132, 8, 1, 0, p));
  EXPECT_EQ(p.threads, 32);
  EXPECT_EQ(p.band, 3);
  EXPECT_EQ(p.bands, 12);
  // Two rows per thread: 17 row groups.
  ASSERT_TRUE(plan_regtile({64, 4, 16, 34, 34, 7, 7}, 132, 4, 2, 0, p));
  EXPECT_EQ(p.bands * p.band >= 17, true);
  EXPECT_LT((p.bands - 1) * p.band, 17);
  // An explicit thread target is kept even when the grid is small.
  ASSERT_TRUE(plan_regtile({1, 1, 4, 80, 80, 7, 7}, 132, 4, 1, 256, p));
  EXPECT_EQ(p.threads, 256);  // 12 rows × 20 groups = 240 → 256
  EXPECT_EQ(p.band, 12);
}

TEST(ConvChoice, DeclinesWhatTheKernelCannotRun) {
  RegTilePlan p;
  p.band = -1;
  EXPECT_FALSE(plan_regtile({1, 1, 1, 10, 10, 4, 4}, 132, 4, 1, 0, p));        // 4 wide: not compiled
  EXPECT_FALSE(plan_regtile({1, 1, 1, 10, 1100, 3, 3}, 132, 4, 1, 0, p));      // 275 pixel groups in a row
  EXPECT_FALSE(plan_regtile({70000, 1, 1, 10, 10, 3, 3}, 132, 4, 1, 0, p));    // grid z
  EXPECT_FALSE(plan_regtile({1, 1, 1, 10, 10, 3, 3}, 132, 16, 2, 0, p));       // 128 accumulators: not compiled
  EXPECT_EQ(p.band, -1);                                                        // untouched
  EXPECT_TRUE(choose_regtile({64, 4, 16, 34, 34, 7, 7}, 132, p));
}

TEST(ConvChoice, KeepsTheTiledKernelForGridsSmallerThanTheGpu) {
  RegTilePlan p;
  ASSERT_TRUE(choose_regtile({64, 4, 16, 34, 34, 7, 7}, 132, p));  // 3 bands × 2 channel groups × 64 images
  EXPECT_EQ(p.kb, 8);
  EXPECT_EQ(std::int64_t(p.bands) * 2 * 64, 384);
  ASSERT_TRUE(choose_regtile({64, 1, 4, 80, 80, 7, 7}, 132, p));   // conv1: 4 channels, one group
  EXPECT_EQ(p.kb, 4);
  EXPECT_FALSE(choose_regtile({1, 4, 16, 34, 34, 7, 7}, 132, p));  // batch 1: 24 blocks
  EXPECT_FALSE(choose_regtile({1, 1, 4, 80, 80, 7, 7}, 132, p));   // batch 1: 80 blocks
  EXPECT_TRUE(choose_regtile({1, 1, 4, 80, 80, 7, 7}, 64, p));     // ... on a 64-SM GPU
  // Pooled (inference): a short tap chain keeps the pooled tile on a small
  // grid; a long one (4 channels × 7 × 7) does not.
  EXPECT_TRUE(choose_regtile({1, 1, 4, 80, 80, 7, 7}, 132, p, 2));
  EXPECT_EQ(p.kb, 4);
  EXPECT_FALSE(choose_regtile({1, 4, 16, 32, 32, 7, 7}, 132, p, 4));
}

}  // namespace
