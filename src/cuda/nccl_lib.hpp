// NCCL, loaded at run time (libnccl.so.2: PyTorch's environment holds it on
// the GPU machine, the CUDA toolkit's on the development machine), for the
// NCCL ceilings and the data-parallel trainer. A machine without it loses
// those two only: `why` says what is missing. CUDA builds only.
#pragma once
#include <nccl.h>

#include <string>

namespace roofline::cuda {

struct NcclLib {
  ncclResult_t (*get_version)(int*) = nullptr;
  ncclResult_t (*get_unique_id)(ncclUniqueId*) = nullptr;
  ncclResult_t (*comm_init_all)(ncclComm_t*, int, const int*) = nullptr;
  ncclResult_t (*comm_init_rank)(ncclComm_t*, int, ncclUniqueId, int) = nullptr;
  ncclResult_t (*comm_destroy)(ncclComm_t) = nullptr;
  ncclResult_t (*comm_abort)(ncclComm_t) = nullptr;
  ncclResult_t (*comm_get_async_error)(ncclComm_t, ncclResult_t*) = nullptr;
  ncclResult_t (*all_reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*all_gather)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*reduce_scatter)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                 cudaStream_t) = nullptr;
  ncclResult_t (*broadcast)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*group_start)() = nullptr;
  ncclResult_t (*group_end)() = nullptr;
  const char* (*error_string)(ncclResult_t) = nullptr;
  std::string why;  // empty when loaded
  int version = 0;  // NCCL_VERSION_CODE of the library loaded (22809: 2.28.9)

  // Throws Error(Device) naming `what` and NCCL's message unless r is ncclSuccess.
  void check(ncclResult_t r, const char* what) const;
  // "2.28.9"
  std::string version_string() const;
};

// The process's one loaded library (loaded on first use, never unloaded: NCCL
// keeps threads of its own). Check `why` before use.
const NcclLib& nccl_lib();

}  // namespace roofline::cuda
