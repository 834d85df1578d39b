// Reading GPU kernel names. Library kernels (cuBLAS, cuBLASLt, cuDNN, CUTLASS,
// xmma, nvjet, PyTorch ATen, NCCL, Triton, FlashAttention, roofline's own)
// encode what they do in their names: architecture, data types, tile shape,
// layouts, pipeline stages, split-K. explain_kernel() decodes those names the
// way a person would by hand, keeping for every decoded field the token it
// came from, so the reader can check each claim. Names that no rule knows are
// reported as "not recognised" with whatever the C++ name itself says
// (namespaces, template arguments): no guessing.
//
// shorten_kernel_name() gives the readable short form the profiler tables use.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace roofline::prof {

enum class KernelOp {
  Unknown,
  Gemm,          // matrix multiply (cuBLAS, CUTLASS, nvjet, xmma, roofline)
  Gemv,          // matrix-vector or small-N matrix multiply
  ConvFprop,     // convolution forward
  ConvDgrad,     // convolution backward, input (data) gradient
  ConvWgrad,     // convolution backward, weight gradient
  Conv,          // convolution, pass not in the name
  SplitKReduce,  // sums the partial products of a split-K GEMM
  Elementwise,   // one output element from the same element of the inputs
  Reduction,     // sum/mean/max/norm over a dimension
  Softmax,
  Loss,
  Normalization,  // batch/layer/group norm
  Pooling,
  Optimizer,  // multi-tensor apply (torch._foreach_*, fused Adam/SGD)
  Attention,  // fused attention (FlashAttention, memory-efficient, cuDNN SDPA)
  Copy,       // copies, casts, concatenation
  Layout,     // layout transforms (NCHW <-> NHWC, im2col, transpose)
  Fft,
  Random,         // random number generation, dropout masks
  Indexing,       // gather, scatter, index_select, embedding
  Sort,           // sort, scan, select (CUB/Thrust)
  Communication,  // NCCL collectives and point-to-point
  Helper,         // library bookkeeping kernels (offsets, workspace setup)
  Benchmark,      // ceiling and micro-benchmark kernels
};
const char* to_string(KernelOp op);  // "GEMM", "convolution forward (fprop)", ...

enum class TensorCores { Unknown, Yes, No };
const char* to_string(TensorCores t);  // "unknown", "yes", "no"

// One decoded property and the part of the name it was read from.
struct KernelField {
  std::string key;       // stable: "library", "operation", "arch", "types", "tensor_cores", "tile", ...
  std::string label;     // for people: "Library", "Tile (M×N×K)", ...
  std::string value;     // decoded value, for people
  std::string evidence;  // the token(s) of the name it came from; "" when inferred from other fields
};

struct KernelInfo {
  std::string name;                        // as given
  std::string demangled;                   // demangled C++ name (the input itself when it was not mangled)
  std::string function;                    // qualified function name, without template arguments and parameters
  std::vector<std::string> template_args;  // top-level template arguments, as written
  bool truncated = false;                  // the name ends in "..." or "…" (a profiler cut it)
  bool recognised = false;

  std::string library;  // "cuBLAS", "cuBLASLt", "cuDNN", "CUTLASS", "PyTorch ATen", "NCCL", ... ("" unknown)
  KernelOp op = KernelOp::Unknown;
  std::string op_detail;  // "add", "sum", "AllReduce", "clamp", ... ("" unknown)
  int sm = 0;             // compute capability x10 the kernel was built for (80, 90), 0 unknown
  std::string arch;       // "Ampere", "Hopper", ... ("" unknown)
  // Canonical type names: "fp64", "fp32", "tf32", "fp16", "bf16", "fp8e4m3", "fp8e5m2",
  // "int8", "uint8", "int32", "complex fp32", ... ("" unknown)
  std::string input_type;   // A/B operands (or the tensor an elementwise kernel reads)
  std::string math_type;    // what the multiply runs in (tf32 for FP32 data on tensor cores)
  std::string accum_type;   // accumulator
  std::string output_type;  // C/D
  TensorCores tensor_cores = TensorCores::Unknown;

  std::vector<KernelField> fields;  // in display order; each with its evidence
  std::string sentence;             // the whole decoding as one human sentence
  std::vector<std::string> notes;   // caveats (undocumented tokens, truncation)

  const KernelField* field(std::string_view key) const;
  // GEMM, GEMV or convolution (any pass): work that tensor cores can run.
  bool is_matmul_like() const;
  bool is_conv() const;
  // A GEMM/convolution computing in FP32 on CUDA cores (decoded as such, not merely unknown).
  bool fp32_on_cuda_cores() const;
  // Kernels that are memory-bound by construction: elementwise, copies, casts, layout changes.
  bool is_elementwise_like() const;
  nlohmann::json to_json() const;
};

// Decodes a kernel name, mangled (as CUPTI reports it) or demangled (as
// Nsight, nvprof or the PyTorch profiler print it), with or without its
// parameter list; names cut short by a profiler ("...", "…") are accepted.
KernelInfo explain_kernel(std::string_view name);

// Demangles an Itanium C++ name (abi::__cxa_demangle); returns the input
// unchanged when it is not a mangled name.
std::string demangle_kernel_name(std::string_view name);

// A readable short form of at most `width` columns (0: no limit): demangled,
// without the return type and parameter list, namespaces reduced to the
// library's own ("at::", "cudnn::"), and template arguments reduced to the
// parts that tell instances apart (the functor or lambda's enclosing function,
// numbers, data types), e.g.
//   "at::vectorized_elementwise_kernel<4, launch_clamp_scalar, float>".
// Flat library names that are too long lose tokens from the middle.
std::string shorten_kernel_name(std::string_view name, size_t width = 72);

}  // namespace roofline::prof
