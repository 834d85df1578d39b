#include "tests/support/golden_init.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace roofline::test {

std::vector<float> hash_uniform(std::uint64_t stream, std::int64_t n, double lo, double hi) {
  std::vector<float> out(static_cast<size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint64_t z = static_cast<std::uint64_t>(i) + (stream << 32) + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 40) / 16777216.0;
    out[static_cast<size_t>(i)] = static_cast<float>(lo + (hi - lo) * u);
  }
  return out;
}

namespace {
bool ends_with(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}
}  // namespace

std::vector<std::vector<float>> golden_state(const engine::LayerGraph& g) {
  std::vector<std::vector<float>> out;
  const auto& params = g.params();
  for (size_t index = 0; index < params.size(); ++index) {
    const auto& p = params[index];
    const std::int64_t n = engine::numel(p.shape);
    double lo, hi;
    if (ends_with(p.name, "running_mean")) {
      lo = -0.2, hi = 0.2;
    } else if (ends_with(p.name, "running_var")) {
      lo = 0.5, hi = 1.5;
    } else if (p.shape.size() == 1 &&
               (p.name.find("bn") != std::string::npos || p.name.find("downsample.1") != std::string::npos)) {
      if (ends_with(p.name, "weight"))
        lo = 0.5, hi = 1.5;
      else
        lo = -0.2, hi = 0.2;
    } else if (p.shape.size() == 4) {
      const double b = std::sqrt(6.0 / static_cast<double>(p.shape[1] * p.shape[2] * p.shape[3]));
      lo = -b, hi = b;
    } else {
      // Linear weights and every bias: 1/√(the weight's second dimension), as the script does.
      std::int64_t fan_in = p.shape.size() == 2 ? p.shape[1] : 0;
      if (p.shape.size() == 1) {
        const std::string weight = p.name.substr(0, p.name.size() - 4) + "weight";
        for (const auto& q : params)
          if (q.name == weight) fan_in = q.shape[1];
      }
      const double b = 1.0 / std::sqrt(static_cast<double>(fan_in));
      lo = -b, hi = b;
    }
    out.push_back(hash_uniform(index, n, lo, hi));
  }
  return out;
}

std::vector<float> golden_input(std::int64_t batch, std::int64_t size) {
  return hash_uniform(1ull << 20, batch * 3 * size * size, -1.7, 1.7);
}

std::vector<std::int32_t> golden_labels(std::int64_t batch, std::int64_t classes) {
  std::vector<std::int32_t> y(static_cast<size_t>(batch));
  for (std::int64_t i = 0; i < batch; ++i) y[static_cast<size_t>(i)] = static_cast<std::int32_t>((7 * i + 3) % classes);
  return y;
}

std::vector<std::int64_t> golden_sample_index(std::int64_t n) {
  const std::int64_t s = std::min<std::int64_t>(n, 512);
  std::vector<std::int64_t> idx(static_cast<size_t>(s));
  for (std::int64_t k = 0; k < s; ++k) idx[static_cast<size_t>(k)] = k * n / s;
  return idx;
}

}  // namespace roofline::test
