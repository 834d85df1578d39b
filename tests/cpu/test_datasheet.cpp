// The datasheet database: invariants every entry must hold (keys, sources,
// dense vs sparse), agreement with the per-architecture tables, and matching
// of driver names to the right board variant.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <set>

#include "roofline/core/strings.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "roofline/hardware/gpu_arch.hpp"
#include "roofline/hardware/peaks.hpp"

using namespace roofline;
using namespace roofline::hw;

namespace {

double peak(const Datasheet& d, const std::string& key) {
  auto it = d.peaks.find(key);
  return it == d.peaks.end() ? NAN : it->second;
}

// Compute capability of each architecture in the database.
std::pair<int, int> cc_of(const Datasheet& d) {
  if (d.architecture == "Volta") return {7, 0};
  if (d.architecture == "Ampere") return {8, 0};
  if (d.architecture == "Ada Lovelace") return {8, 9};
  if (d.architecture == "Hopper") return {9, 0};
  if (d.architecture == "Blackwell") return {10, 0};
  return {0, 0};
}

constexpr std::uint64_t GiB = 1ull << 30;

std::string match_id(const std::string& name, double gib, int sms) {
  const Datasheet* d = explain_match(name, static_cast<std::uint64_t>(gib * GiB), sms).entry;
  return d ? d->id : "none";
}

}  // namespace

TEST(Datasheet, CoversTheRequiredParts) {
  for (const char* id :
       {"v100-sxm2-16gb", "v100-sxm2-32gb", "v100-pcie-16gb", "v100-pcie-32gb", "a100-pcie-40gb", "a100-pcie-80gb",
        "a100-sxm4-40gb", "a100-sxm4-80gb", "h100-pcie-80gb", "h100-sxm5-80gb", "h100-nvl-94gb", "h200-sxm-141gb",
        "h200-nvl-141gb", "l4-24gb", "l40s-48gb", "rtx4090-24gb", "b200-sxm-180gb"})
    EXPECT_NE(find_datasheet(id), nullptr) << id;
}

TEST(Datasheet, EveryEntryIsCompleteAndSourced) {
  std::set<std::string> ids;
  const std::regex key_re(R"((fp64|fp32|tf32|fp16|bf16|fp8|fp4|int8)\.(cuda|tensor)(\.[a-z0-9]+)?(\.sparse)?)");
  for (const auto& d : datasheets()) {
    SCOPED_TRACE(d.id);
    EXPECT_TRUE(ids.insert(d.id).second) << "duplicate id";
    EXPECT_FALSE(d.name.empty());
    EXPECT_FALSE(d.architecture.empty());
    EXPECT_FALSE(d.form_factor.empty());
    EXPECT_FALSE(d.memory_type.empty());
    EXPECT_GT(d.memory_gb, 0);
    EXPECT_GT(d.memory_bus_bits, 0);
    EXPECT_GT(d.bandwidth, 1e11);
    EXPECT_GT(d.tdp_w, 0);
    EXPECT_GT(d.sms, 0);
    EXPECT_FALSE(d.name_tokens.empty());
    ASSERT_FALSE(d.sources.empty());
    for (const auto& s : d.sources) EXPECT_TRUE(contains(s, "https://")) << s;
    EXPECT_GT(peak(d, "fp32.cuda"), 0);
    EXPECT_GT(peak(d, "fp64.cuda"), 0);
    bool has_tensor = false;
    for (const auto& [key, value] : d.peaks) {
      SCOPED_TRACE(key);
      EXPECT_TRUE(std::regex_match(key, key_re));
      EXPECT_GT(value, 0) << "absent formats are left out, never zero";
      has_tensor |= contains(key, ".tensor");
      // Every figure has a basis: a cited source [n] within range, or a derivation.
      auto b = d.basis.find(key);
      ASSERT_NE(b, d.basis.end());
      if (!d.is_derived(key)) {
        std::smatch m;
        ASSERT_TRUE(std::regex_search(b->second, m, std::regex(R"(\[(\d+)\])"))) << b->second;
        int n = std::stoi(m[1]);
        EXPECT_GE(n, 1);
        EXPECT_LE(n, static_cast<int>(d.sources.size()));
      }
      if (ends_with(key, ".sparse")) {
        // A sparse figure always has its dense twin, at half the rate (NVIDIA's
        // 2:4 sparsity doubles the math rate; L40S prints 362.05 against 733).
        std::string dense = key.substr(0, key.size() - 7);
        ASSERT_GT(peak(d, dense), 0);
        EXPECT_NEAR(value / peak(d, dense), 2.0, 2.0 * 0.015);
        EXPECT_FALSE(starts_with(key, "fp64")) << "FP64 has no sparse tensor rate";
      }
    }
    EXPECT_TRUE(has_tensor);
  }
}

TEST(Datasheet, TensorFormatsFollowTheArchitecture) {
  for (const auto& d : datasheets()) {
    SCOPED_TRACE(d.id);
    const double fp16 = peak(d, "fp16.tensor"), bf16 = peak(d, "bf16.tensor"), tf32 = peak(d, "tf32.tensor");
    if (d.architecture == "Volta") {
      // Volta: FP16 tensor cores only. Absent, not zero.
      EXPECT_GT(fp16, 0);
      for (const char* k : {"bf16.tensor", "tf32.tensor", "int8.tensor", "fp8.tensor", "fp16.tensor.sparse"})
        EXPECT_EQ(d.peaks.count(k), 0u) << k;
      continue;
    }
    // FP16 and BF16 tensor rates are equal on every part since Ampere.
    EXPECT_DOUBLE_EQ(fp16, bf16);
    EXPECT_GT(d.peaks.count("tf32.tensor.sparse") + d.peaks.count("bf16.tensor.sparse"), 0u);
    if (d.architecture == "Ampere" || d.architecture == "Hopper")
      EXPECT_NEAR(tf32 / fp16, 0.5, 0.5 * 0.01);                                 // TF32 at half the FP16 rate
    if (d.architecture == "Ampere") EXPECT_EQ(d.peaks.count("fp8.tensor"), 0u);  // no FP8 before Ada/Hopper
    if (d.architecture == "Hopper" || d.architecture == "Ada Lovelace") EXPECT_GT(peak(d, "fp8.tensor"), 0);
    if (d.architecture != "Blackwell") EXPECT_EQ(d.peaks.count("fp4.tensor"), 0u);
  }
}

TEST(Datasheet, FiguresTheSeedsAndTheBriefQuote) {
  const Datasheet* a100 = find_datasheet("a100-sxm4-80gb");
  ASSERT_TRUE(a100);
  EXPECT_DOUBLE_EQ(peak(*a100, "fp16.cuda"), 78e12);  // seed 000, Table 2
  EXPECT_DOUBLE_EQ(peak(*a100, "bf16.cuda"), 39e12);
  EXPECT_DOUBLE_EQ(peak(*a100, "bf16.tensor"), 312e12);
  EXPECT_DOUBLE_EQ(peak(*a100, "fp64.tensor"), 19.5e12);
  const Datasheet* sxm = find_datasheet("h100-sxm5-80gb");
  ASSERT_TRUE(sxm);
  EXPECT_DOUBLE_EQ(peak(*sxm, "bf16.tensor"), 989.4e12);
  EXPECT_DOUBLE_EQ(peak(*sxm, "bf16.tensor.sparse"), 1978.9e12);
  EXPECT_DOUBLE_EQ(peak(*sxm, "fp32.cuda"), 66.9e12);
  EXPECT_DOUBLE_EQ(peak(*sxm, "fp64.cuda"), 33.5e12);
  EXPECT_DOUBLE_EQ(peak(*sxm, "fp64.tensor"), 66.9e12);
  EXPECT_DOUBLE_EQ(sxm->bandwidth, 3.35e12);
  EXPECT_DOUBLE_EQ(sxm->tdp_w, 700);
  const Datasheet* pcie = find_datasheet("h100-pcie-80gb");
  ASSERT_TRUE(pcie);
  EXPECT_NEAR(peak(*pcie, "bf16.tensor"), 756e12, 1e12);
  EXPECT_DOUBLE_EQ(pcie->bandwidth, 2.0e12);
  EXPECT_DOUBLE_EQ(pcie->tdp_w, 350);
  // Seed 001's mistake: a V100 does not beat an A100 once tensor cores count.
  const Datasheet* v100 = find_datasheet("v100-sxm2-32gb");
  ASSERT_TRUE(v100);
  EXPECT_GT(peak(*v100, "fp32.cuda") / peak(*a100, "fp32.cuda"), 0.8);
  EXPECT_LT(peak(*v100, "fp16.tensor") * 2, peak(*a100, "fp16.tensor"));
}

TEST(Datasheet, AgreesWithThePerSmArchitectureTables) {
  // SMs x per-SM rate x boost clock reproduces the CUDA-core figures within 3%;
  // tensor figures NVIDIA prints at a lower clock, so the derived one is an upper bound.
  for (const auto& d : datasheets()) {
    if (d.boost_mhz <= 0) continue;  // B200: no published clock
    SCOPED_TRACE(d.id);
    GpuInfo g;
    std::tie(g.cc_major, g.cc_minor) = cc_of(d);
    g.sms = d.sms;
    g.sm_clock_max_mhz = d.boost_mhz;
    auto derived = derived_gpu_peaks(g);
    ASSERT_FALSE(derived.empty());
    for (const auto& p : datasheet_peaks(d)) {
      if (!p.variant.empty()) continue;
      const Peak* q = nullptr;
      for (const auto& x : derived)
        if (x.id == p.id) q = &x;
      ASSERT_NE(q, nullptr) << p.id << " is in the datasheet but not in the architecture table";
      if (p.unit == "cuda")
        EXPECT_NEAR(q->dense / p.dense, 1.0, 0.03) << p.id;
      else
        EXPECT_GE(q->dense, 0.98 * p.dense) << p.id;
      EXPECT_EQ(q->sparse.has_value(), p.sparse.has_value()) << p.id;
    }
  }
}

TEST(DatasheetMatch, PicksTheVariantFromNameMemoryAndSms) {
  // (driver name, memory the driver reports in GiB, SMs) -> entry
  EXPECT_EQ(match_id("NVIDIA H100 80GB HBM3", 79.2, 132), "h100-sxm5-80gb");  // the lent GPU
  EXPECT_EQ(match_id("NVIDIA H100 PCIe", 79.2, 114), "h100-pcie-80gb");
  EXPECT_EQ(match_id("NVIDIA H100 NVL", 93.6, 132), "h100-nvl-94gb");
  EXPECT_EQ(match_id("NVIDIA H200", 139.8, 132), "h200-sxm-141gb");
  EXPECT_EQ(match_id("NVIDIA H200 NVL", 139.8, 132), "h200-nvl-141gb");
  EXPECT_EQ(match_id("NVIDIA A100-SXM4-40GB", 39.4, 108), "a100-sxm4-40gb");
  EXPECT_EQ(match_id("NVIDIA A100-SXM4-80GB", 79.2, 108), "a100-sxm4-80gb");
  EXPECT_EQ(match_id("NVIDIA A100-PCIE-40GB", 39.4, 108), "a100-pcie-40gb");
  EXPECT_EQ(match_id("NVIDIA A100 80GB PCIe", 79.2, 108), "a100-pcie-80gb");
  EXPECT_EQ(match_id("Tesla V100-SXM2-16GB", 15.8, 80), "v100-sxm2-16gb");
  EXPECT_EQ(match_id("Tesla V100-SXM2-32GB", 31.7, 80), "v100-sxm2-32gb");
  EXPECT_EQ(match_id("Tesla V100-PCIE-32GB", 31.7, 80), "v100-pcie-32gb");
  EXPECT_EQ(match_id("Tesla V100S-PCIE-32GB", 31.7, 80), "v100s-pcie-32gb");
  EXPECT_EQ(match_id("NVIDIA L4", 22.5, 58), "l4-24gb");
  EXPECT_EQ(match_id("NVIDIA L40S", 44.5, 142), "l40s-48gb");
  EXPECT_EQ(match_id("NVIDIA GeForce RTX 4090", 23.6, 128), "rtx4090-24gb");
  EXPECT_EQ(match_id("NVIDIA B200", 178.4, 148), "b200-sxm-180gb");
}

TEST(DatasheetMatch, RefusesWhenTheEvidenceDisagrees) {
  // An SXM-named H100 with a PCIe SM count: HBM3 in the name rules out the PCIe board.
  auto m = explain_match("NVIDIA H100 80GB HBM3", 79.2 * GiB, 114);
  EXPECT_EQ(m.entry, nullptr);
  EXPECT_FALSE(m.rejected.empty());
  // A MIG slice reports a fraction of the SMs and memory.
  EXPECT_EQ(match_id("NVIDIA H100 80GB HBM3 MIG 1g.10gb", 9.8, 16), "none");
  // The China-market 4090 D has 114 SMs.
  EXPECT_EQ(match_id("NVIDIA GeForce RTX 4090 D", 23.6, 114), "none");
  // Products not in the database.
  EXPECT_EQ(match_id("NVIDIA L40", 44.5, 142), "none");
  EXPECT_EQ(match_id("NVIDIA RTX A6000", 47.5, 84), "none");
  auto none = explain_match("NVIDIA RTX A6000", 47 * GiB, 84);
  EXPECT_TRUE(contains(none.reason, "no datasheet entry")) << none.reason;
  // Without SM count and memory, a name alone cannot tell SXM5 from NVL.
  auto amb = explain_match("NVIDIA H100", 0, 0);
  EXPECT_EQ(amb.entry, nullptr);
  EXPECT_TRUE(contains(amb.reason, "ambiguous")) << amb.reason;
}

TEST(DatasheetMatch, ExplainsWhatItRuledOut) {
  auto m = explain_match("NVIDIA H100 80GB HBM3", 79.2 * GiB, 132);
  ASSERT_TRUE(m.entry);
  EXPECT_TRUE(contains(m.reason, "132 SMs")) << m.reason;
  bool pcie = false;
  for (const auto& r : m.rejected) pcie |= starts_with(r, "h100-pcie-80gb") && contains(r, "114 SMs");
  EXPECT_TRUE(pcie);
}

TEST(DatasheetFind, ByIdNameOrUniquePart) {
  EXPECT_EQ(find_datasheet("H100-SXM5-80GB"), find_datasheet("NVIDIA H100 SXM5 80GB"));
  EXPECT_EQ(find_datasheet("h100"), nullptr);
  EXPECT_EQ(search_datasheets("h100").size(), 3u);
  EXPECT_EQ(search_datasheets("l40s").size(), 1u);
  ASSERT_EQ(search_datasheets("l4").size(), 1u);  // a whole word: not the L40S
  EXPECT_EQ(search_datasheets("l4")[0]->id, "l4-24gb");
  EXPECT_EQ(search_datasheets("sxm4").size(), 2u);
  EXPECT_TRUE(search_datasheets("mi300x").empty());
}

TEST(DatasheetPeaks, DenseAndSparseSideBySide) {
  auto peaks = datasheet_peaks(*find_datasheet("h100-sxm5-80gb"));
  const Peak* bf16 = nullptr;
  const Peak* fp32 = nullptr;
  for (const auto& p : peaks) {
    if (p.id == "bf16.tensor") bf16 = &p;
    if (p.id == "fp32.cuda") fp32 = &p;
    EXPECT_FALSE(ends_with(p.id, ".sparse"));
  }
  ASSERT_TRUE(bf16 && fp32);
  EXPECT_DOUBLE_EQ(bf16->dense, 989.4e12);
  ASSERT_TRUE(bf16->sparse);
  EXPECT_DOUBLE_EQ(*bf16->sparse, 1978.9e12);
  EXPECT_EQ(bf16->source, model::Source::Datasheet);
  EXPECT_FALSE(fp32->sparse);
  EXPECT_EQ(bf16->label(), "BF16 tensor cores, dense (FLOP/s)");
  // Derived figures inside an entry keep their derived mark.
  for (const auto& p : datasheet_peaks(*find_datasheet("l4-24gb")))
    if (p.id == "fp64.cuda") EXPECT_EQ(p.source, model::Source::Derived);
}
