// A small seeded generator (xoshiro256**, seeded by splitmix64) whose stream
// is the same on every platform and compiler, unlike <random>'s
// distributions. Weights are drawn on the host from it and uploaded, so CPU
// and GPU runs with the same seed start from identical parameters.
#pragma once
#include <cstdint>
#include <vector>

namespace roofline::engine {

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0);
  std::uint64_t next();
  // Uniform in [0, 1) with 24 random bits (exactly representable as float).
  float uniform();
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
  double uniform_double();  // 53 random bits
  float normal();           // Box-Muller
  // Uniform integer in [0, n) without modulo bias.
  std::uint64_t below(std::uint64_t n);
  // A generator for a sub-stream (an epoch, a layer): independent of how much
  // of this one was used.
  Rng fork(std::uint64_t stream) const;

 private:
  std::uint64_t s_[4];
  std::uint64_t seed_;
};

// A random permutation of 0..n-1 (Fisher-Yates).
std::vector<std::int32_t> random_permutation(std::int64_t n, Rng& rng);

}  // namespace roofline::engine
