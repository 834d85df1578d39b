// The driver-API launch callbacks the range profiler acts on, and the stream a
// launch goes to, read from the parameter block CUPTI hands the callback.
// Included only from *_gpu.cpp files (it needs the CUDA and CUPTI headers).
#pragma once
#include <cuda.h>
#include <cupti.h>

namespace roofline::prof::detail {

// The launch callbacks we act on. Graph launches are only counted: auto range
// does not cover the kernels inside a graph.
inline bool is_kernel_launch(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return true;
    default:
      return false;
  }
}
inline bool is_graph_launch(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch || cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}
inline constexpr CUpti_CallbackId kLaunchCbids[] = {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                             CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
                                             CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                             CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
                                             CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
                                             CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
                                             CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
                                             CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz};

// The launch parameter blocks CUPTI hands us (functionParams), mirrored from
// generated_cuda_meta.h: that header needs the driver's internal API-version
// macros, and only the stream is read here. These layouts are the driver
// functions' argument lists, which are ABI-stable.
struct LaunchKernelArgs {  // cuLaunchKernel(_ptsz)
  CUfunction f;
  unsigned int grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem;
  CUstream stream;
  void** kernel_params;
  void** extra;
};
struct LaunchKernelExArgs {  // cuLaunchKernelEx(_ptsz)
  const CUlaunchConfig* config;
  CUfunction f;
  void** kernel_params;
  void** extra;
};
struct LaunchCooperativeArgs {  // cuLaunchCooperativeKernel(_ptsz)
  CUfunction f;
  unsigned int grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem;
  CUstream stream;
  void** kernel_params;
};

// The stream a launch goes to, and whether it is a per-thread-default-stream call.
inline CUstream launch_stream(CUpti_CallbackId cbid, const void* params, bool& ptsz) {
  ptsz = false;
  if (!params) return nullptr;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      ptsz = true;
      [[fallthrough]];
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      return static_cast<const LaunchKernelArgs*>(params)->stream;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      ptsz = true;
      [[fallthrough]];
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
      const CUlaunchConfig* c = static_cast<const LaunchKernelExArgs*>(params)->config;
      return c ? c->hStream : nullptr;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      ptsz = true;
      [[fallthrough]];
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      return static_cast<const LaunchCooperativeArgs*>(params)->stream;
    default:
      return nullptr;
  }
}

}  // namespace roofline::prof::detail
