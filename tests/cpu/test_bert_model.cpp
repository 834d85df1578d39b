// bert-base's engine on the CPU: the tiny BERT against Hugging Face's (the
// golden fixture written by peers/pytorch_bert.py golden --size tiny on the
// GPU machine, float64, in tests/data/golden/bert-tiny/), padded and packed
// batches agreeing, both CPU backends agreeing, the parameter count of
// bert-base-cased, and bad input refused with a message.
#include <gtest/gtest.h>

#include <filesystem>

#include "roofline/core/error.hpp"
#include "tests/support/bert_fixture.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/numeric.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {
std::string tiny_dir() { return std::string(ROOFLINE_SOURCE_DIR) + "/tests/data/golden/bert-tiny"; }
std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }
}  // namespace

TEST(BertModel, TinyBertMatchesHuggingFaceOnBothCpuBackends) {
  const std::string dir = tiny_dir();
  ASSERT_TRUE(std::filesystem::exists(dir + "/golden.safetensors"))
      << dir << " is missing: python3 peers/pytorch_bert.py golden --size tiny --out " << dir;
  const auto cfg = bert::read_bert_config(dir + "/config.json");
  const auto g = test::read_bert_golden(dir + "/golden.safetensors", "fp64");
  for (Backend b : {Backend::CpuRef, Backend::Cpu}) {
    Context ctx(b);
    bert::BertQA model(cfg, ctx);
    model.load(SafetensorsFile::open(dir + "/model.safetensors"));
    for (bool packed : {false, true}) {
      bert::BertBatch batch = g.batch;
      if (packed) {  // the same sequences without padding
        std::vector<std::vector<std::int32_t>> ids, types;
        for (std::int64_t s = 0; s < batch.batch; ++s) {
          const auto s0 = size_t(batch.start[size_t(s)]), n = size_t(batch.len[size_t(s)]);
          ids.emplace_back(batch.ids.begin() + long(s0), batch.ids.begin() + long(s0 + n));
          types.emplace_back(batch.type_ids.begin() + long(s0), batch.type_ids.begin() + long(s0 + n));
        }
        batch = bert::BertBatch::make(ids, types, true);
      }
      const auto got = test::real_logits(batch, model.predict(batch));
      ASSERT_EQ(got.size(), g.logits.size());
      EXPECT_LT(test::max_rel_error(got, g.logits), 1e-4)
          << to_string(b) << (packed ? " packed" : " padded") << ": logits against Hugging Face's (float64)";
    }
  }
}

TEST(BertModel, BertBaseCasedHasHuggingFacesParameterCount) {
  Context ctx(Backend::Cpu);
  bert::BertConfig c = bert::bert_base_cased();
  c.layers = 1;  // the count is affine in the layers: 1 layer keeps the test's memory small
  bert::BertQA one(c, ctx);
  const std::int64_t per_layer = 7087872, rest = one.parameter_count() - per_layer;
  // sum(p.numel() for p in BertForQuestionAnswering(BertConfig(vocab_size=28996)).parameters())
  EXPECT_EQ(rest + 12 * per_layer, 107721218);
  std::int64_t listed = 0;
  for (const auto& t : bert::bert_qa_tensors(bert::bert_base_cased())) listed += numel(t.shape);
  EXPECT_EQ(listed, 107721218);
}

TEST(BertModel, CostsCountEveryLayer) {
  const auto c = bert::bert_base_cased();
  const auto nodes = bert::describe_bert(c, 1, 128, DType::F32);
  ASSERT_EQ(nodes.size(), 2u + 7u * 12u + 1u);
  double gemm = 0, attn = 0;
  for (const auto& n : nodes) {
    if (n.op == "linear" || n.op == "linear+gelu") gemm += n.cost.forward.flops;
    if (n.op == "attention") attn += n.cost.forward.flops;
  }
  // 2 · tokens · (the encoder's and head's weights): 2 · 128 · (12 · 7,077,888 + 1,536), plus the biases and GELU.
  EXPECT_GT(gemm, 2.0 * 128 * (12 * 7077888.0 + 1536));
  EXPECT_LT(gemm, 2.0 * 128 * (12 * 7077888.0 + 1536) * 1.01);
  EXPECT_NEAR(attn, 12 * 12 * 128.0 * 128 * (4 * 64 + 5), 1);
}

TEST(BertModel, BadInputIsRefusedWithItsReason) {
  Context ctx(Backend::Cpu);
  const auto c = test::tiny_bert();
  bert::BertQA model(c, ctx);
  auto refused = [&](const bert::BertBatch& b, const std::string& what) {
    try {
      (void)model.predict(b);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Input) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused(test::random_bert_batch(c, {65}, false, 1), "longer than the model's 64 positions");
  auto b = test::random_bert_batch(c, {5}, false, 1);
  b.ids[2] = 120;
  refused(b, "outside the vocabulary of 120");
  b = test::random_bert_batch(c, {5}, false, 1);
  b.type_ids[1] = 2;
  refused(b, "outside the model's 2 types");
  EXPECT_THROW(bert::BertQA(c, ctx, DType::BF16), Error) << "bf16 on the CPU";
  // A checkpoint of another shape: every problem named.
  test::TempDir dir;
  std::vector<float> w(10 * 64, 0.5f);
  write_safetensors(dir.file("m.safetensors"), {{"bert.embeddings.word_embeddings.weight", "F32", {10, 64}, w.data()}});
  try {
    model.load(SafetensorsFile::open(dir.file("m.safetensors")));
    ADD_FAILURE() << "a checkpoint of another shape was loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("misshapen"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
  }
}
