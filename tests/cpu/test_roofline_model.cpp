#include <gtest/gtest.h>

#include <cmath>

#include "roofline/model/roofline.hpp"

using namespace roofline::model;

namespace {
Ceiling compute(const char* id, const char* prec, double v, Source s = Source::Measured, const char* unit = "cuda") {
  Ceiling c;
  c.id = id;
  c.kind = CeilingKind::Compute;
  c.precision = prec;
  c.unit = unit;
  c.value = v;
  c.source = s;
  return c;
}
Ceiling memory(const char* id, const char* level, double v, Source s = Source::Measured) {
  Ceiling c;
  c.id = id;
  c.kind = CeilingKind::Memory;
  c.unit = level;
  c.value = v;
  c.source = s;
  return c;
}
}  // namespace

TEST(RooflineModel, AttainableIsMinOfRoofAndSlope) {
  EXPECT_DOUBLE_EQ(attainable(1.0, 60e12, 3e12), 3e12);
  EXPECT_DOUBLE_EQ(attainable(100.0, 60e12, 3e12), 60e12);
  EXPECT_DOUBLE_EQ(attainable(20.0, 60e12, 3e12), 60e12);  // exactly at the ridge
  EXPECT_DOUBLE_EQ(attainable(0.0, 60e12, 3e12), 0.0);
  EXPECT_DOUBLE_EQ(ridge_point(60e12, 3e12), 20.0);
}

TEST(RooflineModel, TimeFloorIsTheLargerOfComputeAndMemoryTime) {
  // 1 TFLOP at 50 TFLOP/s = 20 ms; 30 GB at 3 TB/s = 10 ms.
  EXPECT_NEAR(time_floor(1e12, 30e9, 50e12, 3e12), 0.02, 1e-12);
  EXPECT_NEAR(time_floor(1e9, 30e9, 50e12, 3e12), 0.01, 1e-12);
}

TEST(RooflineModel, PlacementClassifiesBoundAndEfficiency) {
  auto c = compute("fp32.cuda", "fp32", 60e12);
  auto m = memory("dram", "dram", 3e12);
  // AI 0.25 (seed polynomial k=1): memory-bound; 2.4 TB/s achieved is 80%.
  double bytes = 8.0 * (1 << 26), flops = 2.0 * (1 << 26);
  double secs = bytes / 2.4e12;
  Placement p = place(flops, bytes, secs, c, m);
  EXPECT_EQ(p.bound, Bound::Memory);
  EXPECT_NEAR(p.ai, 0.25, 1e-12);
  EXPECT_NEAR(p.efficiency, 0.8, 1e-9);
  EXPECT_EQ(classify(p), "memory-bound");
  // Compute-bound at 30 TFLOP/s of 60: efficiency 0.5.
  Placement q = place(1e12, 1e9, 1e12 / 30e12, c, m);
  EXPECT_EQ(q.bound, Bound::Compute);
  EXPECT_NEAR(q.efficiency, 0.5, 1e-9);
  EXPECT_EQ(classify(q), "compute-bound");
  // Far below both roofs: latency-bound.
  Placement r = place(1e9, 1e9, 1.0, c, m);
  EXPECT_EQ(classify(r), "latency-bound");
  // No FLOPs at all (a copy) is judged by bandwidth.
  Placement s = place(0, 2e9, 2e9 / 2.7e12, c, m);
  EXPECT_NEAR(s.efficiency, 0.9, 1e-9);
  EXPECT_EQ(classify(s), "memory-bound");
}

TEST(RooflineModel, MeasuredCeilingsArePreferredOverDatasheet) {
  Roofline r("test");
  r.add(compute("bf16.tensor", "bf16", 989e12, Source::Datasheet, "tensor"));
  r.add(compute("bf16.tensor", "bf16", 800e12, Source::Measured, "tensor"));
  r.add(compute("bf16.cuda", "bf16", 120e12, Source::Measured, "cuda"));
  r.add(memory("dram", "dram", 3.35e12, Source::Datasheet));
  r.add(memory("dram", "dram", 3.0e12, Source::Measured));
  ASSERT_NE(r.compute("bf16"), nullptr);
  EXPECT_EQ(r.compute("bf16")->value, 800e12);
  EXPECT_EQ(r.compute("bf16", "cuda")->value, 120e12);
  EXPECT_EQ(r.memory("dram")->value, 3.0e12);
  EXPECT_EQ(r.find("dram", Source::Datasheet)->value, 3.35e12);
  EXPECT_EQ(r.memory("l2"), nullptr);
  EXPECT_EQ(r.compute("fp8"), nullptr);
  // Re-adding the same id and source replaces it.
  r.add(compute("bf16.tensor", "bf16", 810e12, Source::Measured, "tensor"));
  EXPECT_EQ(r.compute("bf16")->value, 810e12);
  EXPECT_EQ(r.ceilings().size(), 5u);
}
