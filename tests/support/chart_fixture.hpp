// A synthetic chart: a GPU-like roof with measured and theoretical ceilings
// and two series of points (shared by the chart tests).
#pragma once
#include "roofline/report/chart.hpp"

namespace roofline::test {

inline report::Chart synthetic_chart() {
  using model::CeilingKind;
  using model::Source;
  model::Roofline roof("Test GPU");
  roof.add({"fp32.cuda", "FP32 CUDA cores", CeilingKind::Compute, 60e12, Source::Measured, "fp32", "cuda", ""});
  roof.add({"bf16.tensor", "BF16 tensor", CeilingKind::Compute, 800e12, Source::Measured, "bf16", "tensor", ""});
  roof.add({"dram.copy", "DRAM copy", CeilingKind::Memory, 2.9e12, Source::Measured, "", "dram", ""});
  roof.add({"l2.read", "L2 read", CeilingKind::Memory, 9e12, Source::Measured, "", "l2", ""});
  roof.add({"fp32.cuda", "FP32 datasheet", CeilingKind::Compute, 67e12, Source::Datasheet, "fp32", "cuda", ""});
  roof.add({"dram", "HBM3 datasheet", CeilingKind::Memory, 3.35e12, Source::Datasheet, "", "dram", ""});
  report::Chart c;
  c.title = "Test <chart> & friends";
  c.roofs.push_back({"Test GPU", roof});
  report::ChartSeries a{"sweep fp32", {}}, b{"kernels", {}};
  for (int k : {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}) {
    double ai = k / 4.0;
    a.points.push_back({"k=" + std::to_string(k), ai, std::min(30e12, ai * 2.8e12) * 0.95, 2.66e12, 95.0,
                        {{"k", std::to_string(k)}}});
  }
  b.points.push_back({"gemm <big>", 2000, 700e12, std::nullopt, std::nullopt, {}});
  b.points.push_back({"tiny", 0.01, 1e9, 1e11, 3.0, {}});
  c.series = {a, b};
  c.notes = {"a note"};
  return c;
}

}  // namespace roofline::test
