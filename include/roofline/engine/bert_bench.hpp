// `roofline bench bert-base`: BERT question-answering inference on the CPU and
// GPU in each precision, batch and sequence length (seed 000's Table 13),
// beside Hugging Face's BertForQuestionAnswering in PyTorch eager and
// torch.compile on the same machine in the same call (peers/pytorch_bert.py).
// Cells are NetRecords (net_bench.hpp) of model "bert-base sSEQ", so they are
// stored, tabled and compared as the networks' are.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "roofline/engine/bert.hpp"
#include "roofline/engine/net_bench.hpp"

namespace roofline::engine {

struct BertBenchConfig {
  bool cpu = false, gpu = true;
  int gpu_index = 0;
  bool train = false, infer = true;  // --mode: inference, the fine-tuning step (padded batches, graphs on the GPU)
  std::vector<Precision> precisions = {Precision::BF16};
  std::vector<std::int64_t> batches = {1, 8, 16, 32};
  std::vector<std::int64_t> seqs = {128, 384};
  // Inference on sequences of varied lengths (bert_varied_lengths), each cell
  // timed padded (model "bert-base sSEQ varied") and packed ("... varied
  // packed"); the peer runs the padded batch. Training cells stay equal.
  bool varied = false;
  int steps = 20, warmup = 5;
  bool graphs = true;      // GPU: each batch's forward replayed as one CUDA graph
  std::string checkpoint;  // a Hugging Face folder (config.json, model.safetensors); empty: seeded weights
  std::string peer, peer_script;
  bool peer_compile = true;
};

// The lengths of a varied batch: sequence b has seq/4 + (b·37 mod (seq − seq/4 + 1))
// tokens (the peer computes the same), the first at most seq.
std::vector<std::int64_t> bert_varied_lengths(std::int64_t batch, std::int64_t seq);

// The bench's synthetic inputs, also the data-parallel ranks' (net_scaling.cpp):
// `batch` sequences of `seq` random word pieces drawn from `seed` (ids 1 ..
// vocab−1), the last two thirds typed 1 (the context after a question), as the
// peer makes them; with `lens`, sequence b has lens[b] tokens instead (padded
// to the longest, or packed). The answers they train towards: a span in each
// sequence's context. A step's paper FLOPs: the forward, or forward, backward
// and AdamW.
bert::BertBatch bert_synthetic_batch(const bert::BertConfig& c, std::int64_t batch, std::int64_t seq,
                                     const std::vector<std::int64_t>& lens = {}, bool packed = false,
                                     std::uint64_t seed = 7);
void bert_synthetic_targets(std::int64_t batch, std::int64_t seq, std::vector<std::int32_t>& start,
                            std::vector<std::int32_t>& end);
double bert_step_flops(const bert::BertConfig& c, std::int64_t batch, std::int64_t seq, DType dtype, bool train);

// roofline's cells, devices × precisions × modes × seqs × batches,
// each to `sink` as soon as it is measured (sequences of `seq` tokens each,
// random ids, the last third typed 1 as a context).
std::vector<NetRecord> run_bert_bench(const BertBenchConfig& cfg, const NetSink& sink, const NetStatus& status);
// Attention's own time in each of roofline's cells (params attention_s and
// attention_flops), against the whole step's.
Table bert_attention_table(const std::vector<NetRecord>& ours);
// The peer's cells on each benchmarked device.
std::vector<NetRecord> run_bert_peer(const BertBenchConfig& cfg);

}  // namespace roofline::engine
