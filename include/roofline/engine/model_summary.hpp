// `roofline summary MODEL`: a model's layers on paper (output shape,
// parameters, the exact per-pass FLOPs and bytes the engine's kernels do) and,
// beside them, the counts other people publish for the same model, each
// labelled with its convention and what it leaves out: multiply-adds as fvcore,
// ptflops and torchinfo count them, FLOPs = 2 × MACs, DeepSpeed's training
// step = 3 × forward, and seed 001's hand formulas. Nothing is measured.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "roofline/core/report.hpp"
#include "roofline/engine/cost.hpp"
#include "roofline/engine/precision.hpp"
#include "roofline/engine/tensor.hpp"

namespace roofline::engine {

// One layer as the summary shows it, and the facts about it that the other
// conventions count from (all per sample).
struct SummaryLayer {
  enum class Kind { Conv, Linear, BatchNorm, MaxPool, AvgPool, ReLU, Add, Flatten, Dropout, Embedding, LayerNorm,
                    Attention };
  std::string name, op;
  Kind kind = Kind::Flatten;
  Shape in, out;            // per sample
  std::int64_t params = 0;  // learnable
  PassCosts cost;           // the engine's, at the summary's batch and precision
  bool bias = false;        // Conv, Linear
  bool relu = false;        // ends in a ReLU (fused, or the layer itself)
  std::int64_t macs = 0;    // Conv, Linear: multiply-adds of the weights (no bias), per sample
  std::int64_t matmul_macs = 0;  // Attention: multiply-adds of Q·Kᵀ and P·V, per sample
  std::int64_t bias_adds = 0;  // Conv, Linear with a bias: one add per output element, per sample
  std::int64_t seed001 = 0;    // Conv: 2·Cin·OH·OW·Cout·K²; Linear: 2·in·out + out; others 0 (seed 001, §4)
};

// One way of counting a model's FLOPs, for the batch of the summary.
struct Convention {
  std::string id, label;
  std::int64_t forward = 0;
  std::int64_t train = -1;  // the training step where the convention defines one; −1: it does not
  std::string leaves_out;
};

struct ModelSummary {
  std::string model, description;
  Precision precision = Precision::FP32;
  std::int64_t batch = 1;
  std::int64_t seq = 0;  // bert-base: tokens per sequence (0 for the image models)
  std::vector<SummaryLayer> layers;
  PassCosts total;              // the sum of the layers' costs
  std::int64_t params = 0;      // learnable, as sum(p.numel() for p in model.parameters())
  std::vector<Convention> conventions;
};

// The models the summary knows: the small Sequential models, then the graph networks.
std::vector<std::string> summary_model_names();
// Throws Error(Usage) for an unknown model (naming the known ones), a batch
// below 1, and a precision other than fp32 for a small model (they run in fp32
// only). `seq`: bert-base's tokens per sequence (1 to 512).
ModelSummary summarize_model(const std::string& name, std::int64_t batch, Precision precision,
                             std::int64_t seq = 128);
// The per-layer table ("summary.layers") and the conventions ("summary.conventions").
void add_summary_tables(Report& report, const ModelSummary& s);

}  // namespace roofline::engine
