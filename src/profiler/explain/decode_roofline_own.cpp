// roofline's own kernels by their real names (the engine's, the fused paths',
// the benchmarks'), which predate the roofline_<op>_<pass> convention that
// decode_roofline reads: a table of what each is, the pass it serves and what
// its template arguments mean, so a profile of roofline's own workloads
// explains every kernel in it.
#include <fmt/format.h>

#include <array>
#include <string>
#include <string_view>

#include "src/profiler/explain/decoder.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::prof::detail {

namespace {

enum class Tc { No, Yes, NotMatmul };

struct OwnKernel {
  std::string_view base;
  KernelOp op;
  std::string_view pass;    // "forward", "input gradient", ... ("" none)
  std::string_view what;    // one clause
  std::string_view source;  // file in the repository
  std::array<std::string_view, 5> targs;  // what each template argument is ("" past the last)
  Tc tc = Tc::NotMatmul;
  std::string_view type = "fp32";  // data type ("" unknown or mixed)
};

constexpr OwnKernel kOwn[] = {
    // ---- engine: convolutions
    {"conv2d_regtile", KernelOp::ConvFprop, "forward", "register-tiled 2-D convolution: each thread 4 adjacent output pixels × R rows × KB output channels, an input window in registers",
     "kernels/conv2d_regtile.cuh", {"KB: output channels per block", "R: output rows per thread", "S: kernel width", "FLIP: 1 = input gradient (weights flipped)", "P: fused max pool P×P (inference; 1 = none)"}, Tc::No},
    {"conv2d_tiled", KernelOp::ConvFprop, "forward", "shared-memory tiled 2-D convolution: 256 thread slots of one image × KB output channels",
     "kernels/conv2d_tiled.cuh", {"KB: output channels per block", "PX: pixels per thread", "FLIP: 1 = input gradient (weights flipped)"}, Tc::No},
    {"conv2d_wgrad_partial", KernelOp::ConvWgrad, "weight gradient", "per-block partial sums of the weight and bias gradient, a thread per tap",
     "kernels/conv2d_tiled.cuh", {"KB: output channels per block"}, Tc::No},
    {"conv2d_wgrad_reduce", KernelOp::ConvWgrad, "weight gradient", "sums the per-block partials of conv2d_wgrad_partial, a warp per weight, in a fixed order",
     "kernels/conv2d_tiled.cuh", {}},
    {"conv2d_forward_direct", KernelOp::ConvFprop, "forward", "direct 2-D convolution, a thread per output (any stride and padding)",
     "kernels/conv2d_direct.cuh", {}, Tc::No},
    {"conv2d_backward_input_direct", KernelOp::ConvDgrad, "input gradient", "direct 2-D convolution input gradient, a thread per input element",
     "kernels/conv2d_direct.cuh", {}, Tc::No},
    {"conv2d_backward_weight_direct", KernelOp::ConvWgrad, "weight gradient", "direct 2-D convolution weight gradient, a block per weight",
     "kernels/conv2d_direct.cuh", {"threads per block"}, Tc::No},
    // ---- engine: linear layers and the rest
    {"linear_small_forward", KernelOp::Gemm, "forward", "small Linear layer: a warp per output feature over 4 batch rows, bias and ReLU fused",
     "kernels/linear_small.cuh", {}, Tc::No},
    {"linear_head_forward", KernelOp::Gemm, "forward (inference)", "a network's last two Linear layers and the softmax in one kernel",
     "kernels/linear_head.cuh", {}, Tc::No},
    {"maxpool_forward_kernel", KernelOp::Pooling, "forward", "max pool, a thread per output, with the argmax for backward", "src/engine/cuda/conv_pool.cu", {}},
    {"maxpool_backward_kernel", KernelOp::Pooling, "input gradient", "max-pool backward as a gather (no atomics)", "src/engine/cuda/conv_pool.cu", {}},
    {"softmax_kernel", KernelOp::Softmax, "forward", "softmax or log-softmax, a warp per row", "src/engine/cuda/softmax_loss.cu", {}},
    {"softmax_backward_kernel", KernelOp::Softmax, "input gradient", "softmax or log-softmax backward, a warp per row", "src/engine/cuda/softmax_loss.cu", {}},
    {"cross_entropy_kernel", KernelOp::Loss, "forward and input gradient", "log-softmax + NLL with its gradient and the step's statistics", "src/engine/cuda/softmax_loss.cu", {}},
    {"nll_forward_kernel", KernelOp::Loss, "forward", "negative log-likelihood", "src/engine/cuda/softmax_loss.cu", {}},
    {"nll_backward_kernel", KernelOp::Loss, "input gradient", "negative log-likelihood gradient", "src/engine/cuda/softmax_loss.cu", {}},
    {"bias_act_kernel", KernelOp::Elementwise, "forward", "bias and ReLU after a GEMM without a fused epilogue", "src/engine/cuda/elementwise.cu", {}},
    {"im2col_nhwc_kernel", KernelOp::Layout, "forward and weight gradient", "im2col: the receptive fields of a few-channel NHWC convolution as rows of a matrix for one GEMM (first layers)", "src/engine/cuda/im2col.cu", {"T: element type"}, Tc::NotMatmul, ""},
    {"pad_rows_kernel", KernelOp::Copy, "forward", "im2col path: the weights' rows padded to a multiple of 8 columns", "src/engine/cuda/im2col.cu", {"T: element type"}, Tc::NotMatmul, ""},
    {"sum_rows_kernel", KernelOp::Reduction, "weight gradient", "im2col path: sums the chunks' weight gradients, dropping the padding", "src/engine/cuda/im2col.cu", {}},
    // ---- engine: the transformer (BERT-base)
    {"embeddings_kernel", KernelOp::Indexing, "forward", "BERT's embeddings: word + position + token-type rows gathered and summed per token",
     "src/engine/cuda/transformer.cu", {"T: activation type"}, Tc::NotMatmul, ""},
    {"layernorm_kernel", KernelOp::Normalization, "forward", "LayerNorm over each row with the residual added first, a warp per row (rows of any length)",
     "src/engine/cuda/transformer.cu", {"T: activation type"}, Tc::NotMatmul, ""},
    {"layernorm_vec_kernel", KernelOp::Normalization, "forward", "LayerNorm with the residual added first, a warp per row held in registers, 16 bytes a load",
     "src/engine/cuda/transformer.cu", {"T: activation type", "CHUNKS: 16-byte chunks a lane"}, Tc::NotMatmul, ""},
    {"gelu_kernel", KernelOp::Elementwise, "forward", "GELU, erf form (BERT's), element by element",
     "src/engine/cuda/transformer.cu", {"T: activation type"}, Tc::NotMatmul, ""},
    {"gelu_vec_kernel", KernelOp::Elementwise, "forward", "GELU, erf form (BERT's), 16 bytes a thread",
     "src/engine/cuda/transformer.cu", {"T: activation type"}, Tc::NotMatmul, ""},
    {"embeddings_backward_kernel", KernelOp::Indexing, "weight gradient", "BERT's embedding tables' gradients: each token's gradient row added to its word, position and type rows (atomics)",
     "src/engine/cuda/transformer.cu", {"T: activation type"}, Tc::NotMatmul, ""},
    {"layernorm_dx_kernel", KernelOp::Normalization, "input gradient", "LayerNorm's input gradient, a warp per row (the row's two sums, then each element)",
     "src/engine/cuda/transformer.cu", {"T: activation type"}, Tc::NotMatmul, ""},
    {"layernorm_dgamma_partials", KernelOp::Reduction, "weight gradient", "LayerNorm's gamma and beta gradients: per-chunk column partial sums over rows",
     "src/engine/cuda/transformer.cu", {"T: activation type"}, Tc::NotMatmul, ""},
    {"layernorm_dgamma_sum", KernelOp::Reduction, "weight gradient", "LayerNorm's gamma and beta gradients: the chunks' partials summed per column in a fixed order",
     "src/engine/cuda/transformer.cu", {}, Tc::NotMatmul, ""},
    {"gelu_backward_kernel", KernelOp::Elementwise, "input gradient", "GELU's input gradient, erf form: dout · (Φ(x) + x·φ(x))",
     "src/engine/cuda/transformer.cu", {"T: activation type"}, Tc::NotMatmul, ""},
    {"attention_kernel", KernelOp::Attention, "forward", "fused scaled-dot-product attention in fp32 arithmetic: register tiles of S = Q·Kᵀ and O += P·V, online softmax, padding keys masked",
     "src/engine/cuda/transformer.cu", {"T: activation type", "D: head dimension"}, Tc::No, ""},
    {"attention_mma_kernel", KernelOp::Attention, "forward", "fused scaled-dot-product attention on the tensor cores (mma.sync m16n8k16, cp.async, ldmatrix), online softmax in registers, 64-wide heads",
     "src/engine/cuda/attention_mma.cu", {"T: bf16 or fp16"}, Tc::Yes, ""},
    {"attention_bwd_pack", KernelOp::Attention, "input gradient", "attention's backward, step 1: Q, K, V and dO gathered per (sequence, head) for the batched GEMMs, and D = dO·O per query row",
     "src/engine/cuda/attention_backward.cu", {"T: activation type"}, Tc::NotMatmul, ""},
    {"attention_bwd_pack_vec", KernelOp::Attention, "input gradient", "attention's backward, step 1, 16 bytes a thread: Q, K, V and dO gathered per (sequence, head), D = dO·O reduced by shuffles",
     "src/engine/cuda/attention_backward.cu", {"T: activation type"}, Tc::NotMatmul, ""},
    {"attention_bwd_unpack_vec", KernelOp::Attention, "input gradient", "attention's backward, last step, 16 bytes a thread: dQ, dK, dV scattered into the QKV gradient's layout",
     "src/engine/cuda/attention_backward.cu", {"T: activation type"}, Tc::NotMatmul, ""},
    {"gelu_backward_vec_kernel", KernelOp::Elementwise, "input gradient", "GELU's input gradient, erf form, 16 bytes of each operand a thread",
     "src/engine/cuda/transformer.cu", {"T: activation type"}, Tc::NotMatmul, ""},
    {"attention_bwd_probs", KernelOp::Attention, "input gradient", "attention's backward, step 3: P = exp(scale·S − lse) with padding keys masked and dS = scale·P·(dP − D), from the score GEMMs' fp32 output",
     "src/engine/cuda/attention_backward.cu", {"T: activation type"}, Tc::NotMatmul, ""},
    {"attention_bwd_unpack", KernelOp::Attention, "input gradient", "attention's backward, last step: dQ, dK, dV from the batched GEMMs scattered into the QKV gradient's layout",
     "src/engine/cuda/attention_backward.cu", {"T: activation type"}, Tc::NotMatmul, ""},
    {"span_loss_kernel", KernelOp::Loss, "forward", "BERT's question-answering span loss: cross-entropy of the start and end logits over each sequence, and its gradient, in one block",
     "src/engine/cuda/transformer.cu", {"T: logits type"}, Tc::NotMatmul, ""},
    {"bias_act_any_kernel", KernelOp::Elementwise, "forward", "bias and ReLU after a convolution or 16-bit GEMM without a fused epilogue (any dtype, NCHW or NHWC)", "src/engine/cuda/lowp.cu", {"T: element type"}, Tc::NotMatmul, ""},
    {"relu_forward_kernel", KernelOp::Elementwise, "forward", "ReLU", "src/engine/cuda/elementwise.cu", {}},
    {"relu_backward_kernel", KernelOp::Elementwise, "input gradient", "ReLU mask on the gradient", "src/engine/cuda/elementwise.cu", {}},
    {"copy_kernel", KernelOp::Copy, "", "element copy", "src/engine/cuda/elementwise.cu", {}},
    {"column_sums_kernel", KernelOp::Reduction, "weight gradient", "bias gradient: column sums in a fixed order", "src/engine/cuda/elementwise.cu", {}},
    {"activation_bias_backward_kernel", KernelOp::Reduction, "input gradient", "ReLU mask and bias-gradient column sums in one pass", "src/engine/cuda/elementwise.cu", {}},
    {"sgd_kernel", KernelOp::Optimizer, "optimizer", "SGD (momentum, weight decay, Nesterov) over every parameter, gradients unscaled and the step skipped on overflow, with the low-precision copy of the parameters",
     "src/engine/cuda/optim.cu", {"C: the copy's type (None, F32, BF16, F16)"}},
    {"adamw_kernel", KernelOp::Optimizer, "optimizer", "AdamW over every parameter (bias corrections from the device's step counter), gradients unscaled and the step skipped on overflow, with the low-precision copy of the parameters",
     "src/engine/cuda/optim.cu", {"C: the copy's type (None, F32, BF16, F16)"}},
    {"step_advance_kernel", KernelOp::Optimizer, "optimizer", "advances the device's step counter after an update that read it", "src/engine/cuda/optim.cu", {}},
    {"cast_kernel", KernelOp::Copy, "", "cast between fp32, bf16 and fp16 (round to nearest even)", "src/engine/cuda/optim.cu", {"From: input type", "To: output type"}, Tc::NotMatmul, ""},
    {"loss_grad_scale_kernel", KernelOp::Loss, "input gradient", "loss scaling: the loss gradient times the scale (GradScaler.scale(loss))", "src/engine/cuda/optim.cu", {}},
    {"finite_check_kernel", KernelOp::Reduction, "optimizer", "loss scaling: sets found_inf when a gradient is inf or NaN", "src/engine/cuda/optim.cu", {}},
    {"loss_scale_init_kernel", KernelOp::Optimizer, "optimizer", "loss scaling: the scale's starting state", "src/engine/cuda/optim.cu", {}},
    {"loss_scale_update_kernel", KernelOp::Optimizer, "optimizer", "loss scaling: GradScaler's update of the scale (back off on overflow, grow after good steps)", "src/engine/cuda/optim.cu", {}},
    {"channel_partials_nchw", KernelOp::Reduction, "weight gradient", "bias gradient of an NCHW convolution: per-block partial sums of each channel (any dtype)", "src/engine/cuda/lowp.cu", {"T: element type"}, Tc::NotMatmul, ""},
    {"channel_partials_nhwc", KernelOp::Reduction, "weight gradient", "bias gradient of an NHWC convolution or 16-bit Linear: per-block partial column sums (any dtype)", "src/engine/cuda/lowp.cu", {"T: element type"}, Tc::NotMatmul, ""},
    {"sum_partials", KernelOp::Reduction, "weight gradient", "sums the per-block partials of the channel sums, in a fixed order", "src/engine/cuda/lowp.cu", {}},
    {"to_f32_kernel", KernelOp::Copy, "", "bf16/fp16 to fp32 (a convolution's weight gradient cuDNN wrote in 16 bits)", "src/engine/cuda/lowp.cu", {"T: element type"}, Tc::NotMatmul, ""},
    {"from_f32_kernel", KernelOp::Copy, "", "fp32 to bf16/fp16, rounded to nearest even (a bias copy for a 16-bit GEMM epilogue)", "src/engine/cuda/lowp.cu", {"T: element type"}, Tc::NotMatmul, ""},
    {"gather_kernel", KernelOp::Indexing, "data", "the step's batch gathered from the data set on the GPU and normalised", "src/engine/cuda/elementwise.cu", {}, Tc::NotMatmul, ""},
    {"gather_same_kernel", KernelOp::Indexing, "data", "the step's batch gathered from the data set on the GPU and normalised, 4 pixels a thread (images not resized)", "src/engine/cuda/elementwise.cu", {}, Tc::NotMatmul, ""},
    // ---- engine: the CNN ops (BatchNorm, pools, add, Dropout in fp32, bf16 or fp16)
    {"bn_stats_kernel", KernelOp::Normalization, "forward", "BatchNorm statistics: per-block shifted sums, the last block adds them and writes the mean, 1/std and running averages",
     "src/engine/cuda/batchnorm.cu", {"T: element type", "V: elements per vector load", "Walk: NCHW or NHWC traversal"}, Tc::NotMatmul, ""},
    {"bn_normalize_kernel", KernelOp::Normalization, "forward", "BatchNorm normalisation with the residual add and ReLU fused (training and eval)",
     "src/engine/cuda/batchnorm.cu", {"T: element type", "V: elements per vector load", "Walk: NCHW or NHWC traversal"}, Tc::NotMatmul, ""},
    {"bn_backward_sums_kernel", KernelOp::Normalization, "input gradient", "BatchNorm backward: the ReLU mask in place and the per-channel sums; the last block writes dgamma and dbeta",
     "src/engine/cuda/batchnorm.cu", {"T: element type", "V: elements per vector load", "Walk: NCHW or NHWC traversal"}, Tc::NotMatmul, ""},
    {"bn_backward_input_kernel", KernelOp::Normalization, "input gradient", "BatchNorm input gradient from the per-channel sums",
     "src/engine/cuda/batchnorm.cu", {"T: element type", "V: elements per vector load", "Walk: NCHW or NHWC traversal"}, Tc::NotMatmul, ""},
    {"maxpool_forward_any_kernel", KernelOp::Pooling, "forward", "max pool with padding, NHWC or bf16/fp16: a thread per output (V channels in NHWC)",
     "src/engine/cuda/pool_cnn.cu", {"T: element type", "V: channels per thread", "NHWC: channels last"}, Tc::NotMatmul, ""},
    {"maxpool_backward_any_kernel", KernelOp::Pooling, "input gradient", "max-pool backward as a gather from the windows (no atomics)",
     "src/engine/cuda/pool_cnn.cu", {"T: element type", "V: channels per thread", "NHWC: channels last"}, Tc::NotMatmul, ""},
    {"avgpool_forward_kernel", KernelOp::Pooling, "forward", "adaptive average pool, a thread per output", "src/engine/cuda/pool_cnn.cu",
     {"T: element type", "V: channels per thread", "NHWC: channels last"}, Tc::NotMatmul, ""},
    {"avgpool_backward_kernel", KernelOp::Pooling, "input gradient", "adaptive average pool backward as a gather from the bins", "src/engine/cuda/pool_cnn.cu",
     {"T: element type", "V: channels per thread", "NHWC: channels last"}, Tc::NotMatmul, ""},
    {"add_kernel", KernelOp::Elementwise, "forward", "residual add, ReLU fused", "src/engine/cuda/eltwise_cnn.cu",
     {"T: element type", "V: elements per vector access"}, Tc::NotMatmul, ""},
    {"relu_half_forward_kernel", KernelOp::Elementwise, "forward", "ReLU in bf16/fp16", "src/engine/cuda/eltwise_cnn.cu",
     {"T: element type", "V: elements per vector access"}, Tc::NotMatmul, ""},
    {"relu_half_backward_kernel", KernelOp::Elementwise, "input gradient", "ReLU mask on the gradient in bf16/fp16", "src/engine/cuda/eltwise_cnn.cu",
     {"T: element type", "V: elements per vector access"}, Tc::NotMatmul, ""},
    {"dropout_kernel", KernelOp::Random, "forward and input gradient", "Dropout with a counter-based mask (seed, step, index), recomputed in backward",
     "src/engine/cuda/eltwise_cnn.cu", {"T: element type", "V: elements per vector access"}, Tc::NotMatmul, ""},
    {"mlp_train_kernel", KernelOp::Gemm, "whole training steps", "fused-mlp: simple-mlp's training steps in one cooperative kernel (GEMMs, loss, SGD between grid barriers)",
     "src/engine/fused/fused_mlp.cu", {}, Tc::No},
    {"mlp_infer_kernel", KernelOp::Gemm, "forward (inference)", "fused-mlp: simple-mlp's inference in one cooperative kernel", "src/engine/fused/fused_mlp.cu", {}, Tc::No},
    {"cnn_train_kernel", KernelOp::Conv, "whole training steps", "fused-cnn: simple-cnn's training steps in one cooperative kernel", "src/engine/fused/fused_cnn.cu", {}, Tc::No},
    {"cnn_infer_kernel", KernelOp::Conv, "forward (inference)", "fused-cnn: simple-cnn's inference in one cooperative kernel", "src/engine/fused/fused_cnn.cu", {}, Tc::No},
    // ---- benchmarks (ceilings, sweep, latency)
    {"fma_kernel", KernelOp::Benchmark, "", "FMA-throughput ceiling: independent FMA chains", "src/ceilings/gpu/fma_kernels.cu", {}, Tc::NotMatmul, ""},
    {"addmul_kernel", KernelOp::Benchmark, "", "add + multiply ceiling (no FMA)", "src/ceilings/gpu/addmul_kernels.cu", {}, Tc::NotMatmul, ""},
    {"dmma_kernel", KernelOp::Benchmark, "", "FP64 tensor-core (DMMA) ceiling", "src/ceilings/gpu/dmma_kernels.cu", {}, Tc::Yes, "fp64"},
    {"dmma16_kernel", KernelOp::Benchmark, "", "FP64 tensor-core (DMMA m16n8k16) ceiling", "src/ceilings/gpu/dmma_kernels.cu", {}, Tc::Yes, "fp64"},
    {"wgmma_kernel", KernelOp::Benchmark, "", "Hopper warpgroup MMA (wgmma) tensor-core ceiling", "src/ceilings/gpu/wgmma_sm90a.cu", {}, Tc::Yes, ""},
    {"read_kernel", KernelOp::Benchmark, "", "DRAM read bandwidth", "src/ceilings/gpu/memory_kernels.cu", {}, Tc::NotMatmul, ""},
    {"write_kernel", KernelOp::Benchmark, "", "DRAM write bandwidth", "src/ceilings/gpu/memory_kernels.cu", {}, Tc::NotMatmul, ""},
    {"l2_read_kernel", KernelOp::Benchmark, "", "L2 read bandwidth", "src/ceilings/gpu/memory_kernels.cu", {}, Tc::NotMatmul, ""},
    {"smem_read_kernel", KernelOp::Benchmark, "", "shared-memory read bandwidth", "src/ceilings/gpu/memory_kernels.cu", {}, Tc::NotMatmul, ""},
    {"fill_kernel", KernelOp::Random, "", "fills a benchmark's operands with seeded values", "src/ceilings/gpu/fill_kernels.cu", {"T: element type"}, Tc::NotMatmul, ""},
    {"fill_random_kernel", KernelOp::Random, "", "fills a benchmark buffer with random values", "src/ceilings/gpu/memory_kernels.cu", {}, Tc::NotMatmul, ""},
    {"bulk_read_kernel", KernelOp::Benchmark, "", "DRAM read bandwidth with cp.async.bulk", "src/ceilings/gpu/bulk_kernels.cu", {}, Tc::NotMatmul, ""},
    {"bulk_write_kernel", KernelOp::Benchmark, "", "DRAM write bandwidth with bulk copies", "src/ceilings/gpu/bulk_kernels.cu", {}, Tc::NotMatmul, ""},
    {"bulk_copy_kernel", KernelOp::Benchmark, "", "DRAM copy bandwidth with bulk copies", "src/ceilings/gpu/bulk_kernels.cu", {}, Tc::NotMatmul, ""},
    {"chase_kernel", KernelOp::Benchmark, "", "memory latency: a dependent pointer chase", "src/ceilings/gpu/latency_kernels.cu", {}, Tc::NotMatmul, ""},
    {"build_chase_kernel", KernelOp::Benchmark, "", "builds the pointer-chase ring", "src/ceilings/gpu/latency_kernels.cu", {}, Tc::NotMatmul, ""},
    {"empty_kernel", KernelOp::Benchmark, "", "an empty kernel: launch overhead", "src/ceilings/gpu/latency_kernels.cu", {}, Tc::NotMatmul, ""},
    {"grid_sync_kernel", KernelOp::Benchmark, "", "a cooperative kernel crossing grid barriers: cooperative launch and grid barrier cost", "src/ceilings/gpu/latency_kernels.cu", {}, Tc::NotMatmul, ""},
    {"spin_kernel", KernelOp::Benchmark, "", "spins for a set time (timer calibration)", "src/measure/measure_delay.cu", {}, Tc::NotMatmul, ""},
    {"compute_k_terms", KernelOp::Benchmark, "", "arithmetic-intensity sweep: the lecture's polynomial of k terms per element", "src/sweep/kernels.cu", {}, Tc::NotMatmul, ""},
    {"overlap_k_terms", KernelOp::Benchmark, "", "arithmetic-intensity sweep, loads overlapped with the arithmetic", "src/sweep/overlap_kernels.cu", {}, Tc::NotMatmul, ""},
    {"ws_k_terms", KernelOp::Benchmark, "", "arithmetic-intensity sweep, warp-specialised loads", "src/sweep/ws_kernels.cu", {}, Tc::NotMatmul, ""},
    {"init_kernel", KernelOp::Benchmark, "", "fills the sweep's input", "src/sweep/kernels.cu", {}, Tc::NotMatmul, ""},
    {"count_nonfinite_kernel", KernelOp::Reduction, "", "counts non-finite outputs (the sweep's check)", "src/sweep/kernels.cu", {}, Tc::NotMatmul, ""},
};

// "compute_k_terms_bf16" → ("compute_k_terms", "bf16"): the sweep's per-type variants.
std::pair<std::string_view, std::string_view> split_type_suffix(std::string_view base) {
  for (std::string_view t : {"_bf16", "_fp16", "_fp64", "_fma"})
    if (base.size() > t.size() && base.substr(base.size() - t.size()) == t)
      return {base.substr(0, base.size() - t.size()), t.substr(1)};
  return {base, {}};
}

}  // namespace

bool decode_roofline_own(const Signature& s, Builder& b) {
  if (s.scopes.empty() || s.scopes[0] != "roofline") return false;
  const auto [base, suffix] = split_type_suffix(s.base);
  const OwnKernel* k = nullptr;
  for (const OwnKernel& o : kOwn)
    if (o.base == base) k = &o;
  if (!k) return false;
  const std::string scope = join(s.scopes, "::");
  b.library("roofline", scope + "::");
  b.family(std::string(k->what), std::string(s.base));
  KernelOp op = k->op;
  std::string pass(k->pass);
  // conv2d_regtile / conv2d_tiled with FLIP = 1 compute the input gradient.
  if ((base == "conv2d_regtile" || base == "conv2d_tiled")) {
    const size_t flip = base == "conv2d_regtile" ? 3 : 2;
    if (s.template_args.size() > flip && (arg_value(s.template_args[flip]) == "true" || arg_value(s.template_args[flip]) == "1")) {
      op = KernelOp::ConvDgrad;
      pass = "input gradient";
    }
  }
  // The operation's own words where they say enough (the Kind field has the rest).
  const bool named_by_op = op != KernelOp::Benchmark && op != KernelOp::Reduction && op != KernelOp::Copy &&
                           op != KernelOp::Random;
  b.op(op, std::string(s.base), named_by_op ? std::string() : std::string(k->what));
  if (!pass.empty()) b.field("pass", "Pass", pass, std::string(s.base), pass + " pass");
  for (size_t i = 0; i < s.template_args.size() && i < k->targs.size() && !k->targs[i].empty(); ++i) {
    const std::string_view meaning = k->targs[i];
    const auto colon = meaning.find(':');
    const std::string key = colon == std::string_view::npos ? fmt::format("targ{}", i) : std::string(meaning.substr(0, colon));
    b.field("template_" + key, std::string(colon == std::string_view::npos ? meaning : meaning.substr(0, colon)),
            arg_value(s.template_args[i]) + (colon == std::string_view::npos ? "" : " (" + std::string(meaning.substr(colon + 2)) + ")"),
            s.template_args[i]);
  }
  std::string type(suffix.empty() || suffix == "fma" ? k->type : suffix);
  if (suffix == "fma") type = "fp32";
  const bool matmul = k->tc != Tc::NotMatmul;  // math and accumulator types only mean something there
  if (!type.empty())
    b.types(type, matmul ? type : "", matmul ? type : "", type, suffix.empty() ? std::string(s.base) : std::string(suffix));
  if (k->tc == Tc::Yes) b.tensor_cores(TensorCores::Yes, std::string(s.base), "a tensor-core kernel of roofline's");
  if (k->tc == Tc::No)
    b.tensor_cores(TensorCores::No, std::string(s.base), "roofline's engine runs this in FP32 on CUDA cores");
  b.field("source", "Source", std::string(k->source), scope + "::" + std::string(s.base));
  return true;
}

}  // namespace roofline::prof::detail
