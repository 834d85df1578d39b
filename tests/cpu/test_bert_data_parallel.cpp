// BERT fine-tuning data-parallel (issue 25) on CPU ranks: two ranks of a
// ThreadGroup, each a BertQA on half of a batch of four sequences, follow one
// model on the whole batch: the same losses (the mean of the two halves'
// means) and averaged gradients to fp32 rounding, the ranks bit-equal; without the
// sync they drift apart. BERT's buckets tile its parameters (checked inside).
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "roofline/core/error.hpp"
#include "roofline/engine/data_parallel.hpp"
#include "tests/support/bert_fixture.hpp"
#include "tests/support/numeric.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

struct Seqs {
  std::vector<std::vector<std::int32_t>> ids, types;
  std::vector<std::int32_t> start, end;
};

Seqs sequences(const bert::BertConfig& c, const std::vector<int>& lens, std::uint64_t seed) {
  Rng r(seed);
  Seqs s;
  for (int n : lens) {
    s.ids.emplace_back();
    s.types.emplace_back();
    for (int t = 0; t < n; ++t) {
      s.ids.back().push_back(static_cast<std::int32_t>(1 + r.below(static_cast<std::uint64_t>(c.vocab_size - 1))));
      s.types.back().push_back(t >= n / 3 ? 1 : 0);
    }
    s.start.push_back(static_cast<std::int32_t>(r.below(static_cast<std::uint64_t>(n))));
    s.end.push_back(static_cast<std::int32_t>(r.below(static_cast<std::uint64_t>(n))));
  }
  return s;
}

Seqs slice(const Seqs& s, size_t first, size_t n) {
  Seqs o;
  o.ids.assign(s.ids.begin() + long(first), s.ids.begin() + long(first + n));
  o.types.assign(s.types.begin() + long(first), s.types.begin() + long(first + n));
  o.start.assign(s.start.begin() + long(first), s.start.begin() + long(first + n));
  o.end.assign(s.end.begin() + long(first), s.end.begin() + long(first + n));
  return o;
}

struct RankRun {
  std::vector<float> losses;
  std::vector<std::vector<float>> params, grads;  // after the last step; grads: what AdamW read (averaged)
};

RankRun train(const bert::BertConfig& c, Backend b, const Seqs& s, dist::GradSync* sync, std::uint64_t init,
              int steps) {
  Context ctx(b);
  bert::BertQA model(c, ctx);
  model.init_random(init);
  bert::BertTrainConfig tc;
  tc.dropout = false;
  tc.adamw.lr = 1e-3;
  model.enable_training(tc);
  if (sync) model.set_grad_sync(sync);
  model.stage(bert::BertBatch::make(s.ids, s.types, false));
  model.stage_targets(s.start, s.end);
  RankRun r;
  for (int i = 0; i < steps; ++i) {
    model.train_step();
    r.losses.push_back(model.last_loss());
  }
  r.params = model.parameters();
  r.grads = model.gradients();
  return r;
}

double norm(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += double(x) * x;
  return std::sqrt(s);
}

double diff(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return std::sqrt(s);
}

}  // namespace

TEST(BertDataParallel, TwoRanksOnHalvesFollowOneModelOnTheWholeBatch) {
  const auto c = test::tiny_bert();
  // Each half holds a sequence of the longest length, so that both pad to the whole batch's length: the span
  // loss's softmax runs over the padded positions (as Hugging Face's), so the padding is part of the model.
  const Seqs all = sequences(c, {12, 5, 9, 12}, 3);
  for (Backend b : {Backend::CpuRef, Backend::Cpu}) {
    SCOPED_TRACE(to_string(b));
    const int steps = 3;
    const RankRun single = train(c, b, all, nullptr, 11, steps);
    dist::ThreadGroup group(2);
    auto m0 = group.member(0), m1 = group.member(1);
    RankRun r0, r1;
    // Rank 1 starts from other weights: the sync's broadcast makes them rank 0's.
    std::thread t1([&] { r1 = train(c, b, slice(all, 2, 2), m1.get(), 99, steps); });
    r0 = train(c, b, slice(all, 0, 2), m0.get(), 11, steps);
    t1.join();
    for (int i = 0; i < steps; ++i) {
      const double mean = (r0.losses[size_t(i)] + r1.losses[size_t(i)]) / 2;
      EXPECT_NEAR(mean, single.losses[size_t(i)], 1e-5 * std::max(1.0, std::abs(mean))) << "step " << i;
    }
    ASSERT_EQ(r0.params.size(), single.params.size());
    // The averaged gradients of the last step against the whole batch's, per tensor, by their L2 error
    // against the tensor's norm plus a floor (a thousandth of the largest tensor's): the QA head's bias and the
    // last LayerNorm's bias have a zero gradient in exact arithmetic (the span softmax sums to one), so theirs
    // is rounding alone, which AdamW then magnifies to about its step size. Their parameters are not compared.
    double largest = 0;
    for (const auto& g : single.grads) largest = std::max(largest, norm(g));
    for (size_t t = 0; t < single.params.size(); ++t) {
      EXPECT_EQ(r1.params[t], r0.params[t]) << "tensor " << t;
      EXPECT_EQ(r1.grads[t], r0.grads[t]) << "tensor " << t;
      EXPECT_LT(diff(r0.grads[t], single.grads[t]), 1e-4 * norm(single.grads[t]) + 1e-6 * largest) << "tensor " << t;
    }
    // Without the sync the two halves train apart.
    const RankRun alone = train(c, b, slice(all, 2, 2), nullptr, 11, steps);
    double apart = 0;
    for (size_t j = 0; j < alone.params.back().size(); ++j)
      apart = std::max(apart, double(std::fabs(alone.params.back()[j] - r0.params.back()[j])));
    EXPECT_GT(apart, 1e-4);
  }
}

TEST(BertDataParallel, TheSyncNeedsTraining) {
  Context ctx(Backend::CpuRef);
  bert::BertQA model(test::tiny_bert(), ctx);
  model.init_random(1);
  dist::ThreadGroup group(1);
  auto m = group.member(0);
  EXPECT_THROW(model.set_grad_sync(m.get()), Error);
}
