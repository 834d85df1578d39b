// Dropout's mask: a counter-based hash of (seed, step, element index), one
// definition for the CPU (.cpp) and the GPU (.cu), so that every backend keeps
// the same elements bit for bit and a mask needs no state and no storage (the
// backward pass recomputes it). No CUDA headers: plain C++ where __CUDACC__ is
// not defined.
//
// The mixer is SplitMix64's finaliser (Stafford's "Mix13" constants, the one
// of java.util.SplittableRandom): full avalanche over 64 bits.
//   key(seed, step)   = mix(seed ^ mix(step + γ))           once per call
//   bits(key, i)      = mix(key + ⌊i/2⌋), its low 32 bits for even i and its high
//                       32 bits for odd i (one hash per two elements)
//   kept(i)           = bits ≥ threshold, threshold = ⌊p·2³²⌋ (exact in double
//                       for a float p), so P(kept) = 1 − p to 2⁻³²; p = 0 keeps
//                       everything and p = 1 nothing.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define ROOFLINE_DROPOUT_HD __host__ __device__ __forceinline__
#else
#define ROOFLINE_DROPOUT_HD inline
#endif

namespace roofline::kernels {

constexpr std::uint64_t kDropoutGamma = 0x9e3779b97f4a7c15ull;  // 2^64 / golden ratio

ROOFLINE_DROPOUT_HD std::uint64_t dropout_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The key of one call: from the seed and the step counter (null step = 0).
ROOFLINE_DROPOUT_HD std::uint64_t dropout_key(std::uint64_t seed, std::int32_t step) {
  return dropout_mix(seed ^ dropout_mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(step)) + kDropoutGamma));
}

// ⌊p·2³²⌋ for p in [0, 1] (p·2³² is exact in double).
ROOFLINE_DROPOUT_HD std::uint64_t dropout_threshold(float p) {
  const double t = static_cast<double>(p) * 4294967296.0;
  return t <= 0.0 ? 0ull : (t >= 4294967296.0 ? 4294967296ull : static_cast<std::uint64_t>(t));
}

// The scale of kept elements, 1/(1 − p) in fp32 (0 when p = 1: nothing is kept).
ROOFLINE_DROPOUT_HD float dropout_scale(float p) { return p < 1.0f ? 1.0f / (1.0f - p) : 0.0f; }

// The 64 random bits of elements 2j (low half) and 2j + 1 (high half).
ROOFLINE_DROPOUT_HD std::uint64_t dropout_pair(std::uint64_t key, std::uint64_t j) { return dropout_mix(key + j); }

// The 32 random bits of element i.
ROOFLINE_DROPOUT_HD std::uint32_t dropout_bits(std::uint64_t key, std::uint64_t i) {
  const std::uint64_t h = dropout_pair(key, i >> 1);
  return static_cast<std::uint32_t>((i & 1) ? (h >> 32) : h);
}

ROOFLINE_DROPOUT_HD bool dropout_kept(std::uint64_t key, std::uint64_t threshold, std::uint64_t i) {
  return static_cast<std::uint64_t>(dropout_bits(key, i)) >= threshold;
}

}  // namespace roofline::kernels

#undef ROOFLINE_DROPOUT_HD
