// Fragment layout of mma.sync.aligned.m16n8k{4,8,16}.row.col.f64 (PTX ISA,
// sm_90): which element of A (16 x k), B (k x 8) and D (16 x 8) each lane's
// registers hold, and operands of small integers with their exact product, for
// the DMMA kernels' self-check and tests. Plain C++: tested on the CPU too.
#pragma once
#include <cstdint>
#include <vector>

namespace roofline::ceilings::gpu {

struct MatrixPos {
  int row = 0, col = 0;
};

// k = 4, 8 or 16. Values per lane: A k/2, B k/4, C/D 4.
int dmma16_a_per_lane(int k);
int dmma16_b_per_lane(int k);
bool dmma16_shape_ok(int k);
// groupID g = lane / 4, t = lane % 4: a_i at (g + 8 (i % 2), t + 4 (i / 2)),
// b_i at (t + 4 i, g), d_i at (g + 8 (i / 2), 2 t + (i % 2)).
MatrixPos dmma16_a_pos(int lane, int i);
MatrixPos dmma16_b_pos(int lane, int i);
MatrixPos dmma16_d_pos(int lane, int i);

struct Dmma16Operands {
  int k = 0;
  std::vector<double> a, b;  // A (16 x k) and B (k x 8), row-major
  std::vector<double> frag;  // as the kernel reads them: A fragments by lane, then B fragments by lane
  std::vector<double> d;     // A . B (16 x 8), row-major: exact (integers)
};
// A and B of nonzero integers in [-8, 8], fresh for each seed.
Dmma16Operands dmma16_operands(int k, uint32_t seed);
// The value lane `lane` holds in D element i after `passes` products.
double dmma16_expected(const Dmma16Operands& o, int lane, int i, int passes);

}  // namespace roofline::ceilings::gpu
