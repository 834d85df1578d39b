// A synthetic chart: a GPU-like roof with measured and theoretical ceilings
// and two series of points (shared by the chart tests).
#pragma once
#include <algorithm>
#include <cmath>
#include <string>

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

// A device as the store gives it after `roofline ceilings` on a GPU: 20-odd
// ceilings measured and theoretical, and a ResNet-like training step's layers
// (three passes, repeated layers on the same spot, times from 2 µs to 0.6 ms)
// plus the whole step; the ceilings that matter are dram, l2, fp32.cuda and
// bf16.tensor.
inline report::Chart workload_chart() {
  using model::CeilingKind;
  using model::Source;
  model::Roofline roof("Test H200");
  struct C {
    const char* id;
    double v;
    const char* unit;
  };
  for (const C& c : {C{"fp64.cuda", 34e12, "cuda"}, C{"fp32.cuda", 60e12, "cuda"}, C{"fp16.cuda", 120e12, "cuda"},
                     C{"bf16.cuda", 120e12, "cuda"}, C{"fp64.tensor", 60e12, "tensor"}, C{"tf32.tensor", 400e12, "tensor"},
                     C{"bf16.tensor", 750e12, "tensor"}, C{"fp16.tensor", 760e12, "tensor"}, C{"fp8.tensor", 1500e12, "tensor"},
                     C{"int8.tensor", 1550e12, "tensor"}}) {
    roof.add({c.id, std::string(c.id) + " measured", CeilingKind::Compute, c.v, Source::Measured, "", c.unit, ""});
    roof.add({c.id, std::string(c.id) + " datasheet", CeilingKind::Compute, c.v * 1.3, Source::Datasheet, "", c.unit, ""});
  }
  for (const C& c : {C{"dram", 4.2e12, "dram"}, C{"l2", 9e12, "l2"}, C{"l1", 30e12, "l1"}, C{"smem", 28e12, "smem"},
                     C{"pcie", 55e9, "pcie"}})
    roof.add({c.id, std::string(c.id) + " measured", CeilingKind::Memory, c.v, Source::Measured, "", c.unit, ""});
  roof.add({"dram", "HBM3e datasheet", CeilingKind::Memory, 4.8e12, Source::Datasheet, "", "dram", ""});
  report::Chart c;
  c.title = "Roofline: Test H200 (GPU)";
  c.roofs.push_back({"Test H200", roof});
  const char* passes[] = {"forward", "input-grad", "weight-grad"};
  for (int pass = 0; pass < 3; ++pass) {
    report::ChartSeries s{std::string("resnet18 bf16 b128 train · ") + passes[pass], {}};
    for (int layer = 0; layer < 20; ++layer) {
      const int shape = layer / 4;  // four layers share each shape: the same spot, about
      const double ai = std::pow(10.0, 0.2 + 0.6 * shape + 0.1 * pass), seconds = 2e-6 * std::pow(1.6, layer % 13);
      const double flops = std::min(700e12, ai * 3.5e12) * (0.3 + 0.1 * (layer % 4 == 3 ? 1 : 0));
      report::ChartPoint pt;
      pt.name = "layer" + std::to_string(layer);
      pt.ai = ai;
      pt.flops = flops;
      pt.seconds = seconds;
      pt.fields = {{"Bound", "memory-bound"}};
      s.points.push_back(pt);
    }
    c.series.push_back(s);
  }
  report::ChartSeries steps{"whole steps", {}};
  report::ChartPoint step;
  step.name = "resnet18 bf16 b128 train";
  step.ai = 150, step.flops = 180e12, step.seconds = 7.9e-3;
  steps.points.push_back(step);
  c.series.push_back(steps);
  c.shown_ceilings = {"dram", "l2", "fp32.cuda", "bf16.tensor"};
  return c;
}

}  // namespace roofline::test
