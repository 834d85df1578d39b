// cuDNN 9's graph (backend) API, the little the engine needs of it: checked
// calls whose errors name the op and shape being built or run, tensor
// descriptors, and an execution plan found for an operation graph by the
// heuristics (mode A, then the fallback list) with engine configurations
// filtered by their numerical notes. Host code; included by *_gpu.cpp files.
#pragma once
#include <cudnn_graph.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/engine/cuda/cuda_state.hpp"

namespace roofline::engine::cudnn {

// The op a thread is building or running, for error messages: a cuDNN error
// raised while a Scope lives says "for <what>" (the op and its shape).
class Scope {
 public:
  explicit Scope(std::function<std::string()> what);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  static std::string current();  // "" outside any scope

 private:
  std::function<std::string()> what_;
  const Scope* prev_;
};

// cudnnGetErrorString, and cuDNN's last error message when it has one.
std::string status_text(cudnnStatus_t st);
// Error(Device) naming the call, the file and line, cuDNN's messages, the
// current Scope, and a hint by the status's category.
[[noreturn]] void throw_cudnn(cudnnStatus_t st, const char* call, const char* file, int line);

}  // namespace roofline::engine::cudnn

#define CUDNN_CHECK(call)                                                                       \
  do {                                                                                          \
    const cudnnStatus_t st_ = (call);                                                           \
    if (st_ != CUDNN_STATUS_SUCCESS) ::roofline::engine::cudnn::throw_cudnn(st_, #call, __FILE__, __LINE__); \
  } while (0)

// cudnnBackendSetAttribute, checked: the message names the attribute.
#define CUDNN_SET(desc, attr, type, count, values) \
  CUDNN_CHECK(cudnnBackendSetAttribute((desc), (attr), (type), (count), (values)))

namespace roofline::engine::cudnn {

CudnnDesc make(cudnnBackendDescriptorType_t type);
void finalize(const CudnnDesc& d, const char* what);

// A 4-D tensor: dims in (n, c, h, w) order, strides in elements (the memory
// format is in the strides), `align` bytes of pointer alignment promised.
// Virtual tensors are a graph's intermediates (never in memory).
CudnnDesc tensor(std::int64_t uid, cudnnDataType_t type, const std::int64_t dims[4], const std::int64_t strides[4],
                 std::int64_t align, bool is_virtual);

// Which engine configurations a plan may use.
struct EngineFilter {
  // True fp32: no engine with CUDNN_NUMERICAL_NOTE_TENSOR_CORE (that is how
  // TF32 is excluded). Engines that down-convert their inputs
  // (CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) or reduce in reduced
  // precision (..._REDUCED_PRECISION_REDUCTION) are never taken.
  bool no_tensor_cores = false;
  std::int64_t max_workspace = 0;  // bytes; configurations needing more are passed over
  size_t candidates = 8;           // with a timer: how many of mode A's configurations are timed
  // With a timer: also finalize and time up to this many of the fallback
  // list's configurations after mode A's (0: the fallback list only when mode
  // A has nothing). True fp32's large convolutions set it: FFT and Winograd
  // engines are on that list only (ResNet-18's layer4 convolutions at batch
  // 128: PyTorch's FFT plan against our mode-A implicit GEMM, 1.56 ms of a
  // 14.4 ms inference, H200, 2026-11-27).
  size_t fallback_candidates = 0;
};

// Times one execution plan needing `workspace` bytes on the caller's buffers:
// seconds per run (infinity when it fails). Empty: no autotuning.
using PlanTimer = std::function<double(cudnnBackendDescriptor_t plan, std::int64_t workspace)>;

// Finalizes an operation graph of `ops` and the first engine configuration
// the heuristics offer (mode A, then the fallback list) that passes `filter`
// and finalizes as an execution plan; with `time`, up to filter.candidates of
// them are finalized and timed and the fastest is taken (as PyTorch's
// cudnn.benchmark). On success fills plan.plan,
// plan.cudnn_workspace and appends to plan.keep and plan.how; returns true.
// Returns false with `why` (what was tried and why each failed) when the graph
// does not finalize or no configuration does: the caller decides whether that
// is an error (the fused forward falls back to the plain graph).
bool build_plan(cudnnHandle_t handle, const std::vector<cudnnBackendDescriptor_t>& ops, const EngineFilter& filter,
                ConvPlan& plan, std::string& why, const PlanTimer& time = {});

// Runs a plan: data pointers in the order of plan.uids, and the workspace.
void execute(cudnnHandle_t handle, const ConvPlan& plan, const std::vector<const void*>& pointers, void* workspace);
// The same for a bare execution plan and its tensor ids (autotuning's candidates).
void execute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan, const std::vector<std::int64_t>& uids,
             const std::vector<const void*>& pointers, void* workspace);

}  // namespace roofline::engine::cudnn
