// The small models have one definition, a LayerGraph: the Sequential engine
// (Model, Network: the fused fp32 paths) is built from it, and GraphNetwork
// runs the same graphs. Both engines give the same logits and gradients from
// the same weights; the Sequential block packs and unpacks the graph's state;
// a graph that is not a chain is refused by the Sequential engine by name.
#include <gtest/gtest.h>

#include "roofline/core/error.hpp"
#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/model.hpp"
#include "tests/support/numeric.hpp"
#include "tests/support/sequential_ref.hpp"

using namespace roofline;
using namespace roofline::engine;

TEST(GraphSmall, EverySmallModelRunsOnGraphNetworkAsOnTheSequentialEngine) {
  const std::int64_t batch = 5;
  for (const std::string& name : small_model_names())
    for (Backend b : {Backend::CpuRef, Backend::Cpu}) {
      SCOPED_TRACE(name + " on " + to_string(b));
      const LayerGraph g = make_graph_model(name);
      const auto state = g.init_params(21);
      const auto x = test::random_input(g.input_shape(), batch, 5);
      const auto y = test::random_labels(batch, g.classes(), 6);
      const test::SequentialStep ref = test::sequential_step(g, state, x, y, batch);

      Context ctx(b);
      GraphNetwork net(g, ctx, batch);
      EXPECT_EQ(net.format(), default_format(b, Precision::FP32));
      net.load_state(state);
      net.set_batch(x, y, batch);
      net.forward(batch, true);
      net.loss_forward(batch);
      net.backward(batch);
      EXPECT_LT(test::max_rel_error(net.logits(batch), ref.logits), 1e-5);
      const auto grads = net.grads();
      ASSERT_EQ(grads.size(), ref.grads.size());
      for (size_t t = 0; t < grads.size(); ++t)
        EXPECT_LT(test::max_rel_error(grads[t], ref.grads[t]), 1e-4) << g.params()[t].name;
    }
}

TEST(GraphSmall, TheSequentialBlockPacksTheGraphsStateWithTorchsNames) {
  const auto model = make_model("simple-cnn");
  const Model& m = *model;
  const auto& params = m.graph().params();
  ASSERT_EQ(params.size(), 8u);
  EXPECT_EQ(params[0].name, "conv1.weight");
  EXPECT_EQ(params[7].name, "fc2.bias");
  const auto state = m.graph().init_params(3);
  const std::vector<float> block = m.pack(state);
  EXPECT_EQ(block, m.init_params(3));  // one initialisation: the graph's
  EXPECT_EQ(m.unpack(block), state);
  EXPECT_EQ(m.learnable_count(), m.graph().learnable_count());

  auto bad = state;
  bad[4].pop_back();  // fc1.weight
  try {
    (void)m.pack(bad);
    FAIL() << "a short tensor was packed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("fc1.weight"), std::string::npos) << e.what();
  }
}

TEST(GraphSmall, TheSequentialEngineRefusesWhatIsNotAChainByName) {
  try {
    (void)Model(make_resnet18(10, {3, 32, 32}));
    FAIL() << "ResNet-18 became a Sequential model";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("bn1 (batchnorm2d)"), std::string::npos) << e.what();
    EXPECT_NE(e.hint().find("GraphNetwork"), std::string::npos) << e.hint();
  }
  try {
    (void)make_model("alexnet");
    FAIL() << "make_model took a network";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("alexnet is a network"), std::string::npos) << e.what();
  }
  EXPECT_EQ(make_model("cnn")->name(), "simple-cnn");
  EXPECT_THROW((void)make_graph_model("resnet-1000"), Error);
}
