// BertQA's device state (roofline/engine/bert.hpp), shared by its forward
// (bert_model.cpp) and its fine-tuning step (bert_train.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "roofline/engine/bert.hpp"
#include "roofline/engine/data_parallel.hpp"
#include "roofline/engine/graph.hpp"
#include "roofline/engine/ops.hpp"

namespace roofline::engine::bert {

// Parameters live in one flat buffer so that one AdamW call updates them all:
// the tensors read in fp32 (embedding tables, LayerNorms) first, then the
// Linear layers' weights and biases, each layer's query, key and value
// weights adjacent (one stacked GEMM weight) and their biases adjacent.
struct DevLinear {
  std::int64_t w = 0, b = 0;  // offsets of the weight (out, in) and bias (out) in the flat parameters
  ops::LinearShape shape;
};
struct DevLayer {
  DevLinear qkv, attn_out, inter, out;
  std::int64_t ln1_g = 0, ln1_b = 0, ln2_g = 0, ln2_b = 0;
};
// One encoder layer's activations (dtype) and statistics (fp32; null in inference).
struct Acts {
  void *xin = nullptr, *qkv = nullptr, *ctx = nullptr, *a = nullptr, *x1 = nullptr, *pre = nullptr,
       *act = nullptr, *o = nullptr, *xout = nullptr;
  float *lse = nullptr, *mean1 = nullptr, *rstd1 = nullptr, *mean2 = nullptr, *rstd2 = nullptr;
};

struct BertQA::Impl {
  std::vector<std::int64_t> offset;  // of each state_dict tensor in the flat parameters
  std::int64_t n_params = 0, n_fp32 = 0;  // all of them; the ones read in fp32, first
  Tensor p32;   // fp32: every parameter (training, fp32 models), else the first n_fp32
  Tensor plow;  // every parameter in a 16-bit dtype (what the GEMMs read); undefined for fp32 models
  std::int64_t word = 0, pos = 0, type = 0, emb_g = 0, emb_b = 0;
  std::vector<DevLayer> layers;
  DevLinear qa;
  // Data-parallel (set_grad_sync): the buckets as [first, end) of the flat
  // gradients, in the order backward completes them.
  dist::GradSync* sync = nullptr;
  std::vector<std::pair<std::int64_t, std::int64_t>> sync_ranges;
  // Activations for `capacity` tokens: one set shared by every layer
  // (inference), or one per layer (training).
  std::int64_t capacity = 0;
  std::vector<Tensor> buffers;  // everything sized by the batch
  std::vector<Acts> acts;
  void *emb = nullptr, *logits = nullptr;
  float *mean0 = nullptr, *rstd0 = nullptr;
  Tensor ids, type_ids, positions, start, len;
  BertBatch staged;
  StepGraph graph;  // forward() of the staged batch, captured
  // Training.
  bool training = false;
  BertTrainConfig train;
  Tensor grad, m, v, step, loss, start_pos, end_pos;
  void *dx = nullptr, *dsum = nullptr, *dtmp = nullptr, *dctx = nullptr, *dqkv = nullptr, *dact = nullptr,
       *dlogits = nullptr;
  bool targets_staged = false;
  StepGraph train_graph;

  float* f32(std::int64_t off) const { return p32.f32() + off; }
  float* g32(std::int64_t off) const { return grad.f32() + off; }
  const void* low(std::int64_t off, DType dt) const {
    return dt == DType::F32 ? static_cast<const void*>(p32.f32() + off)
                            : static_cast<const char*>(plow.raw()) + off * 2;
  }
};

}  // namespace roofline::engine::bert
