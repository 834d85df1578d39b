// BERT test fixtures shared by the CPU and GPU suites: a tiny configuration
// (the one peers/pytorch_bert.py golden --size tiny builds: vocabulary 120,
// hidden 64, 2 layers, 4 heads of 16, intermediate 128, 64 positions), a
// random padded batch, the logits at the real tokens only (padding rows are
// computed and ignored, as Hugging Face does), and the golden fixture's reader.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "roofline/engine/bert.hpp"
#include "roofline/engine/rng.hpp"
#include "roofline/engine/safetensors.hpp"

namespace roofline::test {

inline engine::bert::BertConfig tiny_bert() {
  engine::bert::BertConfig c;
  c.vocab_size = 120, c.hidden = 64, c.layers = 2, c.heads = 4, c.intermediate = 128, c.max_positions = 64;
  return c;
}

// Sequences of the given lengths: random ids in [1, vocab), the last two thirds typed 1.
inline engine::bert::BertBatch random_bert_batch(const engine::bert::BertConfig& c, const std::vector<int>& lens,
                                                 bool packed, std::uint64_t seed) {
  engine::Rng r(seed);
  std::vector<std::vector<std::int32_t>> ids, types;
  for (int n : lens) {
    ids.emplace_back();
    types.emplace_back();
    for (int t = 0; t < n; ++t) {
      ids.back().push_back(static_cast<std::int32_t>(1 + r.below(static_cast<std::uint64_t>(c.vocab_size - 1))));
      types.back().push_back(t >= n / 3 ? 1 : 0);
    }
  }
  return engine::bert::BertBatch::make(ids, types, packed);
}

// (start, end) logits of each sequence's real tokens, in order: comparable between padded and packed batches.
inline std::vector<float> real_logits(const engine::bert::BertBatch& b, const std::vector<float>& logits) {
  std::vector<float> v;
  for (std::int64_t s = 0; s < b.batch; ++s)
    for (std::int64_t t = 0; t < b.len[size_t(s)]; ++t)
      for (int k = 0; k < 2; ++k) v.push_back(logits[size_t((b.start[size_t(s)] + t) * 2 + k)]);
  return v;
}

// golden.safetensors of peers/pytorch_bert.py golden: the batch and the logits (start, end) in `precision`
// (fp64, fp32, bf16) at the real tokens, in real_logits' order.
struct BertGolden {
  engine::bert::BertBatch batch;
  std::vector<double> logits;
};
inline BertGolden read_bert_golden(const std::string& file, const std::string& precision) {
  const auto f = engine::SafetensorsFile::open(file);
  const auto ids = f.read_i64("ids"), types = f.read_i64("type_ids"), lens = f.read_i64("lengths");
  const std::int64_t longest = f.info("ids").shape.at(1);
  std::vector<std::vector<std::int32_t>> id, ty;
  for (size_t b = 0; b < lens.size(); ++b) {
    id.emplace_back();
    ty.emplace_back();
    for (std::int64_t t = 0; t < lens[b]; ++t) {
      id.back().push_back(static_cast<std::int32_t>(ids[b * size_t(longest) + size_t(t)]));
      ty.back().push_back(static_cast<std::int32_t>(types[b * size_t(longest) + size_t(t)]));
    }
  }
  BertGolden g{engine::bert::BertBatch::make(id, ty, false), {}};
  const auto start = f.read_f32("start_" + precision), end = f.read_f32("end_" + precision);
  for (size_t b = 0; b < lens.size(); ++b)
    for (std::int64_t t = 0; t < lens[b]; ++t) {
      g.logits.push_back(start[b * size_t(longest) + size_t(t)]);
      g.logits.push_back(end[b * size_t(longest) + size_t(t)]);
    }
  return g;
}

// train.safetensors of peers/pytorch_bert.py golden: the fine-tuning step's
// targets, loss, gradients (tiny: whole, "grad.NAME"; base: norm and first 256
// values), 3 AdamW steps' losses and PyTorch's own bf16 gradient error.
struct BertTrainGolden {
  std::vector<std::int32_t> start, end;
  double loss = 0;
  std::vector<std::pair<std::string, std::vector<double>>> grads;  // whole, or the first 256 values
  std::vector<double> norms;                                        // base only: each gradient's L2 norm
  std::vector<double> losses64, losses32;
  double torch_bf16_err = -1;  // -1: not written (a CPU golden run)
};
inline BertTrainGolden read_bert_train_golden(const std::string& file, const engine::bert::BertConfig& cfg) {
  const auto f = engine::SafetensorsFile::open(file);
  BertTrainGolden g;
  for (auto v : f.read_i64("start_positions")) g.start.push_back(static_cast<std::int32_t>(v));
  for (auto v : f.read_i64("end_positions")) g.end.push_back(static_cast<std::int32_t>(v));
  auto f64 = [&](const std::string& n) {
    const auto v = f.read_f32(n);
    return std::vector<double>(v.begin(), v.end());
  };
  g.loss = f64("loss_fp64").at(0);
  g.losses64 = f64("losses_fp64");
  g.losses32 = f64("losses_fp32");
  for (const auto& t : engine::bert::bert_qa_tensors(cfg)) {
    if (f.contains("grad." + t.name)) {
      g.grads.emplace_back(t.name, f64("grad." + t.name));
    } else {
      g.grads.emplace_back(t.name, f64("ghead." + t.name));
      g.norms.push_back(f64("gnorm." + t.name).at(0));
    }
  }
  if (f.contains("bf16_grad_rel_err")) g.torch_bf16_err = f64("bf16_grad_rel_err").at(0);
  return g;
}

}  // namespace roofline::test
