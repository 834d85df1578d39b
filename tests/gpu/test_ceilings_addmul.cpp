// The add+multiply ceiling kernels (<precision>.cuda.addmul) against a host
// replay of every chain, and the Hopper DMMA shapes (m16n8k4/8/16 f64)
// against a CPU product. Run on the lent H100 by tools/device/sweep.sh.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/poly_terms.cuh"
#include "roofline/cuda/check.hpp"
#include "roofline/cuda/memory.hpp"
#include "src/ceilings/gpu/dmma_layout.hpp"
#include "src/ceilings/gpu/kernels.hpp"
#include "src/ceilings/gpu/pattern.hpp"
#include "src/sweep/reference.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
using namespace roofline::ceilings::gpu;
namespace ref = roofline::sweep::ref;

namespace {

bool packed(FmaType t) { return t == FmaType::FP16x2 || t == FmaType::BF16x2; }
int value_bytes(FmaType t) { return t == FmaType::FP64 ? 8 : 4; }

double round_as(FmaType t, double v) {
  switch (t) {
    case FmaType::FP64: return v;
    case FmaType::FP32: return static_cast<double>(static_cast<float>(v));
    case FmaType::FP16x2: return ref::half_value(ref::to_half_bits(v));
    case FmaType::BF16x2: return ref::bf16_value(ref::to_bf16_bits(v));
  }
  return v;
}

// Lane `lane` of value `i` in a buffer of the type's values.
double value_at(FmaType t, const std::vector<uint8_t>& buf, size_t i, int lane) {
  switch (t) {
    case FmaType::FP64: {
      double d;
      std::memcpy(&d, buf.data() + 8 * i, 8);
      return d;
    }
    case FmaType::FP32: {
      float f;
      std::memcpy(&f, buf.data() + 4 * i, 4);
      return f;
    }
    case FmaType::FP16x2:
    case FmaType::BF16x2: {
      uint16_t h;
      std::memcpy(&h, buf.data() + 4 * i + 2 * lane, 2);
      return t == FmaType::FP16x2 ? ref::half_value(h) : ref::bf16_value(h);
    }
  }
  return 0;
}

// E multipliers (both lanes alike for packed types), in the device layout.
std::vector<uint8_t> encode(FmaType t, const std::vector<double>& xs) {
  std::vector<uint8_t> out;
  for (double x : xs) {
    uint8_t b[8] = {};
    switch (t) {
      case FmaType::FP64: std::memcpy(b, &x, 8); break;
      case FmaType::FP32: {
        const auto f = static_cast<float>(x);
        std::memcpy(b, &f, 4);
        break;
      }
      case FmaType::FP16x2:
      case FmaType::BF16x2: {
        const uint16_t h = t == FmaType::FP16x2 ? ref::to_half_bits(x) : ref::to_bf16_bits(x);
        std::memcpy(b, &h, 2);
        std::memcpy(b + 2, &h, 2);
        break;
      }
    }
    out.insert(out.end(), b, b + value_bytes(t));
  }
  return out;
}

// Runs the kernel on 2 blocks with store_all and compares every thread's r and
// p of every element with the host's replay (each add and multiply rounded).
void check_against_replay(FmaType t, const std::vector<double>& xs, int iters, const char* what) {
  const int e = addmul_elements(t);
  ASSERT_EQ(static_cast<int>(xs.size()), e);
  const int grid = 2;
  const size_t threads = static_cast<size_t>(grid) * kAddmulThreads;
  const std::vector<uint8_t> hx = encode(t, xs);
  cuda::DeviceBuffer<uint8_t> d_xs(hx.size()), out(threads * e * 2 * value_bytes(t));
  d_xs.upload(hx.data(), hx.size());
  CUDA_CHECK(cudaMemset(out.get(), 0xFF, out.bytes()));  // NaN in every format: unwritten values show
  launch_addmul(t, grid, iters, d_xs.get(), out.get(), true, 0, nullptr, nullptr);
  std::vector<uint8_t> h(out.size());
  out.download(h.data(), h.size());
  CUDA_CHECK(cudaDeviceSynchronize());
  const long long steps = static_cast<long long>(iters) * kernels::kPolyUnroll;
  size_t wrong = 0;
  for (size_t tid = 0; tid < threads; ++tid)
    for (int lane = 0; lane < (packed(t) ? 2 : 1); ++lane)
      for (int i = 0; i < e; ++i) {
        double r = fma_start(static_cast<uint32_t>(tid), 2 * i, lane);
        double p = fma_start(static_cast<uint32_t>(tid), 2 * i + 1, lane);
        const double x = round_as(t, xs[i]);
        for (long long s = 0; s < steps; ++s) {
          r = round_as(t, r + p);  // a sum or product of two such values is exact in double
          p = round_as(t, p * x);
        }
        const double gr = value_at(t, h, (tid * e + i) * 2, lane), gp = value_at(t, h, (tid * e + i) * 2 + 1, lane);
        if ((gr != r || gp != p) && wrong++ < 3)
          ADD_FAILURE() << what << " type " << static_cast<int>(t) << " thread " << tid << " lane " << lane
                        << " element " << i << ": r " << gr << " p " << gp << ", host r " << r << " p " << p;
      }
  EXPECT_EQ(wrong, 0u) << what;
}

}  // namespace

TEST(CeilingKernels, AddmulChainsEqualTheHostReplay) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> m(96, 127);  // x = m / 128 in [0.75, 1): exact in every format
  for (FmaType t : {FmaType::FP64, FmaType::FP32, FmaType::FP16x2, FmaType::BF16x2}) {
    std::vector<double> xs(static_cast<size_t>(addmul_elements(t)));
    for (double& x : xs) x = m(rng) / 128.0;
    check_against_replay(t, xs, 3, "random x");  // 48 terms: p decays, roundings on every step
    // The timing configuration: x = -1 keeps every value exact and bounded.
    std::vector<double> minus(xs.size(), -1.0);
    check_against_replay(t, minus, 101, "x = -1");
  }
}

TEST(CeilingKernels, AddmulGridFillsTheGpu) {
  ROOFLINE_REQUIRE_GPU();
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (FmaType t : {FmaType::FP64, FmaType::FP32, FmaType::FP16x2, FmaType::BF16x2}) {
    const int grid = addmul_grid(t, 0);
    EXPECT_GE(grid, 4 * sms) << "at least four blocks of 256 per SM (the overlap kernels' occupancy)";
    EXPECT_EQ(grid % sms, 0);
  }
}

TEST(CeilingKernels, DmmaHopperShapesAccumulateTheHostProduct) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  int major = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  if (major < 9) GTEST_SKIP() << "DMMA m16n8k{4,8,16} need compute capability 9.0";
  for (int k : {4, 8, 16}) {
    const auto o = dmma16_operands(k, std::random_device{}());
    const int grid = 2, iters = 5;
    cuda::DeviceBuffer<double> frag(o.frag.size()), out(static_cast<size_t>(grid) * kDmma16Threads * kDmma16Chains * 4);
    cuda::DeviceBuffer<int> err(1);
    frag.upload(o.frag.data(), o.frag.size());
    CUDA_CHECK(cudaMemset(out.get(), 0xFF, out.bytes()));
    CUDA_CHECK(cudaMemset(err.get(), 0, sizeof(int)));
    launch_dmma16(k, grid, iters, frag.get(), out.get(), true, nullptr, err.get(), nullptr);
    std::vector<double> h(out.size());
    out.download(h.data(), h.size());
    int e = -1;
    CUDA_CHECK(cudaMemcpy(&e, err.get(), sizeof e, cudaMemcpyDeviceToHost));
    EXPECT_EQ(e, 0) << "m16n8k" << k;
    size_t wrong = 0;
    for (size_t tid = 0; tid < static_cast<size_t>(grid) * kDmma16Threads; ++tid)
      for (int c = 0; c < kDmma16Chains; ++c)
        for (int i = 0; i < 4; ++i) {
          const double want = dmma16_expected(o, static_cast<int>(tid % 32), i, iters);
          const double got = h[(tid * kDmma16Chains + c) * 4 + i];
          if (got != want && wrong++ < 3)
            ADD_FAILURE() << "m16n8k" << k << " thread " << tid << " accumulator " << c << " value " << i << " = "
                          << got << ", expected " << want;
        }
    EXPECT_EQ(wrong, 0u) << "m16n8k" << k;
  }
}
