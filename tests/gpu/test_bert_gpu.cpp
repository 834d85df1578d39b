// bert-base's engine on the GPU: the tiny BERT in every precision against the
// CPU on the same weights (padded and packed batches), and, where the device
// call wrote it ($ROOFLINE_GOLDEN_DIR/bert-base: peers/pytorch_bert.py golden
// --size base), bert-base-cased's shape against Hugging Face: fp32
// (TF32 off) to 1e-3 of the largest logit, bf16 within twice PyTorch's own
// bf16 distance from float64 (both by the error norm over the value norm).
#include <gtest/gtest.h>

#include <filesystem>

#include "roofline/core/env.hpp"
#include "tests/support/bert_fixture.hpp"
#include "tests/support/gpu.hpp"
#include "tests/support/numeric.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {
std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }
}  // namespace

TEST(BertGpu, TinyBertInEveryPrecisionFollowsTheCpu) {
  ROOFLINE_REQUIRE_GPU();
  Context cpu(Backend::Cpu), gpu(Backend::Cuda);
  // Heads of 16 (the fp32-arithmetic attention kernel in every dtype) and of 64 (bf16 and fp16 on the tensor cores).
  auto wide = test::tiny_bert();
  wide.hidden = 128, wide.heads = 2;
  for (const auto& c : {test::tiny_bert(), wide})
  for (bool packed : {false, true}) {
    bert::BertQA ref(c, cpu);
    ref.init_random(3);
    // Lengths across the attention kernels' 64-row tiles.
    const auto batch = test::random_bert_batch(c, {64, 1, 37, 50}, packed, 4);
    const auto want = to_double(test::real_logits(batch, ref.predict(batch)));
    struct Cell {
      DType dtype;
      bool tf32;
      double bound;
      bool norm;
    };
    for (const Cell& cell : {Cell{DType::F32, false, 1e-4, false}, Cell{DType::F32, true, 1e-2, false},
                             Cell{DType::BF16, false, 3e-2, true}, Cell{DType::F16, false, 5e-3, true}}) {
      bert::BertQA m(c, gpu, cell.dtype, cell.tf32);
      m.init_random(3);
      const auto got = test::real_logits(batch, m.predict(batch));
      const double err = cell.norm ? test::rel_error(got, want) : test::max_rel_error(got, want);
      EXPECT_LT(err, cell.bound) << to_string(cell.dtype) << (cell.tf32 ? " tf32" : "")
                                 << (packed ? " packed" : " padded") << ", head_dim " << c.head_dim();
    }
  }
}

TEST(BertGpu, BertBaseMatchesHuggingFace) {
  ROOFLINE_REQUIRE_GPU();
  const auto golden = env::get(env::Var::GoldenDir);
  const std::string d = golden ? *golden + "/bert-base" : std::string();
  if (d.empty() || !std::filesystem::exists(d + "/golden.safetensors"))
    GTEST_SKIP() << "no $ROOFLINE_GOLDEN_DIR/bert-base/golden.safetensors: python3 peers/pytorch_bert.py golden --size "
                    "base --device cuda --out $ROOFLINE_GOLDEN_DIR/bert-base writes it";
  const auto cfg = bert::read_bert_config(d + "/config.json");
  const auto weights = SafetensorsFile::open(d + "/model.safetensors");
  const auto g64 = test::read_bert_golden(d + "/golden.safetensors", "fp64");
  const auto gbf = test::read_bert_golden(d + "/golden.safetensors", "bf16");
  Context gpu(Backend::Cuda);
  {
    bert::BertQA m(cfg, gpu, DType::F32, false);
    m.load(weights);
    const auto got = test::real_logits(g64.batch, m.predict(g64.batch));
    EXPECT_LT(test::max_rel_error(got, g64.logits), 1e-3) << "fp32 against float64";
  }
  {
    bert::BertQA m(cfg, gpu, DType::BF16, false);
    m.load(weights);
    const auto got = test::real_logits(g64.batch, m.predict(g64.batch));
    std::vector<float> torch_bf16(gbf.logits.begin(), gbf.logits.end());
    const double theirs = test::rel_error(torch_bf16, g64.logits), ours = test::rel_error(got, g64.logits);
    RecordProperty("torch_bf16_error", std::to_string(theirs));
    RecordProperty("roofline_bf16_error", std::to_string(ours));
    EXPECT_LT(ours, 2 * theirs + 1e-3) << "bf16: ours " << ours << ", PyTorch autocast's " << theirs;
  }
}
