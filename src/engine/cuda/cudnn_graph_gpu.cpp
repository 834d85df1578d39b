// cuDNN's graph (backend) API: checked calls, tensors, plans found by the
// heuristics with the engine filter, execution. See cudnn_graph.hpp.
#include "src/engine/cuda/cudnn_graph.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "roofline/core/error.hpp"

namespace roofline::engine {

namespace cudnn {

namespace {

thread_local const Scope* g_scope = nullptr;

// The hint for a failed call, by the status's category (CUDNN_STATUS_CATEGORY).
std::string hint_for(cudnnStatus_t st) {
  const int category = CUDNN_STATUS_CATEGORY(static_cast<int>(st));
  if (st == CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED || st == CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH ||
      st == CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE)
    return "cuDNN's engine libraries were not found or do not match: on the GPU machine put PyTorch's cuDNN "
           "(site-packages/nvidia/cudnn/lib) on LD_LIBRARY_PATH (docs/gpu-machine.md)";
  if (st == CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING)
    return "cuDNN's runtime-compiled engines need NVRTC: put the CUDA toolkit's lib64 on LD_LIBRARY_PATH";
  switch (category) {
    case 2000:
      return "a bug in how roofline describes this operation to cuDNN: report it with the shape above";
    case 3000:
      return "cuDNN has no engine for this shape, dtype and layout on this GPU: report the shape; "
             "an NCHW fp32 layer with tf32 allowed, or another layout, may run";
    case 4000:
    case 5000:
      return "cuDNN failed inside; rerun under compute-sanitizer, and report the shape with cuDNN's message";
    default:
      return "check the cuDNN installation (cudnnGetVersion must be 9.x)";
  }
}

const char* note_name(cudnnBackendNumericalNote_t n) {
  switch (n) {
    case CUDNN_NUMERICAL_NOTE_TENSOR_CORE:
      return "tensor_core";
    case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS:
      return "down_convert_inputs";
    case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION:
      return "reduced_precision_reduction";
    case CUDNN_NUMERICAL_NOTE_FFT:
      return "fft";
    case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC:
      return "nondeterministic";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD:
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4:
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6:
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13:
      return "winograd";
    case CUDNN_NUMERICAL_NOTE_STRICT_NAN_PROP:
      return "strict_nan_prop";
    default:
      return "other";
  }
}

const char* mode_name(cudnnBackendHeurMode_t m) { return m == CUDNN_HEUR_MODE_A ? "A" : "fallback"; }

// The configurations one heuristic mode offers (empty, with a reason, when
// the heuristic does not finalize for this graph).
std::vector<CudnnDesc> configurations(const CudnnDesc& graph, cudnnBackendHeurMode_t mode, CudnnDesc& heur,
                                      std::string& why) {
  heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  cudnnBackendDescriptor_t g = graph.get();
  CUDNN_SET(heur.get(), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
  CUDNN_SET(heur.get(), CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  const cudnnStatus_t st = cudnnBackendFinalize(heur.get());
  if (st != CUDNN_STATUS_SUCCESS) {
    why += fmt::format("heuristic {} did not finalize ({}); ", mode_name(mode), status_text(st));
    return {};
  }
  std::int64_t count = 0;
  CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                       &count, nullptr));
  std::vector<CudnnDesc> cfgs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (std::int64_t i = 0; i < count; ++i) {
    cfgs.push_back(make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    raw.push_back(cfgs.back().get());
  }
  std::int64_t got = 0;
  if (count > 0)
    CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                         count, &got, raw.data()));
  cfgs.resize(static_cast<size_t>(std::clamp<std::int64_t>(got, 0, count)));
  if (cfgs.empty()) why += fmt::format("heuristic {} offered no engine; ", mode_name(mode));
  return cfgs;
}

}  // namespace

Scope::Scope(std::function<std::string()> what) : what_(std::move(what)), prev_(g_scope) { g_scope = this; }
Scope::~Scope() { g_scope = prev_; }
std::string Scope::current() { return g_scope && g_scope->what_ ? g_scope->what_() : std::string(); }

std::string status_text(cudnnStatus_t st) {
  std::string text = cudnnGetErrorString(st);
  char last[1024] = {0};
  cudnnGetLastErrorString(last, sizeof last);
  if (last[0]) text += std::string(": ") + last;
  return text;
}

void throw_cudnn(cudnnStatus_t st, const char* call, const char* file, int line) {
  std::string what = fmt::format("cuDNN error {} ({}) in {} at {}:{}", static_cast<int>(st), status_text(st), call,
                                 file, line);
  const std::string op = Scope::current();
  if (!op.empty()) what += ", for " + op;
  throw Error(ErrorKind::Device, what, hint_for(st));
}

CudnnDesc make(cudnnBackendDescriptorType_t type) {
  cudnnBackendDescriptor_t d = nullptr;
  CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d));
  return CudnnDesc(d);
}

void finalize(const CudnnDesc& d, const char* what) {
  const cudnnStatus_t st = cudnnBackendFinalize(d.get());
  if (st != CUDNN_STATUS_SUCCESS) throw_cudnn(st, what, __FILE__, __LINE__);
}

CudnnDesc tensor(std::int64_t uid, cudnnDataType_t type, const std::int64_t dims[4], const std::int64_t strides[4],
                 std::int64_t align, bool is_virtual) {
  CudnnDesc t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const bool virt = is_virtual;
  CUDNN_SET(t.get(), CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  CUDNN_SET(t.get(), CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  CUDNN_SET(t.get(), CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
  CUDNN_SET(t.get(), CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
  CUDNN_SET(t.get(), CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
  CUDNN_SET(t.get(), CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
  finalize(t, "cudnnBackendFinalize(tensor descriptor)");
  return t;
}

bool build_plan(cudnnHandle_t handle, const std::vector<cudnnBackendDescriptor_t>& ops, const EngineFilter& filter,
                ConvPlan& plan, std::string& why, const PlanTimer& time) {
  CudnnDesc graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  CUDNN_SET(graph.get(), CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
            static_cast<std::int64_t>(ops.size()), ops.data());
  CUDNN_SET(graph.get(), CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  cudnnStatus_t st = cudnnBackendFinalize(graph.get());
  if (st != CUDNN_STATUS_SUCCESS) {
    why = fmt::format("the operation graph did not finalize ({})", status_text(st));
    return false;
  }
  struct Candidate {
    CudnnDesc cfg, engine, exec;
    std::int64_t workspace = 0, global_index = -1;
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    size_t choice = 0, of = 0;
    std::string notes;
  };
  std::vector<Candidate> found;
  std::vector<CudnnDesc> heurs;  // the configurations' heuristics, kept alive with them
  int offered = 0, tensor_core = 0, other_notes = 0, too_big = 0, failed = 0;
  std::string first_failure;
  const size_t wanted = time ? std::max<size_t>(filter.candidates, 1) : 1;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    // The fallback list when mode A has nothing, or to time more of it (filter.fallback_candidates).
    const bool more = time && filter.fallback_candidates > 0 && mode == CUDNN_HEUR_MODE_FALLBACK;
    if (!found.empty() && !more) break;
    const size_t limit = found.size() + (found.empty() ? wanted : filter.fallback_candidates);
    CudnnDesc heur;
    std::vector<CudnnDesc> cfgs = configurations(graph, mode, heur, why);
    for (size_t i = 0; i < cfgs.size() && found.size() < limit; ++i) {
      ++offered;
      CudnnDesc engine = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      std::int64_t n = 0;
      CUDNN_CHECK(cudnnBackendGetAttribute(cfgs[i].get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                           1, &n, engine.out()));
      cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
      std::int64_t note_count = 0;
      CUDNN_CHECK(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                           CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &note_count, notes));
      note_count = std::clamp<std::int64_t>(note_count, 0, CUDNN_NUMERICAL_NOTE_TYPE_COUNT);
      bool has_tc = false, excluded = false;
      std::string note_list;
      for (std::int64_t j = 0; j < note_count; ++j) {
        // Only the tensor-core engines are TF32 for fp32 data. (Leaving out
        // Winograd, FFT and nondeterministic engines as well changed no error
        // of the op harness on the H200, 2026-11-27, and made fp32 training
        // slower: 60 ms a ResNet-18 step at batch 128.)
        has_tc |= notes[j] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
        excluded |= notes[j] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS ||
                    notes[j] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION;
        note_list += (note_list.empty() ? "" : ",") + std::string(note_name(notes[j]));
      }
      if (filter.no_tensor_cores && has_tc) {
        ++tensor_core;
        continue;
      }
      if (excluded) {
        ++other_notes;
        continue;
      }
      std::int64_t global_index = -1;
      CUDNN_CHECK(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                                           &global_index));
      CudnnDesc exec = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      cudnnBackendDescriptor_t cfg = cfgs[i].get();
      CUDNN_SET(exec.get(), CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
      CUDNN_SET(exec.get(), CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
      st = cudnnBackendFinalize(exec.get());
      if (st != CUDNN_STATUS_SUCCESS) {
        ++failed;
        if (first_failure.empty())
          first_failure = fmt::format("engine {}: {}", global_index, status_text(st));
        continue;
      }
      std::int64_t workspace = 0;
      CUDNN_CHECK(cudnnBackendGetAttribute(exec.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                           &n, &workspace));
      if (workspace > filter.max_workspace) {
        ++too_big;
        continue;
      }
      found.push_back({std::move(cfgs[i]), std::move(engine), std::move(exec), workspace, global_index, mode, i + 1,
                       cfgs.size(), note_list.empty() ? "none" : note_list});
    }
    if (!found.empty()) {  // (every list whose configurations may be among the found ones)
      heurs.push_back(std::move(heur));
      for (auto& c : cfgs)
        if (c.get()) heurs.push_back(std::move(c));  // the ones not taken are released with the plan
    }
  }
  if (found.empty()) {
    why += fmt::format(
        "{} engine configurations offered: {} passed over as tensor-core (TF32) engines for true fp32, {} as "
        "down-converting or reduced-precision, {} needing more than {} MiB of workspace, {} failed to finalize{}{}",
        offered, tensor_core, other_notes, too_big, filter.max_workspace >> 20, failed,
        first_failure.empty() ? "" : " (first: ", first_failure.empty() ? "" : first_failure + ")");
    return false;
  }
  // Autotuning (as cudnn.benchmark): each candidate run on the call's own
  // buffers, the fastest kept.
  size_t best = 0;
  std::string tuned;
  if (time) {
    std::vector<double> t(found.size());
    for (size_t i = 0; i < found.size(); ++i) t[i] = time(found[i].exec.get(), found[i].workspace);
    best = static_cast<size_t>(std::min_element(t.begin(), t.end()) - t.begin());
    plan.seconds = t[best];
    tuned = found.size() == 1 ? fmt::format("; timed {:.1f} us", t[0] * 1e6)
                              : fmt::format("; autotuned: fastest of {} timed ({:.1f} us; the heuristic's first "
                                            "{:.1f} us)",
                                            found.size(), t[best] * 1e6, t[0] * 1e6);
  }
  Candidate& c = found[best];
  plan.plan = c.exec.get();
  plan.cudnn_workspace = c.workspace;
  plan.how += fmt::format("cuDNN engine {} (heuristic {}, choice {} of {}; notes: {}; workspace {} B{})",
                          c.global_index, mode_name(c.mode), c.choice, c.of, c.notes, c.workspace, tuned);
  plan.keep.push_back(std::move(graph));
  for (auto& h : heurs) plan.keep.push_back(std::move(h));
  plan.keep.push_back(std::move(c.cfg));
  plan.keep.push_back(std::move(c.engine));
  plan.keep.push_back(std::move(c.exec));
  return true;
}

void execute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan, const std::vector<std::int64_t>& uids,
             const std::vector<const void*>& pointers, void* workspace) {
  ROOFLINE_ASSERT(pointers.size() == uids.size(), "cuDNN variant pack: one pointer per tensor id");
  CudnnDesc pack = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  std::vector<void*> data;
  for (const void* p : pointers) data.push_back(const_cast<void*>(p));  // cuDNN's API takes void*; inputs are read
  CUDNN_SET(pack.get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<std::int64_t>(uids.size()),
            uids.data());
  CUDNN_SET(pack.get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
            static_cast<std::int64_t>(data.size()), data.data());
  CUDNN_SET(pack.get(), CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  finalize(pack, "cudnnBackendFinalize(variant pack)");
  CUDNN_CHECK(cudnnBackendExecute(handle, plan, pack.get()));
}

void execute(cudnnHandle_t handle, const ConvPlan& plan, const std::vector<const void*>& pointers, void* workspace) {
  execute(handle, plan.plan, plan.uids, pointers, workspace);
}

}  // namespace cudnn

cudnnHandle_t cudnn_handle(CudaState* s) {
  if (s->dnn) return s->dnn;
  const size_t version = cudnnGetVersion();
  if (version / 10000 != CUDNN_MAJOR)
    throw Error(ErrorKind::Unsupported,
                fmt::format("the cuDNN library loaded is version {}; roofline was built against cuDNN {}.{}", version,
                            CUDNN_MAJOR, CUDNN_MINOR),
                "put cuDNN 9 first on LD_LIBRARY_PATH (on the GPU machine PyTorch's, docs/gpu-machine.md)");
  CUDA_CHECK(cudaSetDevice(s->device));
  cudnnHandle_t h = nullptr;
  CUDNN_CHECK(cudnnCreate(&h));
  const cudnnStatus_t st = cudnnSetStream(h, s->stream.get());
  if (st != CUDNN_STATUS_SUCCESS) {
    cudnnDestroy(h);
    cudnn::throw_cudnn(st, "cudnnSetStream", __FILE__, __LINE__);
  }
  s->dnn = h;
  return h;
}

}  // namespace roofline::engine
