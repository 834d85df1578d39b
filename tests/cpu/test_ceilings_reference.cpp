// What GPU figures are compared with (datasheet, else derived at the measured
// clock), and the wgmma operand tiles and their CPU product: plain C++, so it
// is checked here even though the kernels run only on the GPU machine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kernels/clock_probe.cuh"
#include "roofline/core/error.hpp"
#include "src/ceilings/gpu/gpu_reference.hpp"
#include "src/ceilings/gpu/tensor_tiles.hpp"

using namespace roofline;
using namespace roofline::ceilings::gpu;

namespace {

hw::GpuInfo fake_h100() {
  hw::GpuInfo g;
  g.name = "NVIDIA H100 80GB HBM3";
  g.cc_major = 9;
  g.cc_minor = 0;
  g.sms = 132;
  g.memory_bus_bits = 5120;
  g.mem_clock_max_mhz = 2619;
  g.bandwidth_theoretical = 2.0 * 2619e6 * 5120 / 8;
  return g;
}

measure::Figure figure(const std::string& name, const std::string& unit, double value, double clock_mhz) {
  measure::Figure f;
  f.name = name;
  f.unit = unit;
  f.value = value;
  f.measurement.clock_median_mhz = clock_mhz;
  return f;
}

}  // namespace

TEST(GpuReference, FigureNamesMapToCeilingIds) {
  EXPECT_EQ(reference_id("dram.read"), "dram");
  EXPECT_EQ(reference_id("dram.memcpy"), "dram");
  EXPECT_EQ(reference_id("l2.read"), "l2");
  EXPECT_EQ(reference_id("smem.read"), "smem");
  EXPECT_EQ(reference_id("pcie.h2d.pinned"), "pcie");
  EXPECT_EQ(reference_id("fp32.cuda"), "fp32.cuda");
  EXPECT_EQ(reference_id("bf16.tensor.cublaslt"), "bf16.tensor");
}

TEST(GpuReference, DerivedPeakIsAtTheMeasuredClock) {
  const auto g = fake_h100();
  auto f = figure("fp32.cuda", "FLOP/s", 60e12, 1755);
  attach_reference(f, g, model::Roofline(g.name));
  ASSERT_TRUE(f.reference.has_value());
  EXPECT_DOUBLE_EQ(*f.reference, 132.0 * 256 * 1755e6);
  EXPECT_EQ(f.reference_label.rfind("derived", 0), 0u) << f.reference_label;
  EXPECT_DOUBLE_EQ(f.params["peak_at_clock"].get<double>(), 132.0 * 256 * 1755e6);

  auto t = figure("bf16.tensor.cublaslt", "FLOP/s", 800e12, 1830);
  attach_reference(t, g, model::Roofline(g.name));
  ASSERT_TRUE(t.reference.has_value());
  EXPECT_NEAR(*t.reference, 989.4e12, 0.1e12) << "4096 FLOP per clock and SM: the dense datasheet figure at 1830 MHz";
}

TEST(GpuReference, DatasheetWinsOverDerivedButPeakAtClockStays) {
  const auto g = fake_h100();
  model::Roofline sheet(g.name);
  model::Ceiling c;
  c.id = "fp64.cuda";
  c.kind = model::CeilingKind::Compute;
  c.value = 34e12;
  c.source = model::Source::Datasheet;
  c.precision = "fp64";
  c.unit = "cuda";
  c.note = "H100 SXM5 datasheet";
  sheet.add(c);
  auto f = figure("fp64.cuda", "FLOP/s", 30e12, 1900);
  attach_reference(f, g, sheet);
  ASSERT_TRUE(f.reference.has_value());
  EXPECT_DOUBLE_EQ(*f.reference, 34e12);
  EXPECT_EQ(f.reference_label.rfind("datasheet", 0), 0u);
  EXPECT_DOUBLE_EQ(f.params["peak_at_clock"].get<double>(), 132.0 * 128 * 1900e6);
}

TEST(GpuReference, DramFallsBackToBusWidthTimesClock) {
  const auto g = fake_h100();
  auto f = figure("dram.read", "B/s", 3.0e12, 1980);
  attach_reference(f, g, model::Roofline(g.name));
  ASSERT_TRUE(f.reference.has_value());
  EXPECT_NEAR(*f.reference, 3.352e12, 0.001e12);
  EXPECT_FALSE(f.params.contains("peak_at_clock")) << "a bandwidth has no SM-clock peak";
}

// The first H100 run printed "dram.latency 351 ns (0.0% of datasheet)": a
// latency held against the DRAM bandwidth. Only rates have a reference.
TEST(GpuReference, LatenciesAndBytesInFlightHaveNoReference) {
  const auto g = fake_h100();
  model::Roofline sheet(g.name);
  model::Ceiling c;
  c.id = "dram";
  c.kind = model::CeilingKind::Memory;
  c.value = 3.35e12;
  c.source = model::Source::Datasheet;
  c.unit = "dram";
  sheet.add(c);
  for (auto [name, unit] : {std::pair<const char*, const char*>{"dram.latency", "s"}, {"l2.latency", "s"},
                            {"dram.bytes_in_flight", "B"}, {"l2.bytes_in_flight", "B"}, {"launch.latency", "s"}}) {
    auto f = figure(name, unit, 351e-9, 1980);
    attach_reference(f, g, sheet);
    EXPECT_FALSE(f.reference.has_value()) << name;
    EXPECT_TRUE(f.reference_label.empty()) << name << ": " << f.reference_label;
    EXPECT_FALSE(f.params.contains("peak_at_clock")) << name;
  }
  auto bw = figure("dram.read", "B/s", 3.1e12, 1980);  // a rate still gets its datasheet figure
  attach_reference(bw, g, sheet);
  ASSERT_TRUE(bw.reference.has_value());
  EXPECT_DOUBLE_EQ(*bw.reference, 3.35e12);
}

// An add + multiply loop does one FLOP per instruction: its reference is half
// the FMA figure, from the datasheet or derived at the measured clock.
TEST(GpuReference, AddMultiplyIsHeldAgainstHalfTheFmaRate) {
  const auto g = fake_h100();
  auto d = figure("fp32.cuda.addmul", "FLOP/s", 33e12, 1980);
  attach_reference(d, g, model::Roofline(g.name));
  ASSERT_TRUE(d.reference.has_value());
  EXPECT_DOUBLE_EQ(*d.reference, 0.5 * 132.0 * 256 * 1980e6);
  EXPECT_DOUBLE_EQ(d.params["peak_at_clock"].get<double>(), 0.5 * 132.0 * 256 * 1980e6);
  EXPECT_NE(d.reference_label.find("half of"), std::string::npos) << d.reference_label;
  model::Roofline sheet(g.name);
  model::Ceiling c;
  c.id = "fp16.cuda";
  c.kind = model::CeilingKind::Compute;
  c.value = 133.8e12;
  c.source = model::Source::Datasheet;
  c.precision = "fp16";
  c.unit = "cuda";
  sheet.add(c);
  auto h = figure("fp16.cuda.addmul", "FLOP/s", 50e12, 1980);
  attach_reference(h, g, sheet);
  ASSERT_TRUE(h.reference.has_value());
  EXPECT_DOUBLE_EQ(*h.reference, 66.9e12);
  EXPECT_EQ(h.reference_label.rfind("datasheet", 0), 0u) << h.reference_label;
  EXPECT_NE(h.reference_label.find("half"), std::string::npos) << h.reference_label;
  EXPECT_DOUBLE_EQ(h.params["peak_at_clock"].get<double>(), 0.5 * 132.0 * 512 * 1980e6);
}

TEST(GpuReference, UnknownArchitectureHasNoInventedPeak) {
  hw::GpuInfo g;
  g.cc_major = 7;
  g.cc_minor = 5;
  g.sms = 40;
  auto f = figure("bf16.tensor", "FLOP/s", 1e12, 1500);
  attach_reference(f, g, model::Roofline("T4"));
  EXPECT_FALSE(f.reference.has_value());
  g.cuda_cores_per_sm = 64;  // a unit count from the hardware description is used
  auto p = peak_at_clock(g, "fp32.cuda", 1500);
  ASSERT_TRUE(p.has_value());
  EXPECT_DOUBLE_EQ(*p, 40.0 * 128 * 1500e6);
}

TEST(ClockProbe, MhzFromCyclesOverNanoseconds) {
  kernels::ClockProbe p{1000, 1000 + 1755000, 5000000, 5000000 + 1000000};  // 1.755 M cycles in 1 ms
  EXPECT_NEAR(kernels::probe_mhz(p), 1755.0, 1e-9);
  kernels::ClockProbe short_run{0, 100, 0, 1000};  // 1 µs: below the timer's resolution
  EXPECT_EQ(kernels::probe_mhz(short_run), 0.0);
  kernels::ClockProbe unwritten{};
  EXPECT_EQ(kernels::probe_mhz(unwritten), 0.0);
}

TEST(TensorTiles, EncodingsOfKnownValues) {
  EXPECT_EQ(encode_fp16(1.0), 0x3C00);
  EXPECT_EQ(encode_fp16(-0.375), 0xB600);
  EXPECT_EQ(encode_bf16(1.0), 0x3F80);
  EXPECT_EQ(encode_bf16(-1.5), 0xBFC0);
  EXPECT_EQ(encode_e4m3(1.0), 0x38);
  EXPECT_EQ(encode_e4m3(0.5), 0x30);
  EXPECT_EQ(encode_e4m3(-1.5), 0xBC);
  EXPECT_EQ(encode_e4m3(3.0), 0x44);
  for (double v : {0.125, -0.625, 1.375, -3.0, 2.5}) {
    EXPECT_EQ(decode_fp16(encode_fp16(v)), v);
    EXPECT_EQ(decode_bf16(encode_bf16(v)), v);
    EXPECT_EQ(decode_e4m3(encode_e4m3(v)), v);
  }
  EXPECT_THROW(encode_e4m3(0.1), Error) << "not representable: refused, never rounded silently";
  EXPECT_THROW(encode_bf16(1.0 + 1.0 / 1024), Error);
}

TEST(TensorTiles, TilesAreExactNonzeroAndFreshPerSeed) {
  for (TensorType t : {TensorType::TF32, TensorType::FP16, TensorType::BF16, TensorType::FP8, TensorType::INT8}) {
    const TensorTiles a = make_tiles(t, 1), b = make_tiles(t, 2);
    EXPECT_EQ(a.k * element_bytes(t), TensorTiles::kRowBytes);
    EXPECT_EQ(a.a.size(), static_cast<size_t>(TensorTiles::kM) * TensorTiles::kRowBytes);
    EXPECT_EQ(a.b_values.size(), static_cast<size_t>(TensorTiles::kN) * a.k);
    for (double v : a.a_values) ASSERT_NE(v, 0.0) << to_string(t);
    EXPECT_NE(a.a, b.a) << "a new seed gives new data";
    // The bytes decode to the values.
    for (size_t i = 0; i < 50; ++i) {
      double v = 0;
      const uint8_t* p = a.a.data() + i * element_bytes(t);
      switch (t) {
        case TensorType::TF32: {
          float f;
          std::memcpy(&f, p, 4);
          v = f;
          break;
        }
        case TensorType::FP16: {
          uint16_t h;
          std::memcpy(&h, p, 2);
          v = decode_fp16(h);
          break;
        }
        case TensorType::BF16: {
          uint16_t h;
          std::memcpy(&h, p, 2);
          v = decode_bf16(h);
          break;
        }
        case TensorType::FP8: v = decode_e4m3(*p); break;
        case TensorType::INT8: v = static_cast<int8_t>(*p); break;
      }
      EXPECT_EQ(v, a.a_values[i]) << to_string(t) << " element " << i;
    }
  }
}

TEST(TensorTiles, ReferenceProductAndComparison) {
  const TensorTiles t = make_tiles(TensorType::BF16, 7);
  const auto ref = reference_product(t, 3);
  // One element by hand.
  double d = 0;
  for (int k = 0; k < t.k; ++k) d += t.a_values[5 * t.k + k] * t.b_values[17 * t.k + k];
  EXPECT_DOUBLE_EQ(ref[5 * TensorTiles::kN + 17], 3 * d);
  // Exact FP32 words pass; one wrong element is found and named.
  std::vector<uint32_t> bits(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    const float f = static_cast<float>(ref[i]);
    ASSERT_EQ(static_cast<double>(f), ref[i]) << "the reference is exact in FP32";
    std::memcpy(&bits[i], &f, 4);
  }
  EXPECT_TRUE(compare_product(TensorType::BF16, bits.data(), ref).ok());
  const float wrong = static_cast<float>(ref[100] + 0.125);
  std::memcpy(&bits[100], &wrong, 4);
  const TileCheck c = compare_product(TensorType::BF16, bits.data(), ref);
  EXPECT_EQ(c.mismatches, 1u);
  EXPECT_NE(c.first.find("D[0][100]"), std::string::npos) << c.first;
  const uint32_t nan = 0xFFFFFFFFu;  // the poison the GPU check writes first
  std::memcpy(&bits[100], &nan, 4);
  EXPECT_FALSE(compare_product(TensorType::BF16, bits.data(), ref).ok()) << "NaN never passes";
}
