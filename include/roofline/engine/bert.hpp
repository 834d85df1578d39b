// BERT for extractive question answering, exactly as Hugging Face's
// BertForQuestionAnswering (bert-base-cased: 12 layers, hidden 768, 12 heads,
// intermediate 3072, 28,996 word pieces, 512 positions; no pooler): the
// engine's first transformer (engine part 3). Inference on any backend
// (fp32 on the CPU; fp32, tf32, bf16 and fp16 on the GPU). A layer is
//   qkv  = x · [Wq; Wk; Wv]ᵀ + b        one GEMM for the three projections
//   ctx  = attention(qkv)               fused, padding keys masked
//   x    = LN(ctx · Woᵀ + bo + x)
//   x    = LN(gelu(x · W1ᵀ + b1) · W2ᵀ + b2 + x)
// then logits = x · Wqaᵀ + bqa: start and end logits per token.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "roofline/engine/bert_text.hpp"
#include "roofline/engine/context.hpp"
#include "roofline/engine/graph.hpp"
#include "roofline/engine/layer_graph.hpp"
#include "roofline/engine/ops_optim.hpp"
#include "roofline/engine/ops_transformer.hpp"
#include "roofline/engine/safetensors.hpp"

namespace roofline::engine::dist {
class GradSync;
}

namespace roofline::engine::bert {

// A batch of token sequences as the model reads it (host side).
struct BertBatch {
  std::int64_t batch = 0;
  std::int64_t padded = 0;  // rows per sequence (padded batches); 0: packed, no padding
  std::int64_t tokens = 0;  // rows of the token matrix
  std::vector<std::int32_t> ids, type_ids, positions;  // (tokens)
  std::vector<std::int32_t> start, len;                // (batch)
  // Padded to the longest sequence (padding: id pad_id, type 0) or packed.
  static BertBatch make(const std::vector<std::vector<std::int32_t>>& ids,
                        const std::vector<std::vector<std::int32_t>>& type_ids, bool packed, std::int32_t pad_id = 0);
  std::int64_t longest() const;
  double attention_pairs() const;  // Σ_b queries_b · len_b
};

// Every layer's attention shape on a batch (its rows, lengths and query-key pairs).
ops::AttentionShape attention_shape(const BertConfig& c, const BertBatch& b, DType dtype, bool tf32 = false);

// The state_dict of BertForQuestionAnswering: names and shapes in torch's order.
std::vector<ExpectedTensor> bert_qa_tensors(const BertConfig& cfg);

// The fine-tuning step (engine part 3, item 4): AdamW over every parameter
// (torch.optim.AdamW over model.parameters(): weight decay on all of them),
// the span loss of BertForQuestionAnswering, dropout after the embeddings and
// after each layer's two output projections (hidden_dropout_prob, a
// counter-based mask per site and step). Attention-probability dropout is not
// applied (the fused attention has none): a peer compares with
// attention_probs_dropout_prob 0.
struct BertTrainConfig {
  ops::AdamWConfig adamw{3e-5, 0.9, 0.999, 1e-8, 0.01};
  bool dropout = true;  // false: the step of model.eval()'s graph (golden tests)
  std::uint64_t seed = 0;
};

class BertQA {
 public:
  // dtype: the activations' (F32 on the CPU backends); tf32 for F32 GEMMs on the GPU.
  BertQA(const BertConfig& cfg, Context& ctx, DType dtype = DType::F32, bool tf32 = false);
  ~BertQA();
  BertQA(const BertQA&) = delete;
  BertQA& operator=(const BertQA&) = delete;

  // Hugging Face's initialisation (weights N(0, 0.02), biases 0, LayerNorm 1 and
  // 0, the padding row of the word embeddings 0) from `seed`.
  void init_random(std::uint64_t seed);
  // A checkpoint's weights (model.safetensors of a BertForQuestionAnswering
  // folder); Error(Input) listing every missing, unexpected or misshapen tensor.
  void load(const SafetensorsFile& file);
  // Every parameter from values in torch's state_dict order and shapes
  // (Error Input naming the first misshapen tensor); AdamW's state kept.
  void set_parameters(const std::vector<std::vector<float>>& state);
  // Parameters as torch's state_dict (names, fp32 values), from the host copy.
  const std::vector<std::vector<float>>& host_params() const { return host_; }

  // Start and end logits (tokens, 2), fp32 on the host. Copies the batch in,
  // runs forward(), copies out and waits.
  std::vector<float> predict(const BertBatch& b);
  // The forward alone on a batch already staged (stage()): what a benchmark
  // times; enqueued on the context's stream, no host synchronisation.
  void stage(const BertBatch& b);
  void forward();
  // forward() captured as one CUDA graph on its first call after stage() and
  // replayed after (GPU contexts; run forward() once first, so that every
  // library plan exists before the capture). On the CPU: forward().
  void forward_graph();

  // ---- Fine-tuning (padded batches) ----
  // Allocates gradients, AdamW's state and every layer's saved activations;
  // from here on stage() keeps one activation set per layer.
  void enable_training(const BertTrainConfig& tc);
  bool training() const;
  // Data-parallel fine-tuning (engine/data_parallel.hpp): from now on backward
  // hands its gradients to `sync` in buckets as it finishes them (the QA
  // head, each encoder layer's Linear weights and biases from the last layer
  // to the first, then the fp32 tensors: embeddings and every LayerNorm), and
  // the AdamW update waits for them; the parameters are made rank 0's. Every
  // rank trains on its own batch; the average of the ranks' gradients is the
  // global batch's when their batches are of one size. Error(Usage) before
  // enable_training(); null detaches. Call before the step is captured.
  void set_grad_sync(dist::GradSync* sync);
  // The answers' first and last token of each sequence of the staged batch
  // (0 ≤ start, end < its padded length; Error Input otherwise).
  void stage_targets(const std::vector<std::int32_t>& start, const std::vector<std::int32_t>& end);
  // Forward with dropout, the span loss, backward and the AdamW update,
  // enqueued on the context's stream, no host synchronisation.
  void train_step();
  // train_step() captured as one CUDA graph on its first call after
  // stage()/stage_targets() and replayed after (GPU); on the CPU: train_step().
  void train_step_graph();
  float last_loss() const;  // the last step's loss (waits for it)
  // Gradients of the last step and the current parameters, as torch's
  // state_dict (bert_qa_tensors order), fp32 from the device.
  std::vector<std::vector<float>> gradients() const;
  std::vector<std::vector<float>> parameters() const;

  // Attention alone, as the staged batch's step runs it: every layer's
  // attention forward, and with `backward` (training only) its backward too,
  // on the activations already staged; enqueued, no synchronisation. What
  // the bench times as attention's own share of a step.
  void attention_only(bool backward);
  // The paper FLOPs of those calls.
  double attention_flops(bool backward) const;

  const BertConfig& config() const { return cfg_; }
  DType dtype() const { return dtype_; }
  std::int64_t parameter_count() const;  // 107,721,218 for bert-base-cased (no pooler)
  // Bytes of every buffer the model holds on its device (weights, their
  // low-precision copies, activations of the staged batch; library workspaces not included).
  std::int64_t device_bytes() const;

 private:
  struct Impl;
  BertConfig cfg_;
  Context& ctx_;
  DType dtype_;
  bool tf32_;
  std::vector<std::vector<float>> host_;  // the state_dict's tensors, bert_qa_tensors order
  std::unique_ptr<Impl> impl_;
  void upload_params();
  void forward_pass(bool train);
  void backward();
};

// The cost of each layer and pass at a batch (per-node rows for `summary` and
// the bench's layer tables): embeddings, per encoder layer its QKV projection,
// attention, output projection, first LayerNorm, intermediate (+GELU), output
// dense, second LayerNorm, then the QA head.
std::vector<NodeInfo> describe_bert(const BertConfig& cfg, std::int64_t batch, std::int64_t seq, DType dtype);

}  // namespace roofline::engine::bert

namespace roofline::engine::bert {

// Extractive question answering with a checkpoint folder: the question and
// context tokenized with its vocab.txt ([CLS] question [SEP] context [SEP],
// the context cut to max_len), the model's start and end logits, and the best
// span inside the context: start ≤ end < start + max_answer pieces, highest
// start + end logit (Hugging Face's question-answering pipeline's rule).
struct QaAnswer {
  std::string text;             // the span of the context, as written there
  std::int64_t start = 0, end = 0;  // positions in the encoding, inclusive
  double score = 0;             // start logit + end logit
  std::int64_t pieces = 0;      // word pieces of the encoded pair
  bool truncated = false;       // the context did not fit max_len
};
QaAnswer answer_question(BertQA& model, const WordPieceTokenizer& tok, std::string_view question,
                         std::string_view context, std::int64_t max_len, std::int64_t max_answer = 30);
// The tokenizer of a checkpoint folder: DIR/vocab.txt, lower-cased when
// DIR/tokenizer_config.json says do_lower_case (bert-base-cased: no).
WordPieceTokenizer checkpoint_tokenizer(const std::string& dir);

}  // namespace roofline::engine::bert
