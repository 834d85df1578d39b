// The DMMA m16n8k{4,8,16} fragment layout (PTX ISA) and the self-check's
// operands: every element of A, B and D is held by exactly one (lane, value),
// and the product is the plain one.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "roofline/core/error.hpp"
#include "src/ceilings/gpu/dmma_layout.hpp"

using namespace roofline;
using namespace roofline::ceilings::gpu;

TEST(DmmaLayout, EveryElementHasExactlyOneOwner) {
  for (int k : {4, 8, 16}) {
    std::set<std::pair<int, int>> a, b, d;
    for (int lane = 0; lane < 32; ++lane) {
      for (int i = 0; i < dmma16_a_per_lane(k); ++i) {
        const auto p = dmma16_a_pos(lane, i);
        ASSERT_TRUE(p.row >= 0 && p.row < 16 && p.col >= 0 && p.col < k) << "k=" << k;
        EXPECT_TRUE(a.insert({p.row, p.col}).second) << "k=" << k << " A[" << p.row << "][" << p.col << "] twice";
      }
      for (int i = 0; i < dmma16_b_per_lane(k); ++i) {
        const auto p = dmma16_b_pos(lane, i);
        ASSERT_TRUE(p.row >= 0 && p.row < k && p.col >= 0 && p.col < 8) << "k=" << k;
        EXPECT_TRUE(b.insert({p.row, p.col}).second) << "k=" << k;
      }
      for (int i = 0; i < 4; ++i) {
        const auto p = dmma16_d_pos(lane, i);
        ASSERT_TRUE(p.row >= 0 && p.row < 16 && p.col >= 0 && p.col < 8);
        EXPECT_TRUE(d.insert({p.row, p.col}).second);
      }
    }
    EXPECT_EQ(a.size(), static_cast<size_t>(16 * k));
    EXPECT_EQ(b.size(), static_cast<size_t>(k * 8));
    EXPECT_EQ(d.size(), 128u);
  }
}

TEST(DmmaLayout, KnownPositionsFromThePtxTables) {
  // m16n8k8 .f64: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); b1 (t+4, g); lane 13: g = 3, t = 1.
  EXPECT_EQ(dmma16_a_pos(13, 0).row, 3);
  EXPECT_EQ(dmma16_a_pos(13, 1).row, 11);
  EXPECT_EQ(dmma16_a_pos(13, 2).col, 5);
  EXPECT_EQ(dmma16_a_pos(13, 3).row, 11);
  EXPECT_EQ(dmma16_a_pos(13, 3).col, 5);
  EXPECT_EQ(dmma16_b_pos(13, 1).row, 5);
  EXPECT_EQ(dmma16_b_pos(13, 1).col, 3);
  // m16n8k16: a7 at (g+8, t+12); b3 at (t+12, g).
  EXPECT_EQ(dmma16_a_pos(13, 7).row, 11);
  EXPECT_EQ(dmma16_a_pos(13, 7).col, 13);
  EXPECT_EQ(dmma16_b_pos(13, 3).row, 13);
  // D: c0 (g, 2t), c3 (g+8, 2t+1).
  EXPECT_EQ(dmma16_d_pos(13, 0).col, 2);
  EXPECT_EQ(dmma16_d_pos(13, 3).row, 11);
  EXPECT_EQ(dmma16_d_pos(13, 3).col, 3);
  EXPECT_THROW(dmma16_a_per_lane(32), Error);
}

TEST(DmmaLayout, OperandsAreNonzeroIntegersAndTheProductIsPlain) {
  for (int k : {4, 8, 16}) {
    const auto o = dmma16_operands(k, 1234u + k);
    ASSERT_EQ(o.frag.size(), static_cast<size_t>(32) * (k / 2 + k / 4));
    for (double x : o.frag) {
      EXPECT_NE(x, 0.0);
      EXPECT_EQ(x, static_cast<double>(static_cast<int>(x)));
    }
    // The fragments hold what A and B hold.
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < k / 2; ++i) {
        const auto p = dmma16_a_pos(lane, i);
        EXPECT_EQ(o.frag[static_cast<size_t>(lane) * (k / 2) + i], o.a[static_cast<size_t>(p.row) * k + p.col]);
      }
    for (int r = 0; r < 16; ++r)
      for (int n = 0; n < 8; ++n) {
        double want = 0;
        for (int j = 0; j < k; ++j) want += o.a[static_cast<size_t>(r) * k + j] * o.b[static_cast<size_t>(j) * 8 + n];
        EXPECT_EQ(o.d[r * 8 + n], want);
      }
    const auto p = dmma16_d_pos(5, 2);
    EXPECT_EQ(dmma16_expected(o, 5, 2, 3), 3 * o.d[p.row * 8 + p.col]);
  }
  EXPECT_NE(dmma16_operands(8, 1).frag, dmma16_operands(8, 2).frag);
}
