// bert-base's engine on the GPU: the tiny BERT in every precision against the
// CPU on the same weights (padded and packed batches), and, where the device
// call wrote it ($ROOFLINE_GOLDEN_DIR/bert-base: peers/pytorch_bert.py golden
// --size base), bert-base-cased's shape against Hugging Face: fp32
// (TF32 off) to 1e-3 of the largest logit, bf16 within twice PyTorch's own
// bf16 distance from float64 (both by the error norm over the value norm).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

namespace {

// The gradients (state_dict order) of one step of `m` on the batch, dropout as `dropout`, parameters kept (lr 0).
std::vector<std::vector<float>> step_gradients(bert::BertQA& m, const bert::BertBatch& batch,
                                               const std::vector<std::int32_t>& start,
                                               const std::vector<std::int32_t>& end, bool dropout, float* loss) {
  bert::BertTrainConfig t;
  t.dropout = dropout;
  t.adamw.lr = 0;
  t.seed = 11;
  m.enable_training(t);
  m.stage(batch);
  m.stage_targets(start, end);
  m.train_step();
  *loss = m.last_loss();
  return m.gradients();
}

std::vector<float> flatten(const std::vector<std::vector<float>>& v) {
  std::vector<float> out;
  for (const auto& t : v) out.insert(out.end(), t.begin(), t.end());
  return out;
}

}  // namespace

// The fine-tuning step on the GPU against the CPU's on the same weights and
// batch: fp32 (TF32 off) to 1e-4 of the gradient's norm, bf16 to 3e-2, the
// dropout masks identical (the same counter-based hash), and the captured
// step replaying the eager one.
TEST(BertGpu, TinyTrainingStepFollowsTheCpu) {
  ROOFLINE_REQUIRE_GPU();
  Context cpu(Backend::Cpu), gpu(Backend::Cuda);
  auto wide = test::tiny_bert();
  wide.hidden = 128, wide.heads = 2;
  for (const auto& c : {test::tiny_bert(), wide})
    for (bool dropout : {false, true}) {
      const auto batch = test::random_bert_batch(c, {64, 1, 37, 50}, false, 4);
      const std::vector<std::int32_t> start = {3, 0, 10, 20}, end = {9, 0, 30, 21};
      bert::BertQA ref(c, cpu);
      ref.init_random(3);
      float ref_loss = 0;
      const auto want = flatten(step_gradients(ref, batch, start, end, dropout, &ref_loss));
      const std::vector<double> want64(want.begin(), want.end());
      for (DType dt : {DType::F32, DType::BF16}) {
        bert::BertQA m(c, gpu, dt, false);
        m.init_random(3);
        float loss = 0;
        const auto got = flatten(step_gradients(m, batch, start, end, dropout, &loss));
        const double bound = dt == DType::F32 ? 1e-4 : 3e-2;
        EXPECT_NEAR(loss, ref_loss, bound * ref_loss) << to_string(dt) << " dropout " << dropout;
        EXPECT_LT(test::rel_error(got, want64), bound)
            << to_string(dt) << " dropout " << dropout << ", head_dim " << c.head_dim();
        if (dt == DType::F32 && !dropout) {  // the graph replays the eager step (lr 0: parameters unchanged)
          for (int i = 0; i < 3; ++i) m.train_step_graph();
          EXPECT_NEAR(m.last_loss(), loss, 1e-6 * loss);
          EXPECT_LT(test::rel_error(flatten(m.gradients()), want64), bound);
        }
      }
    }
}

// bert-base-cased's shape against Hugging Face (peers/pytorch_bert.py golden
// --size base): the span loss, each gradient's norm and first 256 values in
// fp32 (TF32 off) against float64, three AdamW steps' losses, and bf16's
// gradient within twice PyTorch autocast's own distance from float64.
TEST(BertGpu, BertBaseTrainingStepMatchesHuggingFace) {
  ROOFLINE_REQUIRE_GPU();
  const auto golden = env::get(env::Var::GoldenDir);
  const std::string d = golden ? *golden + "/bert-base" : std::string();
  if (d.empty() || !std::filesystem::exists(d + "/train.safetensors"))
    GTEST_SKIP() << "no $ROOFLINE_GOLDEN_DIR/bert-base/train.safetensors: python3 peers/pytorch_bert.py golden --size "
                    "base --device cuda --out $ROOFLINE_GOLDEN_DIR/bert-base writes it";
  const auto cfg = bert::read_bert_config(d + "/config.json");
  const auto weights = SafetensorsFile::open(d + "/model.safetensors");
  const auto g = test::read_bert_golden(d + "/golden.safetensors", "fp64");
  const auto t = test::read_bert_train_golden(d + "/train.safetensors", cfg);
  const auto names = bert::bert_qa_tensors(cfg);
  Context gpu(Backend::Cuda);
  auto heads = [&](const std::vector<std::vector<float>>& grads, std::vector<double>* norms) {
    std::vector<float> v;
    for (size_t i = 0; i < grads.size(); ++i) {
      const size_t n = std::min<size_t>(256, grads[i].size());
      v.insert(v.end(), grads[i].begin(), grads[i].begin() + long(n));
      double s = 0;
      for (float x : grads[i]) s += double(x) * x;
      if (norms) norms->push_back(std::sqrt(s));
    }
    return v;
  };
  std::vector<double> want_heads;
  for (const auto& [name, v] : t.grads) want_heads.insert(want_heads.end(), v.begin(), v.end());
  for (DType dt : {DType::F32, DType::BF16}) {
    bert::BertQA m(cfg, gpu, dt, false);
    m.load(weights);
    float loss = 0;
    const auto grads = step_gradients(m, g.batch, t.start, t.end, false, &loss);
    std::vector<double> norms;
    const auto got = heads(grads, &norms);
    const double err = test::rel_error(got, want_heads);
    RecordProperty(std::string(to_string(dt)) + "_grad_error", std::to_string(err));
    if (dt == DType::F32) {
      EXPECT_NEAR(loss, t.loss, 1e-4 * t.loss);
      EXPECT_LT(err, 1e-3) << "fp32 gradients (first 256 of each tensor) against float64";
      ASSERT_EQ(norms.size(), t.norms.size());
      // Zero in exact arithmetic (key biases, the QA bias, the last beta): held to 1e-6 of the largest norm.
      const double largest = *std::max_element(t.norms.begin(), t.norms.end());
      for (size_t i = 0; i < norms.size(); ++i)
        EXPECT_NEAR(norms[i], t.norms[i], 1e-3 * t.norms[i] + 1e-6 * largest) << names[i].name;
    } else {
      ASSERT_GT(t.torch_bf16_err, 0);
      RecordProperty("torch_bf16_grad_error", std::to_string(t.torch_bf16_err));
      EXPECT_LT(err, 2 * t.torch_bf16_err + 1e-3) << "bf16: ours " << err << ", PyTorch autocast's "
                                                  << t.torch_bf16_err;
    }
  }
  // Three AdamW steps (lr 1e-3) in fp32, as torch.optim.AdamW in fp32.
  bert::BertQA m(cfg, gpu, DType::F32, false);
  m.load(weights);
  bert::BertTrainConfig tc;
  tc.dropout = false;
  tc.adamw.lr = 1e-3;
  m.enable_training(tc);
  m.stage(g.batch);
  m.stage_targets(t.start, t.end);
  // The batch is learnt by step 3 (loss ~3e-6): held to 2e-3 of each loss plus 1e-6 of the first.
  for (size_t s = 0; s < t.losses32.size(); ++s) {
    m.train_step();
    EXPECT_NEAR(m.last_loss(), t.losses32[s], 2e-3 * t.losses32[s] + 1e-6 * t.losses32[0]) << "AdamW step " << s;
  }
}
