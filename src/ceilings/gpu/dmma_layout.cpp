#include "src/ceilings/gpu/dmma_layout.hpp"

#include <random>
#include <string>

#include "roofline/core/error.hpp"

namespace roofline::ceilings::gpu {

bool dmma16_shape_ok(int k) { return k == 4 || k == 8 || k == 16; }

namespace {
void require_shape(int k) {
  if (!dmma16_shape_ok(k))
    throw Error(ErrorKind::Internal, "DMMA m16n8k" + std::to_string(k) + " is not a shape (k is 4, 8 or 16)");
}
}  // namespace

int dmma16_a_per_lane(int k) {
  require_shape(k);
  return k / 2;
}
int dmma16_b_per_lane(int k) {
  require_shape(k);
  return k / 4;
}

MatrixPos dmma16_a_pos(int lane, int i) { return {lane / 4 + 8 * (i % 2), lane % 4 + 4 * (i / 2)}; }
MatrixPos dmma16_b_pos(int lane, int i) { return {lane % 4 + 4 * i, lane / 4}; }
MatrixPos dmma16_d_pos(int lane, int i) { return {lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2}; }

Dmma16Operands dmma16_operands(int k, uint32_t seed) {
  const int na = dmma16_a_per_lane(k), nb = dmma16_b_per_lane(k);
  Dmma16Operands o;
  o.k = k;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> v(1, 8), sign(0, 1);
  auto draw = [&] { return static_cast<double>(v(rng) * (sign(rng) ? -1 : 1)); };
  o.a.resize(static_cast<size_t>(16) * k);
  o.b.resize(static_cast<size_t>(k) * 8);
  for (double& x : o.a) x = draw();
  for (double& x : o.b) x = draw();
  o.frag.resize(static_cast<size_t>(32) * (na + nb));
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < na; ++i) {
      const MatrixPos p = dmma16_a_pos(lane, i);
      o.frag[static_cast<size_t>(lane) * na + i] = o.a[static_cast<size_t>(p.row) * k + p.col];
    }
    for (int i = 0; i < nb; ++i) {
      const MatrixPos p = dmma16_b_pos(lane, i);
      o.frag[static_cast<size_t>(32) * na + static_cast<size_t>(lane) * nb + i] = o.b[static_cast<size_t>(p.row) * 8 + p.col];
    }
  }
  o.d.assign(16 * 8, 0.0);
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 8; ++n)
      for (int j = 0; j < k; ++j) o.d[r * 8 + n] += o.a[static_cast<size_t>(r) * k + j] * o.b[static_cast<size_t>(j) * 8 + n];
  return o;
}

double dmma16_expected(const Dmma16Operands& o, int lane, int i, int passes) {
  const MatrixPos p = dmma16_d_pos(lane, i);
  return passes * o.d[p.row * 8 + p.col];
}

}  // namespace roofline::ceilings::gpu
