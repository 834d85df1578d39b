// Data patterns shared by the ceiling kernels and their host-side checks:
// random words for input buffers (never zeros, never compressible), the value
// the write kernels store, and the starting values of the FMA chains.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define ROOFLINE_HD __host__ __device__ __forceinline__
#else
#define ROOFLINE_HD inline
#endif

namespace roofline::ceilings::gpu {

// A 32-bit integer mix (the "lowbias32" constants): consecutive inputs give
// unrelated outputs.
ROOFLINE_HD uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Word `index` of a buffer filled by fill_random(seed).
ROOFLINE_HD uint32_t random_word(uint32_t seed, uint64_t index) {
  return mix32(static_cast<uint32_t>(index) ^ mix32(seed ^ (static_cast<uint32_t>(index >> 32) * 0x9e3779b9U)));
}

// Word `w` of a buffer written by the DRAM write kernels (the pattern repeats
// every 16 KiB, the chunk of the bulk-store variant).
ROOFLINE_HD uint32_t write_word(uint32_t seed, uint64_t w) { return seed ^ static_cast<uint32_t>(w & 4095u); }

// Starting value of FMA chain `chain` of thread `tid` (lane 0 or 1 of packed
// types): k/64 with k in [32, 96), exact in FP64, FP32, FP16 and BF16.
ROOFLINE_HD float fma_start(uint32_t tid, int chain, int lane) {
  return static_cast<float>(32u + ((tid * 7u + static_cast<uint32_t>(chain) * 13u + static_cast<uint32_t>(lane) * 29u) & 63u)) /
         64.0f;
}

}  // namespace roofline::ceilings::gpu
