// roofline explain: demangling, name parsing, short names, the summary
// sentence, and the command itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "roofline/core/strings.hpp"
#include "roofline/profiler/explain.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using namespace roofline::prof;

TEST(Explain, DemanglesItaniumNamesAndLeavesOthersAlone) {
  EXPECT_EQ(demangle_kernel_name("_ZN7cutlass6KernelI42cutlass_80_simt_sgemm_128x32_8x5_nn_align1EEvNT_6ParamsE"),
            "void "
            "cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::"
            "Params)");
  EXPECT_EQ(demangle_kernel_name("ampere_sgemm_32x32_sliced1x4_tn"), "ampere_sgemm_32x32_sliced1x4_tn");
  EXPECT_EQ(demangle_kernel_name("_Znot_a_valid_name"), "_Znot_a_valid_name");
  EXPECT_EQ(demangle_kernel_name("  my_kernel  "), "my_kernel");
}

TEST(Explain, SeedSgemmReadsLikeTheHandDecoding) {
  // Seed 000 §2.3.1 decoded this name by hand; every claim must be there, with its token.
  KernelInfo k = explain_kernel("ampere_sgemm_32x32_sliced1x4_tn");
  ASSERT_TRUE(k.recognised);
  EXPECT_EQ(k.library, "cuBLAS");
  EXPECT_EQ(k.op, KernelOp::Gemm);
  EXPECT_EQ(k.sm, 80);
  EXPECT_EQ(k.tensor_cores, TensorCores::No);
  EXPECT_TRUE(k.fp32_on_cuda_cores());
  EXPECT_TRUE(k.is_matmul_like());
  EXPECT_FALSE(k.is_elementwise_like());
  EXPECT_EQ(k.field("split_k")->evidence, "sliced1x4");
  EXPECT_EQ(k.field("layout")->evidence, "tn");
  EXPECT_EQ(
      k.sentence,
      "cuBLAS SGEMM for Ampere (sm_80), FP32 on CUDA cores (no tensor cores), 32×32 tiles (M×N per thread block), "
      "K loop of each tile split across 4 warps (sliced1x4), A transposed, B not (tn).");
  // Fields come in a fixed order: what it is before how it is built.
  EXPECT_EQ(k.fields[0].key, "library");
  EXPECT_EQ(k.fields[2].key, "operation");
}

TEST(Explain, TensorCoreKernelsAreNotFp32OnCudaCores) {
  EXPECT_FALSE(explain_kernel("cutlass_tensorop_s1688gemm_tf32_128x128_32x3_tn_align4").fp32_on_cuda_cores());
  EXPECT_FALSE(explain_kernel("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT").fp32_on_cuda_cores());
  // Unknown tensor-core use is not "no": a kernel is blamed only on evidence.
  KernelInfo sss = explain_kernel("nvjet_sss_128x64_64x4_1x1_v_bz_TNT");
  EXPECT_EQ(sss.tensor_cores, TensorCores::Unknown);
  EXPECT_FALSE(sss.fp32_on_cuda_cores());
  EXPECT_TRUE(explain_kernel("volta_scudnn_128x64_relu_interior_nn_v1").fp32_on_cuda_cores());
  EXPECT_TRUE(explain_kernel("vectorized_elementwise_kernel").is_elementwise_like());
}

TEST(Explain, UnknownNamesAreNotGuessed) {
  KernelInfo k = explain_kernel("void mykernels::conv_gemm_fp16<128, float>(float*, int)");
  EXPECT_FALSE(k.recognised);
  EXPECT_TRUE(k.library.empty());
  EXPECT_EQ(k.op, KernelOp::Unknown);
  EXPECT_EQ(k.tensor_cores, TensorCores::Unknown);
  EXPECT_NE(k.sentence.find("Not recognised"), std::string::npos);
  // What the C++ name itself shows is still reported.
  ASSERT_NE(k.field("template_args"), nullptr);
  EXPECT_NE(k.field("template_args")->value.find("128"), std::string::npos);
  ASSERT_NE(k.field("template_types"), nullptr);
  EXPECT_EQ(k.field("template_types")->value, "FP32");
  EXPECT_EQ(k.field("scope")->value, "mykernels");
}

// Found by kernel_name_fuzzer: a warpsize token whose dimension has more
// digits than parse_dims reads was indexed as three numbers (an empty vector:
// undefined behaviour). Such a token is left undecoded; the largest accepted
// dimensions multiply beyond int.
TEST(Explain, WarpTokensWithOversizedDimensionsAreLeftUndecoded) {
  const KernelInfo k =
      explain_kernel("sm86_xmma_fprop_implicit_gemm_warpsize2x24444444444444444x1_g1_tensor16x8x8_kernel");
  EXPECT_EQ(k.field("warps"), nullptr);
  const KernelInfo big = explain_kernel("sm86_xmma_fprop_implicit_gemm_warpsize99999x99999x99999_kernel");
  ASSERT_NE(big.field("warps"), nullptr);
  EXPECT_NE(big.field("warps")->value.find("999970000299999 warps"), std::string::npos) << big.field("warps")->value;
}

TEST(Explain, MalformedNamesNeverThrow) {
  // Unbalanced brackets, cut names, operators, empty strings, random bytes.
  std::vector<std::string> names = {"",
                                    " ",
                                    "<",
                                    ">",
                                    "(",
                                    "void",
                                    "void <",
                                    "a<b(c{d[e",
                                    "x>>y<<z",
                                    "operator()",
                                    "f<operator<, 1>(int)",
                                    "::",
                                    "at::",
                                    "...",
                                    "…",
                                    "sm90_xmma_",
                                    "nvjet_",
                                    "cutlass3x_",
                                    "cutlass_80_",
                                    "triton_",
                                    "ncclDevKernel_",
                                    "_Z",
                                    "roofline_x",
                                    "roofline_gemm_fwd"};
  // Very long and deeply nested names (real ATen names run to thousands of characters).
  std::string deep = "void at::native::f<";
  for (int i = 0; i < 3000; ++i) deep += "at::native::Wrap<float, ";
  deep += "int" + std::string(3000, '>') + ">(int)";
  names.push_back(deep);
  names.push_back("ampere_sgemm_" + std::string(20000, 'x') + "_tn");
  std::mt19937 rng(12345);
  const std::string alphabet = "abcxyz_019<>(){}[],:. *&~#";
  for (int i = 0; i < 400; ++i) {
    std::string s;
    int n = static_cast<int>(rng() % 60);
    for (int j = 0; j < n; ++j) s += alphabet[rng() % alphabet.size()];
    names.push_back(s);
  }
  for (const auto& n : names) {
    SCOPED_TRACE(n);
    KernelInfo k;
    ASSERT_NO_THROW(k = explain_kernel(n));
    EXPECT_FALSE(k.sentence.empty());
    std::string s;
    ASSERT_NO_THROW(s = shorten_kernel_name(n, 30));
    EXPECT_LE(display_width(s), 30u);
    ASSERT_NO_THROW(k.to_json().dump());
  }
}

TEST(Explain, ShortNamesKeepWhatTellsInstancesApart) {
  const std::string clamp =
      "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar("
      "at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() "
      "const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, "
      "at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
      "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() "
      "const::{lambda(float)#1}, at::detail::Array<char*, 2>)";
  EXPECT_EQ(shorten_kernel_name(clamp, 0), "at::vectorized_elementwise_kernel<4, launch_clamp_scalar…>");
  // Narrower: arguments go from the end, marked.
  EXPECT_EQ(shorten_kernel_name(clamp, 42), "at::vectorized_elementwise_kernel<4, …>");
  // Flat names lose their middle, so both the kind and the configuration stay.
  std::string s = shorten_kernel_name(
      "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize64x32x64_stage5_warpsize2x2x1_"
      "g1_"
      "tensor16x8x8",
      60);
  EXPECT_LE(display_width(s), 60u);
  EXPECT_TRUE(starts_with(s, "sm80_xmma_fprop")) << s;
  EXPECT_TRUE(ends_with(s, "_tensor16x8x8")) << s;
  // Short names that fit are left as they are; width 0 means no limit.
  EXPECT_EQ(shorten_kernel_name("ampere_sgemm_32x32_sliced1x4_tn", 72), "ampere_sgemm_32x32_sliced1x4_tn");
  EXPECT_EQ(shorten_kernel_name("_ZN7cutlass6KernelI42cutlass_80_simt_sgemm_128x32_8x5_nn_align1EEvNT_6ParamsE", 0),
            "cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>");
}

TEST(Explain, JsonCarriesEveryFieldWithEvidence) {
  nlohmann::json j = explain_kernel(
                         "cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_align8_"
                         "warpspecialized_cooperative_epi_tma")
                         .to_json();
  EXPECT_EQ(j["library"], "CUTLASS");
  EXPECT_EQ(j["tensor_cores"], "yes");
  EXPECT_EQ(j["sm"], 90);
  bool tile = false;
  for (const auto& f : j["fields"])
    if (f["key"] == "tile") {
      tile = true;
      EXPECT_EQ(f["evidence"], "128x256x64");
    }
  EXPECT_TRUE(tile);
}

// ------------------------------------------------------------------ CLI

TEST(ExplainCli, PrintsEachFieldWithItsToken) {
  test::TempDir dir;
  auto r = test::run_cli({"explain", "ampere_sgemm_32x32_sliced1x4_tn"}, {"ROOFLINE_DB=" + dir.file("r.db")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sliced-K 1x4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(from \"sliced1x4\")"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FP32 on CUDA cores"), std::string::npos);
  // explain stores nothing.
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.db")));
}

TEST(ExplainCli, JsonHasRawEvidenceAndASummaryForSeveralNames) {
  auto r = test::run_cli({"--json", "explain", "volta_sgemm_128x128_tn", "mxnet::op::forward_kernel(float*)"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["tables"].size(), 3u);  // summary + one per name
  EXPECT_EQ(j["tables"][0]["id"], "kernels");
  EXPECT_EQ(j["tables"][0]["rows"][1]["library"], "not recognised");
  bool found = false;
  for (const auto& row : j["tables"][1]["rows"])
    if (row["key"] == "tile") {
      found = true;
      EXPECT_EQ(row["evidence"], "128x128");
    }
  EXPECT_TRUE(found);
}

TEST(ExplainCli, BadInputIsAUsageOrInputError) {
  EXPECT_EQ(test::run_cli({"explain"}).exit_code, 2);
  auto empty = test::run_cli({"explain", ""});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("empty"), std::string::npos) << empty.err;
  EXPECT_EQ(test::run_cli({"explain", "--from-file", "/nonexistent/names.txt"}).exit_code, 3);
  test::TempDir dir;
  test::write_file(dir.file("bad.json"), "{not json");
  EXPECT_EQ(test::run_cli({"explain", "--from-json", dir.file("bad.json")}).exit_code, 3);
}

TEST(ExplainCli, ReadsNamesFromAFileAndFromAProfile) {
  test::TempDir dir;
  test::write_file(dir.file("names.txt"), "# from nsys\nampere_sgemm_128x32_nn\n\nsplitKreduce_kernel\n");
  auto r = test::run_cli({"--json", "explain", "--summary", "--from-file", dir.file("names.txt")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["tables"].size(), 1u);
  EXPECT_EQ(j["tables"][0]["rows"].size(), 2u);

  auto p = test::run_cli({"--json", "explain", "--summary", "--from-json",
                          std::string(ROOFLINE_TEST_DATA) + "/profiles/diag_mlp_eager.json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto jp = nlohmann::json::parse(p.out);
  EXPECT_GE(jp["tables"][0]["rows"].size(), 5u);
}

namespace {

// Every __global__ function in roofline's own sources (src/, kernels/).
std::vector<std::string> own_kernel_names() {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  const std::regex global(R"(__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s*)?(?:[A-Za-z_][A-Za-z0-9_]*::)*([A-Za-z_][A-Za-z0-9_]*)\s*\()");
  for (const char* dir : {"src", "kernels"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(ROOFLINE_SOURCE_DIR) / dir)) {
      const auto ext = e.path().extension();
      if (ext != ".cu" && ext != ".cuh") continue;
      std::ifstream f(e.path());
      const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      for (std::sregex_iterator it(text.begin(), text.end(), global), end; it != end; ++it)
        names.push_back((*it)[1].str());
    }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace

// A profile of roofline's own workloads explains each of its kernels: every
// __global__ function in the sources is decoded (a new kernel without an
// entry in decode_roofline_own.cpp fails here).
TEST(Explain, EveryOwnKernelIsDecoded) {
  const std::vector<std::string> names = own_kernel_names();
  ASSERT_GE(names.size(), 40u) << "the scan of src/ and kernels/ found too few kernels";
  for (const std::string& n : names) {
    const KernelInfo k = explain_kernel("void roofline::engine::cuda_ops::(anonymous namespace)::" + n + "(float*)");
    EXPECT_TRUE(k.recognised) << n;
    EXPECT_EQ(k.library, "roofline") << n;
    EXPECT_NE(k.op, KernelOp::Unknown) << n;
  }
}

TEST(Explain, OwnKernelsNameTheirPassTemplateArgumentsAndTensorCoreUse) {
  const KernelInfo fwd = explain_kernel(
      "void roofline::kernels::conv2d_regtile<8, 1, 7, false, 4>(roofline::kernels::RegTileDims, float *, const float *, "
      "const float *, const float *, bool)");
  ASSERT_TRUE(fwd.recognised);
  EXPECT_EQ(fwd.op, KernelOp::ConvFprop);
  EXPECT_EQ(fwd.tensor_cores, TensorCores::No);
  EXPECT_TRUE(fwd.fp32_on_cuda_cores());
  ASSERT_NE(fwd.field("template_KB"), nullptr);
  EXPECT_EQ(fwd.field("template_KB")->value, "8 (output channels per block)");
  ASSERT_NE(fwd.field("template_P"), nullptr);
  EXPECT_EQ(fwd.field("template_P")->evidence, "4");
  EXPECT_EQ(fwd.field("source")->value, "kernels/conv2d_regtile.cuh");

  EXPECT_EQ(explain_kernel("void roofline::kernels::conv2d_tiled<4, 1, true>(roofline::kernels::TiledConvDims)").op,
            KernelOp::ConvDgrad);
  EXPECT_EQ(explain_kernel("void roofline::kernels::conv2d_regtile<4, 1, 7, (bool)1, 1>(int)").op, KernelOp::ConvDgrad);
  EXPECT_EQ(explain_kernel("roofline::kernels::conv2d_wgrad_partial<16>(roofline::kernels::WgradDims)").op,
            KernelOp::ConvWgrad);
  EXPECT_EQ(explain_kernel("void roofline::ceilings::gpu::(anonymous namespace)::wgmma_kernel<1>(float*)").tensor_cores,
            TensorCores::Yes);
  const KernelInfo sweep = explain_kernel("void roofline::sweep::gpu::compute_k_terms_fp16<8>(float*)");
  EXPECT_EQ(sweep.op, KernelOp::Benchmark);
  EXPECT_EQ(sweep.input_type, "fp16");
  // The same base name outside roofline's namespace is not taken for ours.
  EXPECT_FALSE(explain_kernel("void mylib::conv2d_regtile<8, 1, 7, false, 1>(float*)").recognised);
  EXPECT_NE(explain_kernel("void mylib::conv2d_regtile<8, 1, 7, false, 1>(float*)").library, "roofline");
}
