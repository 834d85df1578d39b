// The wgmma tensor-core kernels in check mode: real A and B tiles (encoded here
// with CUDA's own host conversions, independently of the library's encoders),
// D poisoned first, compared with a CPU product for every precision and both
// shared-memory layouts, every block and warpgroup. This is what validates the
// instruction strings, the descriptors, the swizzle and the accumulator map.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "roofline/cuda/check.hpp"
#include "roofline/cuda/memory.hpp"
#include "src/ceilings/gpu/kernels.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
using namespace roofline::ceilings::gpu;

namespace {

bool is_sm90() {
  int major = 0, minor = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  return major == 9 && minor == 0;
}

struct Tiles {
  std::vector<uint8_t> a, b;        // 64 x 128 bytes, 256 x 128 bytes
  std::vector<double> av, bv;       // as numbers
  int k = 0;
};

// Small exact values: k/8 (FP8: k/2), 0 < |k| <= 12 (FP8: 6); INT8 up to 127.
Tiles make(TensorType t, std::mt19937& rng) {
  Tiles x;
  const int eb = t == TensorType::TF32 ? 4 : (t == TensorType::FP16 || t == TensorType::BF16) ? 2 : 1;
  x.k = 128 / eb;
  const int kmax = t == TensorType::INT8 ? 127 : t == TensorType::FP8 ? 6 : 12;
  const double scale = t == TensorType::INT8 ? 1.0 : t == TensorType::FP8 ? 0.5 : 0.125;
  std::uniform_int_distribution<int> mag(1, kmax), sign(0, 1);
  auto fill = [&](int rows, std::vector<uint8_t>& bytes, std::vector<double>& vals) {
    bytes.assign(static_cast<size_t>(rows) * 128, 0);
    vals.resize(static_cast<size_t>(rows) * x.k);
    for (size_t i = 0; i < vals.size(); ++i) {
      const int k = mag(rng) * (sign(rng) ? -1 : 1);
      const float v = static_cast<float>(k * scale);
      uint8_t* p = bytes.data() + i * eb;
      switch (t) {
        case TensorType::TF32: std::memcpy(p, &v, 4); break;
        case TensorType::FP16: {
          const __half h = __float2half_rn(v);
          std::memcpy(p, &h, 2);
          vals[i] = static_cast<double>(__half2float(h));
          continue;
        }
        case TensorType::BF16: {
          const __nv_bfloat16 h = __float2bfloat16_rn(v);
          std::memcpy(p, &h, 2);
          vals[i] = static_cast<double>(__bfloat162float(h));
          continue;
        }
        case TensorType::FP8: {
          const __nv_fp8_e4m3 q(v);
          std::memcpy(p, &q, 1);
          vals[i] = static_cast<double>(static_cast<float>(q));
          continue;
        }
        case TensorType::INT8: *p = static_cast<uint8_t>(static_cast<int8_t>(k)); break;
      }
      vals[i] = v;
    }
  };
  fill(64, x.a, x.av);
  fill(256, x.b, x.bv);
  return x;
}

}  // namespace

TEST(WgmmaKernels, CheckModeMatchesCpuProductForEveryPrecisionAndLayout) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  if (!is_sm90()) GTEST_SKIP() << "the wgmma kernels are sm_90a code (H100/H200)";
  std::mt19937 rng(std::random_device{}());
  const int grid = 2, passes = 3;
  for (TensorType t : {TensorType::TF32, TensorType::FP16, TensorType::BF16, TensorType::FP8, TensorType::INT8}) {
    for (bool swizzle : {true, false}) {
      SCOPED_TRACE(std::string(to_string(t)) + (swizzle ? " swizzle128" : " no swizzle"));
      const Tiles x = make(t, rng);
      const WgmmaInfo w = wgmma_info(t);
      ASSERT_EQ(w.k_tile, x.k);
      // The FP32/INT32 product, times the passes the kernel accumulates.
      std::vector<double> ref(64 * 256);
      for (int i = 0; i < 64; ++i)
        for (int j = 0; j < 256; ++j) {
          double s = 0;
          for (int k = 0; k < x.k; ++k) s += x.av[i * x.k + k] * x.bv[j * x.k + k];
          ref[i * 256 + j] = passes * s;
        }
      cuda::DeviceBuffer<uint8_t> a(x.a.size()), b(x.b.size());
      a.upload(x.a.data(), x.a.size());
      b.upload(x.b.data(), x.b.size());
      const size_t per_wg = 64 * 256;
      cuda::DeviceBuffer<uint32_t> d(per_wg * w.warpgroups * grid);
      CUDA_CHECK(cudaMemset(d.get(), 0xFF, d.bytes()));  // NaN / -1 where nothing was written
      launch_wgmma(t, swizzle, grid, passes, a.get(), b.get(), d.get(), true, nullptr, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<uint32_t> h(d.size());
      d.download(h.data(), h.size());
      CUDA_CHECK(cudaDeviceSynchronize());
      for (int tile = 0; tile < w.warpgroups * grid; ++tile) {
        size_t wrong = 0;
        for (size_t e = 0; e < per_wg; ++e) {
          const uint32_t bits = h[tile * per_wg + e];
          double got;
          if (t == TensorType::INT8) {
            got = static_cast<int32_t>(bits);
          } else {
            float f;
            std::memcpy(&f, &bits, 4);
            got = f;
          }
          // Exact in FP32; the slack is for a narrower internal accumulator only.
          const double tol = t == TensorType::INT8 ? 0.0 : std::ldexp(std::fabs(ref[e]) + 1.0, -12);
          if (!(std::fabs(got - ref[e]) <= tol) && wrong++ < 3)
            ADD_FAILURE() << "block " << tile / w.warpgroups << " warpgroup " << tile % w.warpgroups << " D["
                          << e / 256 << "][" << e % 256 << "] = " << got << ", expected " << ref[e];
        }
        EXPECT_EQ(wrong, 0u) << "tile " << tile;
      }
    }
  }
}

TEST(WgmmaKernels, ThroughputModeRunsOnEverySmAndProbesTheClock) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  if (!is_sm90()) GTEST_SKIP() << "the wgmma kernels are sm_90a code (H100/H200)";
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::mt19937 rng(std::random_device{}());
  for (TensorType t : {TensorType::BF16, TensorType::INT8}) {
    const Tiles x = make(t, rng);
    cuda::DeviceBuffer<uint8_t> a(x.a.size()), b(x.b.size());
    a.upload(x.a.data(), x.a.size());
    b.upload(x.b.data(), x.b.size());
    const WgmmaInfo w = wgmma_info(t);
    cuda::DeviceBuffer<uint32_t> d(static_cast<size_t>(sms) * w.threads);
    cuda::DeviceBuffer<ClockProbe> probe(1);
    CUDA_CHECK(cudaMemset(probe.get(), 0, sizeof(ClockProbe)));
    launch_wgmma(t, true, sms, 20000, a.get(), b.get(), d.get(), false, probe.get(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    ClockProbe p{};
    CUDA_CHECK(cudaMemcpy(&p, probe.get(), sizeof p, cudaMemcpyDeviceToHost));
    EXPECT_GT(kernels::probe_mhz(p), 100.0) << to_string(t);
  }
}

TEST(WgmmaKernels, RefusesOtherArchitecturesClearly) {
  ROOFLINE_REQUIRE_GPU();
  CUDA_CHECK(cudaSetDevice(0));
  if (is_sm90()) GTEST_SKIP() << "this GPU runs the wgmma kernels";
  try {
    launch_wgmma(TensorType::BF16, true, 1, 1, nullptr, nullptr, nullptr, true, nullptr, nullptr);
    FAIL() << "expected Unsupported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("sm_90a"), std::string::npos);
  }
}
