// The grid of a ceiling kernel that runs persistently: as many blocks as fit
// on every SM at once, so each SM holds the most warps the kernel allows.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"

namespace roofline::ceilings::gpu {

// Blocks of `threads` threads and `smem` bytes of dynamic shared memory that fit
// on every SM of `device` at once, times the SMs. Throws Error(Device) with
// `what` (e.g. "the FMA kernel does not fit on an SM") when not one block fits.
template <class Kernel>
int persistent_grid(Kernel kernel, int threads, size_t smem, int device, const std::string& what) {
  int per_sm = 0, sms = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (per_sm < 1) throw_device(what);
  return per_sm * sms;
}

}  // namespace roofline::ceilings::gpu
