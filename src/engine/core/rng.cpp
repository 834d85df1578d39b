#include "roofline/engine/rng.hpp"

#include <cmath>

namespace roofline::engine {

namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Rng::Rng(std::uint64_t seed) : seed_(seed) {
  std::uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

float Rng::uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }

double Rng::uniform_double() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

float Rng::normal() {
  // Box-Muller on doubles; u1 in (0, 1] so the log is finite.
  double u1 = 1.0 - uniform_double();
  double u2 = uniform_double();
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

std::uint64_t Rng::below(std::uint64_t n) {
  if (n <= 1) return 0;
  // Rejection sampling: accept values below the largest multiple of n.
  std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  for (;;) {
    std::uint64_t v = next();
    if (v < limit) return v % n;
  }
}

Rng Rng::fork(std::uint64_t stream) const {
  std::uint64_t x = seed_ ^ (0xd1b54a32d192ed03ULL * (stream + 1));
  return Rng(splitmix64(x));
}

std::vector<std::int32_t> random_permutation(std::int64_t n, Rng& rng) {
  std::vector<std::int32_t> p(static_cast<size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) p[static_cast<size_t>(i)] = static_cast<std::int32_t>(i);
  for (std::int64_t i = n - 1; i > 0; --i) {
    auto j = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(i + 1)));
    std::swap(p[static_cast<size_t>(i)], p[static_cast<size_t>(j)]);
  }
  return p;
}

}  // namespace roofline::engine
