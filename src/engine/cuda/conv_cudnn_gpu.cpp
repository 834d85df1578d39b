// Convolutions on cuDNN 9's graph (backend) API, in every dtype (fp32 with
// TF32 allowed or not, bf16, fp16: fp32 compute), NCHW or NHWC, any group
// count. One plan per shape, pass, dtype, format, TF32 policy, epilogue and
// pointer alignment, built on the first call and cached in the context
// (CudaState::conv_plans); later calls only fill a variant pack and execute,
// so a captured CUDA graph replays them.
//
//  - Forward with a bias and/or ReLU: first the fused graph conv → add bias
//    (fp32) → ReLU, intermediates virtual fp32 tensors, the output in dtype
//    (cuDNN's runtime-fusion engines); if no engine finalizes it, the plain
//    convolution and our bias/ReLU kernel (lowp.cu). Which was taken is
//    recorded (conv2d_path()).
//  - Input gradient: the backward-data operation.
//  - Weight gradient: the backward-filter operation writing dw in fp32; for
//    bf16/fp16 inputs, if no engine writes fp32 dw, dw in dtype to the
//    workspace and our conversion to fp32 (recorded too). db = Σ dpre over
//    n, h, w by our fixed-order channel sums.
//  - True fp32 (tf32 off): engine configurations with the tensor-core
//    numerical note are passed over (cudnn_graph.hpp), and a plan must still
//    be found, or the call fails saying so.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>

#include "roofline/core/error.hpp"
#include "src/engine/cuda/conv_choice.hpp"
#include "src/engine/cuda/cuda_api.hpp"
#include "src/engine/cuda/cudnn_graph.hpp"
#include "src/engine/cuda/im2col.hpp"
#include "src/engine/cuda/lowp.hpp"
#include "src/engine/cuda/ops_cuda.hpp"

namespace roofline::engine::cuda_ops {

namespace {

// Engine configurations that need more workspace than this are passed over
// (the next one the heuristics offer is taken).
constexpr std::int64_t kMaxConvWorkspace = std::int64_t(256) << 20;
constexpr std::int64_t kAlign = 256;  // offsets of our buffers inside the workspace

// Tensor ids in the graphs (the variant pack's keys).
enum : std::int64_t { kX = 1, kW = 2, kY = 3, kB = 4, kConvOut = 101, kBiasOut = 102 };


CudaState* mut(const CudaState* st) { return const_cast<CudaState*>(st); }  // the plan cache is a cache

std::int64_t align_up(std::int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

// The buffers of one call, by role, for autotuning: each candidate plan runs
// on them (what it writes is overwritten by the chosen plan's run after).
// w == nullptr: the plan writes its W tensor (a 16-bit dw) to `w_scratch`
// bytes of the candidate's own workspace, after cuDNN's part.
struct Roles {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* y = nullptr;
  const void* b = nullptr;
  std::int64_t w_scratch = 0;
};

// Seconds per run of a candidate plan: one run to warm, then three timed
// with events on the stream (none more when the first took over 20 ms).
// One scratch buffer serves every candidate of a plan (grown when a candidate
// needs more), so timing many candidates does not allocate and free each time.
cudnn::PlanTimer timer_for(CudaState* st, const std::vector<std::int64_t>& uids, Roles r) {
  auto scratch = std::make_shared<std::optional<cuda::DeviceBuffer<char>>>();
  auto scratch_bytes = std::make_shared<size_t>(0);
  return [st, uids, r, scratch, scratch_bytes](cudnnBackendDescriptor_t plan, std::int64_t ws) -> double {
    const size_t need = static_cast<size_t>(align_up(ws) + r.w_scratch + kAlign);
    if (need > *scratch_bytes) {
      scratch->reset();  // free before allocating the larger one
      scratch->emplace(need, "cuDNN autotuning workspace");
      *scratch_bytes = need;
    }
    char* base = (*scratch)->get();
    std::vector<const void*> ptrs;
    for (std::int64_t u : uids)
      ptrs.push_back(u == kX ? r.x : u == kW ? (r.w ? r.w : base + align_up(ws)) : u == kY ? r.y : r.b);
    const auto run = [&] { cudnn::execute(st->dnn, plan, uids, ptrs, base); };
    auto timed = [&](int runs) { return detail::cuda_time(st, run, runs); };
    try {
      // The first run may compile (runtime-fusion engines) or page in: untimed,
      // unless it is already so slow that the candidate is out.
      const double first = timed(1);
      if (first > 20e-3) return first;
      return timed(3);
    } catch (const Error&) {
      // A candidate that fails to run is passed over; the chosen plan's own
      // run reports any error that is not the candidate's.
      cudaGetLastError();
      return std::numeric_limits<double>::infinity();
    }
  };
}

cudnnDataType_t dnn_type(DType t) {
  switch (t) {
    case DType::F32:
      return CUDNN_DATA_FLOAT;
    case DType::BF16:
      return CUDNN_DATA_BFLOAT16;
    case DType::F16:
      return CUDNN_DATA_HALF;
    default:
      throw Error(ErrorKind::Internal, std::string("no cuDNN type for ") + to_string(t));
  }
}

// Dims in (n, c, h, w) order and strides in elements.
struct Dims4 {
  std::int64_t dims[4];
  std::int64_t strides[4];
};

Dims4 activation(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, MemoryFormat f) {
  if (f == MemoryFormat::NHWC) return {{n, c, h, w}, {h * w * c, 1, w * c, c}};
  return {{n, c, h, w}, {c * h * w, h * w, w, 1}};
}

// (k, c/groups, r, s) stored KCRS (NCHW) or KRSC (NHWC); cuDNN reads the
// group count from the filter's second dimension against the input's channels.
Dims4 weights(const ops::Conv2dShape& s) {
  const std::int64_t cg = s.cg();
  if (s.format == MemoryFormat::NHWC) return {{s.k, cg, s.r, s.s}, {s.r * s.s * cg, 1, s.s * cg, cg}};
  return {{s.k, cg, s.r, s.s}, {cg * s.r * s.s, s.r * s.s, s.s, 1}};
}

Dims4 bias_dims(std::int64_t k) { return {{1, k, 1, 1}, {k, 1, 1, 1}}; }

CudnnDesc tensor(std::int64_t uid, cudnnDataType_t type, const Dims4& d, std::int64_t align, bool is_virtual = false) {
  return cudnn::tensor(uid, type, d.dims, d.strides, align, is_virtual);
}

std::string describe(const ops::Conv2dShape& s, Pass pass) {
  std::string extra;
  if (pass == Pass::Forward && s.bias) extra += " +bias";
  if (pass == Pass::Forward && s.act == ops::Activation::ReLU) extra += " +relu";
  if (pass == Pass::WeightGrad && s.bias) extra += " +db";
  return fmt::format("conv2d {} (n={} c={} {}x{} k={} {}x{} stride={} pad={} groups={} {} {}{}{})", to_string(pass),
                     s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride, s.pad, s.groups, to_string(s.format),
                     to_string(s.dtype), s.dtype == DType::F32 ? (s.tf32 ? " tf32" : " true-fp32") : "", extra);
}

// The alignment every non-null pointer has, in bytes (16 at most).
int align_of(std::initializer_list<const void*> ptrs) {
  std::uintptr_t a = 16;
  for (const void* p : ptrs)
    if (p) a = std::min<std::uintptr_t>(a, reinterpret_cast<std::uintptr_t>(p) & (~reinterpret_cast<std::uintptr_t>(p) + 1));
  return static_cast<int>(a);
}

ConvKey key_of(const ops::Conv2dShape& s, int pass, int align) {
  ConvKey k;
  k.n = s.n;
  k.c = s.c;
  k.h = s.h;
  k.w = s.w;
  k.k = s.k;
  k.r = s.r;
  k.s = s.s;
  k.stride = s.stride;
  k.pad = s.pad;
  k.groups = s.groups;
  k.pass = pass;
  k.format = static_cast<int>(s.format);
  k.dtype = static_cast<int>(s.dtype);
  k.tf32 = s.tf32;
  k.align = align;
  return k;
}

// True fp32 convolutions of at least this many forward FLOPs also time the
// fallback list's engines (FFT, Winograd). Small ones keep mode A's: the wider
// search on every shape made the GPU tests' autotuning 4.7× slower (ResNet-18
// at 32×32), and at batch 1 the eager peer is launch-bound anyway.
constexpr double kWideSearchFlops = 4e9;

cudnn::EngineFilter filter_for(const ops::Conv2dShape& s) {
  cudnn::EngineFilter f;
  f.no_tensor_cores = s.dtype == DType::F32 && !s.tf32;
  f.max_workspace = kMaxConvWorkspace;
  if (f.no_tensor_cores && s.cost().forward.flops >= kWideSearchFlops) f.fallback_candidates = 8;
  return f;
}

[[noreturn]] void no_engine(const ops::Conv2dShape& s, Pass pass, const std::string& why) {
  throw Error(ErrorKind::Unsupported, fmt::format("no cuDNN engine runs {}: {}", describe(s, pass), why),
              s.dtype == DType::F32 && !s.tf32
                  ? "true fp32 excludes cuDNN's tensor-core engines: try --precision tf32 or bf16, or report the shape"
                  : "try another memory format or precision, or report the shape with this message");
}

// The convolution's geometry: cross-correlation (PyTorch's), fp32 compute,
// zero padding on both sides, no dilation.
CudnnDesc convolution(const ops::Conv2dShape& s) {
  CudnnDesc d = cudnn::make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnDataType_t comp = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const std::int64_t spatial = 2, dilation[2] = {1, 1}, stride[2] = {s.stride, s.stride}, pad[2] = {s.pad, s.pad};
  CUDNN_SET(d.get(), CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
  CUDNN_SET(d.get(), CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  CUDNN_SET(d.get(), CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
  CUDNN_SET(d.get(), CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilation);
  CUDNN_SET(d.get(), CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
  CUDNN_SET(d.get(), CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
  CUDNN_SET(d.get(), CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
  cudnn::finalize(d, "cudnnBackendFinalize(convolution descriptor)");
  return d;
}

// One of the three convolution operations over finalized tensors: the
// attribute ids differ by operation, the roles do not.
struct ConvOpAttrs {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
};
const ConvOpAttrs kForward = {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
const ConvOpAttrs kBackwardData = {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                                   CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
                                   CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                                   CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
                                   CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
                                   CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
                                   CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
const ConvOpAttrs kBackwardFilter = {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
                                     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
                                     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
                                     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
                                     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
                                     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
                                     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};

// x, w, y: the activation-in, weights and activation-out roles (dx, dw, dy in
// the backward operations). alpha 1, beta 0: outputs are overwritten.
CudnnDesc conv_op(const ConvOpAttrs& a, const CudnnDesc& conv, const CudnnDesc& x, const CudnnDesc& w,
                  const CudnnDesc& y) {
  CudnnDesc op = cudnn::make(a.type);
  cudnnBackendDescriptor_t cd = conv.get(), xd = x.get(), wd = w.get(), yd = y.get();
  const float alpha = 1.0f, beta = 0.0f;
  CUDNN_SET(op.get(), a.x, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xd);
  CUDNN_SET(op.get(), a.w, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &wd);
  CUDNN_SET(op.get(), a.y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yd);
  CUDNN_SET(op.get(), a.conv, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cd);
  CUDNN_SET(op.get(), a.alpha, CUDNN_TYPE_FLOAT, 1, &alpha);
  CUDNN_SET(op.get(), a.beta, CUDNN_TYPE_FLOAT, 1, &beta);
  cudnn::finalize(op, "cudnnBackendFinalize(convolution operation)");
  return op;
}

// y = mode(x[, b]) elementwise in fp32 (b broadcast over n, h, w).
CudnnDesc pointwise_op(cudnnPointwiseMode_t mode, const CudnnDesc& x, const CudnnDesc* b, const CudnnDesc& y,
                       std::vector<CudnnDesc>& keep) {
  CudnnDesc pw = cudnn::make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  const cudnnDataType_t prec = CUDNN_DATA_FLOAT;
  CUDNN_SET(pw.get(), CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
  CUDNN_SET(pw.get(), CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
  cudnn::finalize(pw, "cudnnBackendFinalize(pointwise descriptor)");
  CudnnDesc op = cudnn::make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  cudnnBackendDescriptor_t pd = pw.get(), xd = x.get(), yd = y.get();
  CUDNN_SET(op.get(), CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pd);
  CUDNN_SET(op.get(), CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xd);
  if (b) {
    cudnnBackendDescriptor_t bd = b->get();
    CUDNN_SET(op.get(), CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &bd);
  }
  CUDNN_SET(op.get(), CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yd);
  cudnn::finalize(op, "cudnnBackendFinalize(pointwise operation)");
  keep.push_back(std::move(pw));
  return op;
}

// The fused forward graph conv → [+ bias] → [ReLU]; false (with why) when no
// engine takes it.
bool build_fused_forward(CudaState* st, cudnnHandle_t h, const ops::Conv2dShape& s, const ConvKey& key,
                         const Roles& roles, ConvPlan& p, std::string& why) {
  const cudnnDataType_t t = dnn_type(s.dtype);
  const Dims4 yd = activation(s.n, s.k, s.oh(), s.ow(), s.format);
  std::vector<CudnnDesc>& keep = p.keep;
  CudnnDesc x = tensor(kX, t, activation(s.n, s.c, s.h, s.w, s.format), key.align);
  CudnnDesc w = tensor(kW, t, weights(s), key.align);
  CudnnDesc y = tensor(kY, t, yd, key.align);
  CudnnDesc conv_out = tensor(kConvOut, CUDNN_DATA_FLOAT, yd, key.align, true);
  CudnnDesc conv = convolution(s);
  std::vector<CudnnDesc> ops;
  ops.push_back(conv_op(kForward, conv, x, w, conv_out));
  const CudnnDesc* last = &conv_out;
  CudnnDesc b, bias_out;
  if (key.bias) {
    b = tensor(kB, CUDNN_DATA_FLOAT, bias_dims(s.k), key.align);
    if (key.relu) bias_out = tensor(kBiasOut, CUDNN_DATA_FLOAT, yd, key.align, true);
    ops.push_back(pointwise_op(CUDNN_POINTWISE_ADD, *last, &b, key.relu ? bias_out : y, keep));
    last = &bias_out;
  }
  if (key.relu) ops.push_back(pointwise_op(CUDNN_POINTWISE_RELU_FWD, *last, nullptr, y, keep));
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const CudnnDesc& op : ops) raw.push_back(op.get());
  p.uids = {kX, kW, kY};
  if (key.bias) p.uids.push_back(kB);
  const bool ok = cudnn::build_plan(h, raw, filter_for(s), p, why, timer_for(st, p.uids, roles));
  for (CudnnDesc* d : {&x, &w, &y, &conv_out, &conv, &b, &bias_out}) keep.push_back(std::move(*d));
  for (CudnnDesc& op : ops) keep.push_back(std::move(op));
  return ok;
}

// A graph of one convolution operation (kForward, kBackwardData or
// kBackwardFilter) with the weights' role in `w_type`; false (with why) when
// no engine takes it.
bool build_single(CudaState* st, cudnnHandle_t h, const ops::Conv2dShape& s, const ConvKey& key,
                  const ConvOpAttrs& a, cudnnDataType_t w_type, const Roles& roles, ConvPlan& p, std::string& why) {
  const cudnnDataType_t t = dnn_type(s.dtype);
  CudnnDesc x = tensor(kX, t, activation(s.n, s.c, s.h, s.w, s.format), key.align);
  CudnnDesc w = tensor(kW, w_type, weights(s), key.align);
  CudnnDesc y = tensor(kY, t, activation(s.n, s.k, s.oh(), s.ow(), s.format), key.align);
  CudnnDesc conv = convolution(s);
  CudnnDesc op = conv_op(a, conv, x, w, y);
  p.uids = {kX, kW, kY};
  const bool ok = cudnn::build_plan(h, {op.get()}, filter_for(s), p, why, timer_for(st, p.uids, roles));
  for (CudnnDesc* d : {&x, &w, &y, &conv, &op}) p.keep.push_back(std::move(*d));
  return ok;
}

// The cached plan of `key`, built by `build` on the first call (never while
// the stream is captured); the workspace grows to what it needs.
ConvPlan& plan_for(CudaState* st, const ConvKey& key, const ops::Conv2dShape& s, Pass pass,
                   const std::function<std::unique_ptr<ConvPlan>()>& build) {
  auto it = st->conv_plans.find(key);
  if (it != st->conv_plans.end()) return *it->second;
  const std::string what = describe(s, pass);
  require_not_capturing(st, what);
  std::unique_ptr<ConvPlan> p = build();
  ensure_workspace(st, static_cast<size_t>(p->workspace), "a cuDNN convolution plan");
  st->paths[what] = p->how;
  return *st->conv_plans.emplace(key, std::move(p)).first->second;
}

// Seconds per run of roofline's bias/ReLU kernel over the forward's output.
double time_bias_act(CudaState* st, const ops::Conv2dShape& s, const Roles& roles, bool relu) {
  void* out = const_cast<void*>(roles.y);  // rewritten by the chosen plan's own run
  const auto* bias = static_cast<const float*>(roles.b);
  const auto run = [&] { launch_bias_act_any(st, s.dtype, s.format, s.n, s.k, s.oh() * s.ow(), out, bias, relu); };
  run();  // warm
  return detail::cuda_time(st, run, 3);
}

// With a bias or ReLU: the fused graph and the plain convolution followed by
// roofline's bias/ReLU kernel are both built and timed, and the faster kept
// (a runtime-fusion engine is not always as fast as the library's kernels:
// AlexNet's first layer, 11×11 over 3 channels in bf16, took 794 us fused,
// H200, 2026-11-27).
std::unique_ptr<ConvPlan> build_forward(CudaState* st, const ops::Conv2dShape& s, const ConvKey& key,
                                        const Roles& roles) {
  cudnnHandle_t h = cudnn_handle(st);
  const bool relu = key.relu;
  std::string fused_why;
  std::unique_ptr<ConvPlan> fused;
  if (key.bias || key.relu) {
    fused = std::make_unique<ConvPlan>();
    if (build_fused_forward(st, h, s, key, roles, *fused, fused_why)) {
      fused->fused = true;
      fused->workspace = fused->cudnn_workspace;
      fused->how = fmt::format("fused conv{}{} graph on {}", key.bias ? " + bias" : "", key.relu ? " + relu" : "",
                               fused->how);
    } else {
      fused.reset();
    }
  }
  auto p = std::make_unique<ConvPlan>();
  std::string why;
  if (!build_single(st, h, s, key, kForward, dnn_type(s.dtype), roles, *p, why)) {
    if (fused) return fused;
    no_engine(s, Pass::Forward, why);
  }
  p->workspace = p->cudnn_workspace;
  p->how = "conv graph on " + p->how;
  if (!(key.bias || key.relu)) return p;
  if (!fused) {
    p->how += ", then roofline's bias/ReLU kernel (no engine for the fused graph: " + fused_why + ")";
    return p;
  }
  const double epilogue = time_bias_act(st, s, roles, relu);
  if (p->seconds + epilogue < fused->seconds) {
    p->how += fmt::format(", then roofline's bias/ReLU kernel ({:.1f} us): faster than the fused graph ({:.1f} us, {})",
                          epilogue * 1e6, fused->seconds * 1e6, fused->how);
    return p;
  }
  fused->how += fmt::format(" (the plain graph and roofline's bias/ReLU kernel: {:.1f} us)",
                            (p->seconds + epilogue) * 1e6);
  return fused;
}

std::unique_ptr<ConvPlan> build_backward_input(CudaState* st, const ops::Conv2dShape& s, const ConvKey& key,
                                               const Roles& roles) {
  auto p = std::make_unique<ConvPlan>();
  std::string why;
  if (!build_single(st, cudnn_handle(st), s, key, kBackwardData, dnn_type(s.dtype), roles, *p, why))
    no_engine(s, Pass::InputGrad, why);
  p->workspace = p->cudnn_workspace;
  p->how = "backward-data graph on " + p->how;
  return p;
}

std::unique_ptr<ConvPlan> build_backward_weight(CudaState* st, const ops::Conv2dShape& s, const ConvKey& key,
                                                const Roles& roles) {
  cudnnHandle_t h = cudnn_handle(st);
  auto p = std::make_unique<ConvPlan>();
  // bf16/fp16 inputs: dw is written in their dtype and converted. cuDNN 9.19's
  // fallback engine 70, the one engine that offered fp32 dw from bf16/fp16
  // inputs on the H200 (2026-11-27), returned wrong values (relative error 1.4
  // against float64 at n=2 c=32 9x9 k=48 3x3), so that combination is not asked for.
  std::string why_f32 = "not asked for: 16-bit inputs write dw in their dtype";
  const std::int64_t wcount = s.k * s.cg() * s.r * s.s;
  if (s.dtype == DType::F32 && build_single(st, h, s, key, kBackwardFilter, CUDNN_DATA_FLOAT, roles, *p, why_f32)) {
    p->how = "backward-filter graph writing fp32 dw on " + p->how;
    p->workspace = p->cudnn_workspace;
  } else {
    if (s.dtype == DType::F32) no_engine(s, Pass::WeightGrad, why_f32);
    p = std::make_unique<ConvPlan>();
    std::string why;
    Roles lowp = roles;  // dw in dtype, to the candidate's own scratch
    lowp.w = nullptr;
    lowp.w_scratch = wcount * static_cast<std::int64_t>(dtype_size(s.dtype));
    if (!build_single(st, h, s, key, kBackwardFilter, dnn_type(s.dtype), lowp, *p, why))
      no_engine(s, Pass::WeightGrad, "with fp32 dw: " + why_f32 + "; with dw in " + to_string(s.dtype) + ": " + why);
    p->lowp_dw = true;
    p->how = fmt::format("backward-filter graph writing {} dw to the workspace on {}, converted to fp32 by roofline's "
                         "kernel ({})",
                         to_string(s.dtype), p->how, why_f32);
    p->workspace = align_up(p->cudnn_workspace) + wcount * static_cast<std::int64_t>(dtype_size(s.dtype));
  }
  if (s.bias) {
    const std::int64_t scratch = channel_sums_scratch(st, s.format, s.n, s.k, s.oh() * s.ow());
    p->workspace = std::max<std::int64_t>(p->workspace, scratch * static_cast<std::int64_t>(sizeof(float)));
    p->how += "; db by roofline's channel sums";
  }
  return p;
}

}  // namespace

void cudnn_conv_forward(const CudaState* cst, const ops::Conv2dShape& s, void* out, const void* in, const void* w,
                        const float* b) {
  CudaState* st = mut(cst);
  const bool relu = s.act == ops::Activation::ReLU;
  const cudnn::Scope scope([&] { return describe(s, Pass::Forward); });
  ConvKey key = key_of(s, 0, align_of({out, in, w, b}));
  key.bias = b != nullptr;
  key.relu = relu;
  const ConvPlan& p =
      plan_for(st, key, s, Pass::Forward, [&] { return build_forward(st, s, key, Roles{in, w, out, b}); });
  std::vector<const void*> ptrs = {in, w, out};  // kX, kW, kY
  if (p.fused && b) ptrs.push_back(b);           // kB
  cudnn::execute(st->dnn, p, ptrs, st->workspace.get());
  if (!p.fused) launch_bias_act_any(st, s.dtype, s.format, s.n, s.k, s.oh() * s.ow(), out, b, relu);
}

void cudnn_conv_backward_input(const CudaState* cst, const ops::Conv2dShape& s, void* din, const void* dpre,
                               const void* w) {
  CudaState* st = mut(cst);
  const cudnn::Scope scope([&] { return describe(s, Pass::InputGrad); });
  const ConvKey key = key_of(s, 1, align_of({din, dpre, w}));
  const ConvPlan& p = plan_for(st, key, s, Pass::InputGrad,
                               [&] { return build_backward_input(st, s, key, Roles{din, w, dpre}); });
  cudnn::execute(st->dnn, p, {din, w, dpre}, st->workspace.get());  // kX = dx, kW, kY = dy
}

void cudnn_conv_backward_weight(const CudaState* cst, const ops::Conv2dShape& s, float* dw, float* db,
                                const void* dpre, const void* in) {
  CudaState* st = mut(cst);
  const cudnn::Scope scope([&] { return describe(s, Pass::WeightGrad); });
  const ConvKey key = key_of(s, 2, align_of({dw, db, dpre, in}));
  const ConvPlan& p = plan_for(st, key, s, Pass::WeightGrad,
                               [&] { return build_backward_weight(st, s, key, Roles{in, dw, dpre}); });
  char* ws = st->workspace.get();
  if (p.lowp_dw) {
    // dw (k, c/groups, r, s) in dtype after cuDNN's own workspace, then fp32.
    void* dw_lowp = ws + align_up(p.cudnn_workspace);
    cudnn::execute(st->dnn, p, {in, dw_lowp, dpre}, ws);  // kX, kW = dw, kY = dy
    launch_to_f32(st, s.dtype, s.k * s.cg() * s.r * s.s, dw, dw_lowp);
  } else {
    cudnn::execute(st->dnn, p, {in, dw, dpre}, ws);
  }
  // cuDNN is done with the workspace (same stream): the sums' partials reuse it.
  if (db) launch_channel_sums(st, s.dtype, s.format, s.n, s.k, s.oh() * s.ow(), db, dpre, reinterpret_cast<float*>(ws));
}

std::string conv2d_path(const CudaState* st, const ops::Conv2dShape& s, Pass pass) {
  if (own_conv_applies(conv_kernel_override(), s.dtype, s.format, s.groups, s.c, s.k))
    return "roofline's own kernels (conv_pool.cu)";
  if (pass != Pass::InputGrad && im2col_applies(s)) {
    return pass == Pass::Forward && s.bias && im2col_bias_fits(s) ? "roofline's im2col matrix (im2col.cu) and a cuBLASLt GEMM, the fp32 bias in two 16-bit "
                          "padding columns"
                        : "roofline's im2col matrix (im2col.cu) and a cuBLASLt GEMM";
  }
  const auto it = st->paths.find(describe(s, pass));
  return it == st->paths.end() ? std::string() : it->second;
}

}  // namespace roofline::engine::cuda_ops
