#include "tests/support/sequential_ref.hpp"

#include <algorithm>
#include <cmath>

#include "roofline/engine/context.hpp"
#include "roofline/engine/model.hpp"
#include "roofline/engine/network.hpp"
#include "roofline/engine/rng.hpp"

namespace roofline::test {

using namespace roofline::engine;

SequentialStep sequential_step(const LayerGraph& g, const std::vector<std::vector<float>>& state,
                               const std::vector<float>& x, const std::vector<std::int32_t>& labels,
                               std::int64_t batch) {
  const Model m(g);
  Context ctx(Backend::CpuRef);
  Network net(m, ctx, batch);
  net.set_params(m.pack(state));
  std::copy(x.begin(), x.end(), net.input());
  net.forward(batch);
  const std::int64_t k = m.classes();
  SequentialStep out;
  out.logits.assign(net.logits(), net.logits() + batch * k);  // widened to double
  // d(mean cross-entropy)/d logits = (softmax − one-hot) / batch
  for (std::int64_t r = 0; r < batch; ++r) {
    const float* z = net.logits() + r * k;
    float* d = net.dlogits() + r * k;
    const float mx = *std::max_element(z, z + k);
    double sum = 0;
    for (std::int64_t j = 0; j < k; ++j) sum += std::exp(double(z[j]) - mx);
    for (std::int64_t j = 0; j < k; ++j)
      d[j] = static_cast<float>((std::exp(double(z[j]) - mx) / sum - (j == labels[r] ? 1.0 : 0.0)) / double(batch));
  }
  net.backward(batch);
  for (const auto& g : m.unpack(net.grads())) out.grads.emplace_back(g.begin(), g.end());
  return out;
}

std::vector<float> random_input(const Shape& sample, std::int64_t batch, std::uint64_t seed) {
  Rng r(seed);
  std::vector<float> x(static_cast<size_t>(batch * numel(sample)));
  for (auto& v : x) v = r.uniform(-1.0f, 1.0f);
  return x;
}

std::vector<std::int32_t> random_labels(std::int64_t batch, std::int64_t classes, std::uint64_t seed) {
  Rng r(seed);
  std::vector<std::int32_t> y(static_cast<size_t>(batch));
  for (auto& v : y) v = static_cast<std::int32_t>(std::min<double>(classes - 1, r.uniform(0.0f, 1.0f) * classes));
  return y;
}

}  // namespace roofline::test
