// CPU inference split by rows (ops::for_row_chunks, Network::infer_probs on the
// fast backend): each thread runs the whole network on its own rows, and every
// op it calls runs on that thread alone (a training forward runs a leading wide
// Linear split by columns first: ops::linear_joins_row_split). The probabilities
// must equal, bit for bit, those of the training forward followed by the
// softmax, and the plain reference backend's within fp32 rounding, for batches
// that divide and do not divide evenly.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "tests/cpu/test_engine_fixtures.hpp"
#include "roofline/engine/context.hpp"
#include "roofline/engine/model.hpp"
#include "roofline/engine/network.hpp"
#include "roofline/engine/ops.hpp"
#include "roofline/engine/rng.hpp"
#include "src/engine/cpu/parallel.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

using roofline::test::Threads;

TEST(InferChunks, RowRangesCoverTheBatchOncePerThread) {
  Threads t(4);
  for (std::int64_t n : {1, 7, 15, 16, 37, 128}) {
    std::mutex mu;
    std::vector<int> seen(static_cast<size_t>(n), 0);
    int calls = 0;
    bool nested_parallel = false;
    fast::for_row_chunks(n, 4, 0.0, [&](std::int64_t r0, std::int64_t r1) {
      // An op inside a chunk must not open a team of its own.
      int team = 0;
      fast::parallel_for(8, 4, [&](std::int64_t) {
#pragma omp atomic
        ++team;
      });
      std::lock_guard<std::mutex> lock(mu);
      ++calls;
      if (omp_in_parallel() && team != 8) nested_parallel = true;
      for (std::int64_t r = r0; r < r1; ++r) ++seen[static_cast<size_t>(r)];
    });
    for (std::int64_t r = 0; r < n; ++r) EXPECT_EQ(seen[static_cast<size_t>(r)], 1) << "n " << n << " row " << r;
    EXPECT_EQ(calls, std::max<std::int64_t>(1, std::min<std::int64_t>(4, n / 4))) << "n " << n;
    EXPECT_FALSE(nested_parallel);
  }
}

TEST(InferChunks, HeavyRowsGetUpToFourRangesPerThread) {
  Threads t(4);
  for (std::int64_t n : {1, 3, 7, 16, 37, 128}) {
    std::mutex mu;
    std::vector<int> seen(static_cast<size_t>(n), 0);
    int calls = 0;
    fast::for_row_chunks(n, 4, fast::kHeavyRowFlops, [&](std::int64_t r0, std::int64_t r1) {
      std::lock_guard<std::mutex> lock(mu);
      ++calls;
      for (std::int64_t r = r0; r < r1; ++r) ++seen[static_cast<size_t>(r)];
    });
    for (std::int64_t r = 0; r < n; ++r) EXPECT_EQ(seen[static_cast<size_t>(r)], 1) << "n " << n << " row " << r;
    EXPECT_EQ(calls, std::min<std::int64_t>(4 * fast::kHeavyRowChunksPerThread, n)) << "n " << n;
  }
}

TEST(InferChunks, InferProbsEqualsTheTrainingForwardAndSoftmax) {
  Threads t(4);
  Context ctx(Backend::Cpu);
  for (const char* name : {"simple-mlp", "simple-cnn", "ece408"})
    for (const std::int64_t batch : {1, 16, 37}) {
      SCOPED_TRACE(::testing::Message() << name << " batch " << batch);
      const auto model = make_model(name);
      Network net(*model, ctx, batch);
      net.set_params(model->init_params(11));
      Rng rng(static_cast<std::uint64_t>(batch) + 3);
      std::int64_t per = 1;
      for (std::int64_t d : model->input_shape()) per *= d;
      for (std::int64_t i = 0; i < batch * per; ++i) net.input()[i] = rng.normal();
      const std::int64_t n = batch * model->classes();
      std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n + 64), NAN);
      net.forward(batch, true);
      ops::softmax_forward(ctx, {batch, model->classes()}, want.data(), net.logits());
      std::fill(net.logits(), net.logits() + n, NAN);  // the chunks must write every logit again
      net.infer_probs(batch, got.data());
      for (std::int64_t i = n; i < n + 64; ++i) ASSERT_TRUE(std::isnan(got[size_t(i)])) << "guard " << i - n;
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[size_t(i)], want[size_t(i)]) << "probability " << i;
    }
}

TEST(InferChunks, WideFirstLinearRunsBeforeTheRowSplit) {
  Context cpu(Backend::Cpu), ref(Backend::CpuRef);
  EXPECT_FALSE(ops::linear_joins_row_split(cpu, 784));  // simple-mlp's fc1: split by columns first
  EXPECT_TRUE(ops::linear_joins_row_split(cpu, 256));
  EXPECT_TRUE(ops::linear_joins_row_split(ref, 784));  // only the fast backend splits
}

TEST(InferChunks, InferProbsAndTheTrainingForwardMatchTheReferenceBackend) {
  Threads t(4);
  Context cpu(Backend::Cpu), ref(Backend::CpuRef);
  for (const char* name : {"simple-mlp", "simple-cnn"})
    for (const std::int64_t batch : {37, 128}) {
      SCOPED_TRACE(::testing::Message() << name << " batch " << batch);
      const auto model = make_model(name);
      Network fast_net(*model, cpu, batch), ref_net(*model, ref, batch);
      const auto params = model->init_params(5);
      fast_net.set_params(params);
      ref_net.set_params(params);
      Rng rng(static_cast<std::uint64_t>(batch) + 9);
      std::int64_t per = 1;
      for (std::int64_t d : model->input_shape()) per *= d;
      for (std::int64_t i = 0; i < batch * per; ++i) fast_net.input()[i] = ref_net.input()[i] = rng.normal();
      const std::int64_t n = batch * model->classes();
      std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n), NAN);
      ref_net.forward(batch, true);  // first: no activation left by an earlier pass
      fast_net.forward(batch, true);
      for (std::int64_t i = 0; i < n; ++i) {
        const float w = ref_net.logits()[i], g = fast_net.logits()[i];
        ASSERT_NEAR(g, w, 1e-4f + 1e-4f * std::fabs(w)) << "logit " << i;
      }
      ref_net.infer_probs(batch, want.data());
      fast_net.infer_probs(batch, got.data());
      for (std::int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(got[size_t(i)], want[size_t(i)], 1e-5f + 1e-4f * std::fabs(want[size_t(i)])) << "probability " << i;
    }
}

// Network::prepare_inference: every Linear layer's weights transposed, read by
// the inference forwards until the parameters change. The probabilities agree
// with the dot-product path to fp32 rounding (not bit for bit: simple-mlp's
// differ somewhere, which shows the copies are read); after set_params, an SGD
// step or a write through param_data() the copies are dropped, and the network
// gives bit for bit what a network that never had copies gives.
TEST(InferChunks, PreparedCopiesAreReadUntilTheParametersChange) {
  Threads t(4);
  Context ctx(Backend::Cpu);
  // Whether the copies' path rounds differently at a batch size depends on the CPU's vector width and
  // the row split: over the three batches, at least one must differ.
  bool mlp_differs = false;
  for (const char* name : {"simple-mlp", "simple-cnn", "ece408"})
    for (const std::int64_t batch : {1, 16, 37}) {
      SCOPED_TRACE(::testing::Message() << name << " batch " << batch);
      const auto model = make_model(name);
      Network net(*model, ctx, batch), plain(*model, ctx, batch);
      net.set_params(model->init_params(5));
      plain.set_params(model->init_params(5));
      Rng rng(static_cast<std::uint64_t>(batch) + 9);
      std::int64_t per = 1;
      for (std::int64_t d : model->input_shape()) per *= d;
      for (std::int64_t i = 0; i < batch * per; ++i) net.input()[i] = plain.input()[i] = rng.normal();
      const std::int64_t n = batch * model->classes();
      std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
      auto both = [&] {
        plain.infer_probs(batch, want.data());
        net.infer_probs(batch, got.data());
      };
      ASSERT_TRUE(net.prepare_inference());
      EXPECT_TRUE(net.inference_prepared());
      both();
      bool differs = false;
      for (std::int64_t i = 0; i < n; ++i) {
        ASSERT_NEAR(got[size_t(i)], want[size_t(i)], 2e-6 + 1e-5 * want[size_t(i)]) << "probability " << i;
        differs = differs || got[size_t(i)] != want[size_t(i)];
      }
      if (std::string(name) == "simple-mlp") mlp_differs = mlp_differs || differs;

      auto expect_dropped = [&](const char* how) {
        EXPECT_FALSE(net.inference_prepared()) << how;
        both();
        for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[size_t(i)], want[size_t(i)]) << how << ", probability " << i;
      };
      const std::vector<float> other = model->init_params(6);
      net.set_params(other);
      plain.set_params(other);
      expect_dropped("after set_params");

      ASSERT_TRUE(net.prepare_inference());
      const ops::SgdConfig cfg{0.05f, 0.9f, 0.0f};
      std::vector<std::int32_t> labels(static_cast<size_t>(batch));
      for (std::int64_t i = 0; i < batch; ++i) labels[size_t(i)] = static_cast<std::int32_t>(i % model->classes());
      for (Network* x : {&net, &plain}) {
        x->forward(batch, true);
        double sum = 0;
        ops::LossStats st;
        st.loss_sum = &sum;
        ops::cross_entropy(ctx, {batch, model->classes()}, x->dlogits(), x->logits(), labels.data(),
                           1.0f / static_cast<float>(batch), st);
        x->backward_sgd(batch, cfg);
      }
      expect_dropped("after backward_sgd");

      ASSERT_TRUE(net.prepare_inference());
      for (Network* x : {&net, &plain}) x->sgd_step(cfg);
      expect_dropped("after sgd_step");

      ASSERT_TRUE(net.prepare_inference());
      for (Network* x : {&net, &plain}) x->param_data()[0] += 0.25f;
      expect_dropped("after a write through param_data()");
    }
  EXPECT_TRUE(mlp_differs) << "the transposed copies were not read (simple-mlp's probabilities were bit-equal at "
                              "every batch size)";
}

}  // namespace
