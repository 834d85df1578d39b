// The sweep's inputs: a value in [0.5, 1) per element index, from an integer
// hash, computed the same way on the host and on the device. The GPU fills
// its buffers without a host copy, and the host recomputes any element to
// check a sample of outputs. Included from .cu files too: keep it free of
// anything but <cstdint>.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define ROOFLINE_HD __host__ __device__
#else
#define ROOFLINE_HD
#endif

namespace roofline::sweep {

// murmur3's 32-bit finaliser: every input bit moves every output bit.
ROOFLINE_HD inline std::uint32_t mix32(std::uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

// Element i's input. 23 random bits m give 0.5 + m * 2^-24, exact in float
// (the spacing of floats in [0.5, 1) is 2^-24), so host and device agree bit
// for bit whatever the compiler contracts.
ROOFLINE_HD inline float input_value(std::uint64_t i, std::uint32_t seed) {
  std::uint32_t h = mix32(static_cast<std::uint32_t>(i) ^ mix32(static_cast<std::uint32_t>(i >> 32) + seed * 0x9E3779B9u));
  std::uint32_t m = h >> 9;
  return 0.5f + static_cast<float>(m) * 5.9604644775390625e-8f;  // 2^-24
}

}  // namespace roofline::sweep
