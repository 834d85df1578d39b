// A network as a graph of layers (AlexNet, ResNet-18, and the networks after
// them): values are tensors with a per-sample shape, nodes are layers with
// their parameters, and a value may feed several nodes (ResNet's shortcut),
// so its gradient is the sum of what each consumer sends back. This header
// is the definition only (shapes, parameters with torchvision's names and
// initialisation, costs); GraphNetwork (graph_network.hpp) instantiates it on
// a Context with every buffer planned once.
//
// Fusions are part of the definition, as the models write them: a
// convolution or Linear layer may end in a ReLU, and a BatchNorm2d may add a
// residual and end in a ReLU (torchvision's `out = relu(bn2(conv2(x)) +
// identity)`), so a step runs one kernel where PyTorch eager runs three.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "roofline/engine/cost.hpp"
#include "roofline/engine/ops.hpp"
#include "roofline/engine/ops_cnn.hpp"
#include "roofline/engine/tensor.hpp"

namespace roofline::engine {

enum class NodeOp { Conv2d, BatchNorm2d, MaxPool2d, AdaptiveAvgPool2d, Add, ReLU, Flatten, Dropout, Linear };
const char* to_string(NodeOp op);  // "conv2d", "batchnorm2d", ...

// How a parameter starts, as torchvision initialises it.
enum class ParamInit {
  UniformFanIn,     // U(±1/√fan_in): PyTorch's default for Conv2d and Linear weights and biases
  NormalFanOutRelu, // N(0, 2/fan_out): kaiming_normal_(mode="fan_out", nonlinearity="relu"), ResNet's convolutions
  Ones,             // BatchNorm weight, running_var
  Zeros,            // BatchNorm bias, running_mean
};

// A tensor of the model's state_dict: a learnable parameter, or a buffer
// (BatchNorm's running statistics). Shapes in torch's layout: a convolution's
// weight is (k, c/groups, r, s) whatever the memory format the network runs in.
struct GraphParam {
  std::string name;  // "layer1.0.conv1.weight"
  Shape shape;
  bool learnable = true;
  ParamInit init = ParamInit::UniformFanIn;
  std::int64_t fan_in = 0, fan_out = 0;  // of the layer, for the initialisation
};

struct GraphValue {
  Shape shape;                 // per sample: (c, h, w) or (features)
  int producer = -1;           // node index; −1 for the network's input
  std::vector<int> consumers;  // node indices, in execution order
};

struct GraphNode {
  std::string name;  // torchvision's module path: "layer1.0.conv1", "features.3"
  NodeOp op = NodeOp::Flatten;
  std::vector<int> inputs;  // value ids; a BatchNorm2d's or Add's second input is the residual
  int output = -1;
  ops::Activation act = ops::Activation::None;  // fused at the end
  // Conv2d: k output channels, kernel × kernel, stride, pad, groups, bias.
  // MaxPool2d: kernel, stride, pad. AdaptiveAvgPool2d: oh × ow. Linear: k outputs, bias. Dropout: p.
  std::int64_t k = 0, kernel = 0, stride = 1, pad = 0, groups = 1, oh = 1, ow = 1;
  bool bias = false;
  float p = 0.5f;                    // Dropout
  float eps = 1e-5f, momentum = 0.1f;  // BatchNorm2d
  std::vector<int> params;            // indices into LayerGraph::params(), state_dict order
};

// The per-pass cost of one node at a batch size, and what it is.
struct NodeInfo {
  std::string name, op;
  Shape in, out;            // per sample (the first input)
  std::int64_t params = 0;  // learnable parameters
  PassCosts cost;
};

class LayerGraph {
 public:
  LayerGraph(std::string name, Shape input, std::int64_t classes);

  // Builders; each returns the new node's output value. Names are torchvision's
  // module paths, so parameters get its state_dict names.
  int input() const { return 0; }
  int conv2d(const std::string& name, int x, std::int64_t k, std::int64_t kernel, std::int64_t stride,
             std::int64_t pad, bool bias, ops::Activation act = ops::Activation::None,
             ParamInit init = ParamInit::UniformFanIn, std::int64_t groups = 1);
  // BatchNorm2d: out = act(bn(x) + residual) (residual −1: none).
  int batchnorm2d(const std::string& name, int x, ops::Activation act = ops::Activation::None, int residual = -1);
  int maxpool2d(const std::string& name, int x, std::int64_t kernel, std::int64_t stride, std::int64_t pad = 0);
  int adaptive_avgpool2d(const std::string& name, int x, std::int64_t oh, std::int64_t ow);
  int add(const std::string& name, int a, int b, ops::Activation act = ops::Activation::None);
  int relu(const std::string& name, int x);
  int flatten(const std::string& name, int x);
  int dropout(const std::string& name, int x, float p);
  int linear(const std::string& name, int x, std::int64_t out, bool bias = true,
             ops::Activation act = ops::Activation::None);
  // The logits (classes) value; checks its shape.
  void set_output(int v);
  // Moves the parameters whose names start with `prefix` to just after the
  // last one starting with `anchor`, so that params() follows the model's
  // state_dict order where a branch is built before a layer torch registers
  // first (ResNet's downsample, registered after bn2, feeds it).
  void move_params_after(const std::string& prefix, const std::string& anchor);

  const std::string& name() const { return name_; }
  const Shape& input_shape() const { return values_[0].shape; }
  std::int64_t classes() const { return classes_; }
  int output() const { return output_; }
  const std::vector<GraphNode>& nodes() const { return nodes_; }
  const std::vector<GraphValue>& values() const { return values_; }
  const std::vector<GraphParam>& params() const { return params_; }
  std::int64_t learnable_count() const;  // as sum(p.numel() for p in model.parameters())
  // Every state_dict tensor drawn from `seed` as torchvision initialises it
  // (tensor i from its own sub-stream), each in torch's layout, in params() order.
  std::vector<std::vector<float>> init_params(std::uint64_t seed) const;

  // Per node, the cost of each pass at batch `batch` in `dtype` (activations'
  // width; parameters and their gradients fp32).
  std::vector<NodeInfo> describe(std::int64_t batch, DType dtype = DType::F32) const;
  PassCosts cost(std::int64_t batch, DType dtype = DType::F32) const;
  std::string description;  // one line for people

 private:
  int add_node(GraphNode node, Shape out_shape);
  int add_param(const std::string& name, Shape shape, bool learnable, ParamInit init, std::int64_t fan_in,
                std::int64_t fan_out);
  const Shape& shape_of(int v) const;
  std::string name_;
  std::int64_t classes_;
  std::vector<GraphNode> nodes_;
  std::vector<GraphValue> values_;
  std::vector<GraphParam> params_;
  int output_ = -1;
};

// The op shapes of a node at batch n (activations in `format` and `dtype`);
// the one place a node's fields become an op's arguments.
ops::Conv2dShape conv_shape(const GraphNode& node, const Shape& in, std::int64_t n, MemoryFormat format, DType dtype,
                            bool tf32);
ops::LinearShape linear_shape(const GraphNode& node, const Shape& in, std::int64_t n, DType dtype, bool tf32);
ops::BatchNormShape batchnorm_shape(const GraphNode& node, const Shape& in, std::int64_t n, MemoryFormat format,
                                    DType dtype);
ops::Pool2dShape maxpool_shape(const GraphNode& node, const Shape& in, std::int64_t n, MemoryFormat format, DType dtype);
ops::AvgPoolShape avgpool_shape(const GraphNode& node, const Shape& in, std::int64_t n, MemoryFormat format,
                                DType dtype);

// Inference: which convolutions take the BatchNorm2d after them into their
// weights (graph_fold.cpp). Per node: for a Conv2d without an activation whose
// output feeds only a BatchNorm2d (as the input it normalises, not as a
// residual), that BatchNorm's node index, and for that BatchNorm the Conv2d's;
// −1 for every other node. ResNet-18: all 20 convolutions; AlexNet: none.
std::vector<int> batchnorm_folds(const LayerGraph& g);
// The inference forward's cost at `batch` (activations in `dtype`): BatchNorm
// with running statistics (BatchNormShape::eval_cost), and with `fold` each
// folded pair as it runs: the convolution with a bias (and the BatchNorm's
// ReLU when it adds no residual), then the residual add (and ReLU) where it does.
OpCost inference_cost(const LayerGraph& g, std::int64_t batch, DType dtype, bool fold);
// The same per node (the folded convolution carries the pair's work; its
// BatchNorm only the residual add; a dropout nothing), for the per-layer tables.
std::vector<OpCost> inference_node_costs(const LayerGraph& g, std::int64_t batch, DType dtype, bool fold);

// The models of the engine, each defined once here. The course lab's small
// models (seed 000 §2.1, 1×28×28 Fashion-MNIST) and seed 002's ECE408 network
// (1×86×86) are chains of Conv2d, MaxPool2d, Flatten and Linear layers; the
// Sequential engine (model.hpp, network.hpp) runs them with its fused fp32
// paths, and GraphNetwork runs them too, in every precision.
LayerGraph make_simple_mlp();
LayerGraph make_simple_cnn();
LayerGraph make_ece408();
// The networks of seeds 000 and 001, exactly as torchvision builds them
// (61,100,840 and 11,689,512 parameters at 1000 classes). `input` is the
// per-sample (3, h, w) shape: 224 × 224 for the real thing, smaller for the
// CPU suite's fixtures (AlexNet's adaptive pool keeps 6 × 6 whatever the input).
// `dropout`: AlexNet's two dropout probabilities (0 for the golden tests, whose masks cannot match torch's).
LayerGraph make_alexnet(std::int64_t classes = 1000, Shape input = {3, 224, 224}, float dropout = 0.5f);
LayerGraph make_resnet18(std::int64_t classes = 1000, Shape input = {3, 224, 224});
// The registry. make_graph_model: any model by name ("mlp" and "cnn" are
// short for simple-mlp and simple-cnn); throws Error(Usage) naming them all.
LayerGraph make_graph_model(const std::string& name);
std::vector<std::string> graph_model_names();  // every model
// The networks (alexnet, resnet18: ImageNet-shaped, the network bench,
// engine/net_bench.hpp) and the small models (simple-mlp, simple-cnn, ece408:
// Fashion-MNIST, trained to accuracy by engine/bench.hpp).
std::vector<std::string> network_names();
std::vector<std::string> small_model_names();
bool is_network(const std::string& name);
// The SGD learning rate of torchvision's ImageNet recipe for a graph model:
// 0.01 for AlexNet (without BatchNorm it diverges at 0.1 on real images:
// `roofline bench alexnet --data`, bf16, H200, 2026-11-27), 0.1 for ResNet-18.
// The bench trains with it, and the PyTorch peer with the same (--lrs).
float recipe_learning_rate(const std::string& name);

}  // namespace roofline::engine
