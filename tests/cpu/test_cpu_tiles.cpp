// The fast CPU path's per-ISA code: every ISA this CPU has against the float64
// reference (through the op harness, in child processes with
// ROOFLINE_CPU_ISA set), ROOFLINE_CPU_ISA reaching the loops as well as the
// kernels, the models' exact shapes at batch 1 and 3, and the property the
// thread-count independence rests on: a GEMM tile's values do not depend on
// how the output was split into tiles.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "roofline/engine/op_harness.hpp"
#include "roofline/engine/rng.hpp"
#include "roofline/hardware/cpu_isa.hpp"
#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/tiles.hpp"
#include "tests/support/cli.hpp"

using namespace roofline::engine;
namespace hw = roofline::hw;
using roofline::test::run_cli;

namespace {

std::vector<float> randn(Rng& r, std::int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<float>(r.normal());
  return v;
}

// Splits [0, n) at random points.
std::vector<std::int64_t> cuts(Rng& r, std::int64_t n) {
  std::vector<std::int64_t> c = {0};
  while (c.back() < n) c.push_back(std::min<std::int64_t>(n, c.back() + 1 + static_cast<std::int64_t>(r.below(9))));
  return c;
}

// A convolution the direct path takes (it is padded) with rows wider than the
// 256 columns its weight gradient keeps per-column sums for, so each row's sum
// is a vector reduction whose order follows the ISA's width. Two images: one
// chunk, so the op's weight gradient is the per-image blocks' sums as they are.
struct DirectWgradCase {
  ops::Conv2dShape s;
  std::vector<float> in, dpre;

  DirectWgradCase() {
    s.n = 2, s.c = 2, s.h = 4, s.w = 300, s.k = 2, s.r = 3, s.s = 3, s.stride = 1, s.pad = 1;
    Rng rng(11);
    in = randn(rng, s.n * s.c * s.h * s.w);
    dpre = randn(rng, s.n * s.k * s.oh() * s.ow());
  }
  std::int64_t weights() const { return s.k * s.c * s.r * s.s; }
  // The weight gradient as `isa`'s direct-convolution blocks compute it.
  std::vector<float> blocks(hw::Isa isa) const {
    std::vector<double> pw(static_cast<size_t>(weights()), 0.0), pb(static_cast<size_t>(s.k), 0.0);
    for (std::int64_t n = 0; n < s.n; ++n)
      fast::tiles(isa).direct_weight_grad(s, n, pw.data(), pb.data(), dpre.data(), in.data());
    return std::vector<float>(pw.begin(), pw.end());
  }
  // The weight gradient through the op, on the ISA this process chose.
  std::vector<float> op() const {
    std::vector<float> dw(static_cast<size_t>(weights())), db(static_cast<size_t>(s.k));
    fast::conv2d_backward_weight_direct(s, dw.data(), db.data(), dpre.data(), in.data());
    return dw;
  }
};

}  // namespace

TEST(CpuKernels, EveryIsaOfThisCpuMatchesTheReference) {
  for (hw::Isa isa : hw::supported_isas()) {
    const std::string name = hw::isa_name(isa);
    auto r = run_cli({"--db", ":memory:", "ops", "--check", "--device", "cpu", "--cases", "12"},
                     {"ROOFLINE_CPU_ISA=" + name, "OMP_NUM_THREADS=4"});
    EXPECT_EQ(r.exit_code, 0) << name << ":\n" << r.out << r.err;
    EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << name << ":\n" << r.out;
  }
}

TEST(CpuKernels, AnUnknownOrMissingIsaIsAClearError) {
  auto r = run_cli({"--db", ":memory:", "ops", "--check", "--device", "cpu", "--op", "linear", "--cases", "1"},
                   {"ROOFLINE_CPU_ISA=avx1024"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("ROOFLINE_CPU_ISA=avx1024"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("avx512, avx2 or sse2"), std::string::npos) << r.err;
  if (hw::detected_isa() == hw::Isa::Avx512) GTEST_SKIP() << "this CPU has every ISA the kernels are built for";
  r = run_cli({"--db", ":memory:", "ops", "--check", "--device", "cpu", "--op", "linear", "--cases", "1"},
              {"ROOFLINE_CPU_ISA=avx512"});
  EXPECT_EQ(r.exit_code, 6) << r.err;
  EXPECT_NE(r.err.find("supports at most"), std::string::npos) << r.err;
}

// ROOFLINE_CPU_ISA reaches the loops as well as the kernels: with
// ROOFLINE_CPU_ISA=sse2 the direct convolution's weight gradient is the SSE2
// blocks', bit for bit. The ISA is chosen once per process, so the op runs in a
// fresh one (a "threadsafe" death test runs this test again, alone).
TEST(CpuKernels, TheChosenIsaReachesTheLoopsToo) {
  const DirectWgradCase c;
  if (c.blocks(hw::Isa::Sse2) == c.blocks(hw::detected_isa()))
    GTEST_SKIP() << "this CPU's widest ISA and SSE2 give the same bits here, so the check cannot tell them apart";
  const std::string style = GTEST_FLAG_GET(death_test_style);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("ROOFLINE_CPU_ISA", "sse2", 1);
        std::exit(c.op() == c.blocks(hw::Isa::Sse2) ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  GTEST_FLAG_SET(death_test_style, style);
}

TEST(CpuKernels, ModelShapesMatchTheReferenceAtBatch1And3) {
  Context ctx(Backend::Cpu);
  for (const auto& op : harness::op_names()) {
    if (!harness::skip_reason(op, Backend::Cpu).empty()) continue;  // the NHWC and grouped convolutions
    for (std::int64_t batch : {1, 3}) {
      Rng rng(std::hash<std::string>{}(op) ^ static_cast<std::uint64_t>(batch));
      auto results = harness::check_model_shapes(op, ctx, rng, batch);
      ASSERT_FALSE(results.empty()) << op;
      for (const auto& r : results) EXPECT_TRUE(r.passed()) << r.describe();
      std::string why;  // the bf16/fp16 model shapes: refused by the CPU, said so
      if (const auto skipped = harness::count_skipped(results, &why); skipped > 0)
        std::cout << "[   NOTE   ] " << op << " at batch " << batch << ": " << skipped << " of " << results.size()
                  << " checks skipped: " << why << "\n";
    }
  }
}

// The ReLU epilogues keep NaN (v <= 0 ? 0 : v, as torch.relu), so a diverging
// run shows in its outputs; a max(v, 0) would turn NaN into 0.
TEST(CpuKernels, ReluEpiloguesKeepNaN) {
  const fast::TileSet& k = fast::tiles();
  Rng rng(3);
  const std::int64_t M = 9, N = 50, K = 20;
  std::vector<float> A = randn(rng, M * K), B = randn(rng, N * K), Bn = randn(rng, K * N), bias = randn(rng, N);
  A[size_t(4 * K + 3)] = NAN;  // row 4
  std::vector<float> c_nt(size_t(M * N)), c_bc(size_t(M * N));
  k.gemm_nt({K, A.data(), K, B.data(), K, c_nt.data(), N, bias.data(), true}, 0, M, 0, N);
  fast::GemmBc bc{K, A.data(), K, 1, Bn.data(), N, c_bc.data(), N};
  bc.bias = bias.data();
  bc.relu = true;
  k.gemm_bc(bc, 0, M, 0, N);
  int zeros = 0;
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      const size_t e = size_t(i * N + j);
      if (i == 4) {
        EXPECT_TRUE(std::isnan(c_nt[e])) << "gemm_nt column " << j;
        EXPECT_TRUE(std::isnan(c_bc[e])) << "gemm_bc column " << j;
      } else {
        EXPECT_GE(c_bc[e], 0.f);
        zeros += c_bc[e] == 0.f;
      }
    }
  EXPECT_GT(zeros, 0);  // the ReLU did cut
}

TEST(CpuKernels, GemmTilesDoNotDependOnTheTiling) {
  const fast::TileSet& k = fast::tiles();
  Rng rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const std::int64_t M = 1 + static_cast<std::int64_t>(rng.below(40)),
                       N = 1 + static_cast<std::int64_t>(rng.below(90)),
                       K = 1 + static_cast<std::int64_t>(rng.below(70));
    const std::vector<float> A = randn(rng, M * K), B = randn(rng, N * K), Bn = randn(rng, K * N), bias = randn(rng, N);
    // C = A·Bᵀ + bias, ReLU (the forward) and C = A·Bn (the backward form), whole and in random tiles.
    std::vector<float> whole(static_cast<size_t>(M * N)), tiled(whole.size()), whole_bc(whole.size()),
        tiled_bc(whole.size());
    const fast::GemmNt nt{K, A.data(), K, B.data(), K, whole.data(), N, bias.data(), true};
    fast::GemmNt nt_t = nt;
    nt_t.C = tiled.data();
    k.gemm_nt(nt, 0, M, 0, N);
    // Every other trial the broadcast form's epilogue too (the inference forward over transposed weights).
    const bool bc_epilogue = trial % 2 == 1;
    fast::GemmBc bc{K, A.data(), K, 1, Bn.data(), N, whole_bc.data(), N};
    if (bc_epilogue) {
      bc.bias = bias.data();
      bc.relu = true;
    }
    fast::GemmBc bc_t = bc;
    bc_t.C = tiled_bc.data();
    k.gemm_bc(bc, 0, M, 0, N);
    const auto mi = cuts(rng, M), nj = cuts(rng, N);
    for (size_t a = 0; a + 1 < mi.size(); ++a)
      for (size_t b = 0; b + 1 < nj.size(); ++b) {
        k.gemm_nt(nt_t, mi[a], mi[a + 1], nj[b], nj[b + 1]);
        k.gemm_bc(bc_t, mi[a], mi[a + 1], nj[b], nj[b + 1]);
      }
    const std::string shape = "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K);
    for (size_t i = 0; i < whole.size(); ++i) {
      ASSERT_EQ(tiled[i], whole[i]) << "gemm_nt " << shape << " element " << i;
      ASSERT_EQ(tiled_bc[i], whole_bc[i]) << "gemm_bc " << shape << " element " << i;
    }
    // And both against float64.
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j) {
        double s = 0, sb = 0, mag = 0, magb = 0;
        for (std::int64_t q = 0; q < K; ++q) {
          s += double(A[size_t(i * K + q)]) * B[size_t(j * K + q)];
          sb += double(A[size_t(i * K + q)]) * Bn[size_t(q * N + j)];
          mag += std::abs(double(A[size_t(i * K + q)]) * B[size_t(j * K + q)]);
          magb += std::abs(double(A[size_t(i * K + q)]) * Bn[size_t(q * N + j)]);
        }
        s += bias[size_t(j)];
        s = s <= 0 ? 0 : s;
        EXPECT_NEAR(whole[size_t(i * N + j)], s, 1e-5 * (mag + std::abs(bias[size_t(j)]))) << shape;
        if (bc_epilogue) {
          sb += bias[size_t(j)];
          sb = sb <= 0 ? 0 : sb;
          magb += std::abs(bias[size_t(j)]);
        }
        EXPECT_NEAR(whole_bc[size_t(i * N + j)], sb, 1e-5 * magb) << shape << (bc_epilogue ? " (bias, ReLU)" : "");
      }
  }
}
