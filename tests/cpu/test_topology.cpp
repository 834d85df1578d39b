// The GPU interconnect of `roofline device`: what each pair's facts are called
// (nvidia-smi's labels) and what the datasheet gives an NVLink, the bus-id and
// NVLink-version decoding of the NVML wrapper, and the table, all without a
// GPU; then the command itself on whatever this machine has.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "roofline/core/report.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "roofline/hardware/nvml.hpp"
#include "roofline/hardware/topology.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using namespace roofline::hw;

namespace {

constexpr double GB = 1e9;

LinkFacts pcie_only(std::optional<int> level) {
  LinkFacts f;
  f.pcie_level = level;
  return f;
}

LinkFacts nvlink(int links, std::optional<int> version, std::optional<int> level = std::nullopt) {
  LinkFacts f;
  f.nvlinks = links;
  f.nvlink_version = version;
  f.pcie_level = level;
  return f;
}

const nlohmann::json* table(const nlohmann::json& report, const std::string& id) {
  for (const auto& t : report["tables"])
    if (t["id"] == id) return &t;
  return nullptr;
}

GpuInfo gpu(int ordinal, const std::string& bus) {
  GpuInfo g;
  g.ordinal = ordinal;
  g.name = "NVIDIA H100 80GB HBM3";
  g.cc_major = 9;
  g.pci_bus_id = bus;
  return g;
}

}  // namespace

TEST(Topology, EveryPcieLevelHasNvidiaSmisLabel) {
  const std::vector<std::pair<int, std::string>> cases = {
      {pcie_level::kBoard, "PIX"},      {pcie_level::kSingleSwitch, "PIX"}, {pcie_level::kMultipleSwitches, "PXB"},
      {pcie_level::kHostBridge, "PHB"}, {pcie_level::kNumaNode, "NODE"},    {pcie_level::kSystem, "SYS"},
  };
  for (const auto& [level, label] : cases) {
    const LinkMeaning m = describe_link(pcie_only(level));
    EXPECT_EQ(m.label, label) << level;
    EXPECT_EQ(m.pcie, label) << level;
    EXPECT_FALSE(m.bandwidth) << level;  // no datasheet figure for a PCIe path
    EXPECT_TRUE(starts_with(m.description, "no NVLink")) << m.description;
  }
  // The words say what is crossed.
  EXPECT_TRUE(contains(describe_link(pcie_only(30)).description, "host bridge"));
  EXPECT_TRUE(contains(describe_link(pcie_only(50)).description, "NUMA nodes"));
  EXPECT_TRUE(contains(describe_link(pcie_only(20)).description, "several PCIe switches"));
  EXPECT_TRUE(contains(describe_link(pcie_only(0)).description, "same board"));
}

TEST(Topology, MissingOrUnknownFactsAreSaidNotGuessed) {
  const LinkMeaning none = describe_link(LinkFacts{});
  EXPECT_EQ(none.label, "?");
  EXPECT_EQ(none.pcie, "?");
  EXPECT_TRUE(contains(none.description, "did not report")) << none.description;
  const LinkMeaning odd = describe_link(pcie_only(35));
  EXPECT_EQ(odd.label, "?");
  EXPECT_TRUE(contains(odd.description, "35")) << odd.description;
}

TEST(Topology, NvlinkLabelCountsLinksAndGivesTheDatasheetBandwidth) {
  // H100/H200 SXM: 18 links of NVLink 4, 900 GB/s both ways per GPU -> 25 GB/s per link each way.
  LinkMeaning m = describe_link(nvlink(18, 4, pcie_level::kMultipleSwitches));
  EXPECT_EQ(m.label, "NV18");
  ASSERT_TRUE(m.bandwidth);
  EXPECT_DOUBLE_EQ(*m.bandwidth, 450 * GB);
  EXPECT_TRUE(contains(m.description, "18 NVLink 4 links")) << m.description;
  EXPECT_TRUE(contains(m.description, "450 GB/s each way")) << m.description;
  EXPECT_TRUE(contains(m.description, "25 GB/s per link per direction")) << m.description;
  EXPECT_EQ(m.pcie, "PXB");  // the PCIe path beside it
  EXPECT_FALSE(contains(m.description, "NVSwitch")) << m.description;

  // A100 SXM4: 12 links of NVLink 3 (600 GB/s both ways); V100 SXM2: 6 of NVLink 2 (300); B200: 18 of NVLink 5 (1.8
  // TB/s).
  EXPECT_DOUBLE_EQ(*describe_link(nvlink(12, 3)).bandwidth, 300 * GB);
  EXPECT_DOUBLE_EQ(*describe_link(nvlink(6, 2)).bandwidth, 150 * GB);
  EXPECT_DOUBLE_EQ(*describe_link(nvlink(18, 5)).bandwidth, 900 * GB);
  EXPECT_TRUE(contains(describe_link(nvlink(18, 5)).description, "50 GB/s per link"))
      << describe_link(nvlink(18, 5)).description;
  // A bridged pair (H100 NVL: 3 bridges x 4 links) and a single link.
  EXPECT_EQ(describe_link(nvlink(12, 4)).label, "NV12");
  const LinkMeaning one = describe_link(nvlink(1, 4));
  EXPECT_EQ(one.label, "NV1");
  EXPECT_DOUBLE_EQ(*one.bandwidth, 25 * GB);
  EXPECT_TRUE(contains(one.description, "1 NVLink 4 link:")) << one.description;

  // NVLink wins over any PCIe level, even across sockets.
  EXPECT_EQ(describe_link(nvlink(2, 4, pcie_level::kSystem)).label, "NV2");

  LinkFacts sw = nvlink(18, 4);
  sw.nvswitch = true;
  EXPECT_TRUE(contains(describe_link(sw).description, "through NVSwitch")) << describe_link(sw).description;
  EXPECT_DOUBLE_EQ(*describe_link(sw).bandwidth, 450 * GB);
}

TEST(Topology, NvlinkWithoutAKnownGenerationHasNoFigure) {
  const LinkMeaning unknown = describe_link(nvlink(4, std::nullopt));
  EXPECT_EQ(unknown.label, "NV4");
  EXPECT_FALSE(unknown.bandwidth);
  EXPECT_TRUE(contains(unknown.description, "not reported")) << unknown.description;
  for (int v : {1, 6}) {  // NVLink 1 (P100) and 6 are not in the table
    const LinkMeaning m = describe_link(nvlink(4, v));
    EXPECT_EQ(m.label, "NV4");
    EXPECT_FALSE(m.bandwidth) << v;
    EXPECT_TRUE(contains(m.description, "no datasheet figure")) << m.description;
  }
}

TEST(Topology, NvlinkGenerationsFollowTheDatasheets) {
  for (const auto& g : nvlink_generations()) {
    EXPECT_GT(g.links, 0) << g.version;
    EXPECT_FALSE(g.basis.empty()) << g.version;
    EXPECT_EQ(nvlink_generation(g.version), &g);
    EXPECT_EQ(nvlink_generation_of(g.cc_major, g.cc_minor), &g);
  }
  ASSERT_TRUE(nvlink_generation_of(9, 0));  // Hopper
  EXPECT_EQ(nvlink_generation_of(9, 0)->version, 4);
  EXPECT_DOUBLE_EQ(nvlink_generation_of(9, 0)->per_link_each_way(), 25 * GB);
  EXPECT_EQ(nvlink_generation_of(8, 0)->version, 3);
  EXPECT_EQ(nvlink_generation_of(7, 0)->version, 2);
  EXPECT_EQ(nvlink_generation_of(10, 0)->version, 5);
  EXPECT_DOUBLE_EQ(nvlink_generation(5)->per_link_each_way(), 50 * GB);
  EXPECT_EQ(nvlink_generation_of(8, 9), nullptr);  // Ada: no NVLink
  EXPECT_EQ(nvlink_generation(1), nullptr);
}

TEST(Topology, BusIdsCompareInOneSpelling) {
  // NVML: eight-digit domain, upper case; CUDA: four digits, lower case.
  EXPECT_EQ(nvml::normalized_bus_id("00000000:1A:00.0"), "0000:1a:00.0");
  EXPECT_EQ(nvml::normalized_bus_id("0000:1a:00.0"), "0000:1a:00.0");
  EXPECT_EQ(nvml::normalized_bus_id(" 00000000:18:00.0\n"), nvml::normalized_bus_id("0000:18:00.0"));
  EXPECT_NE(nvml::normalized_bus_id("00000000:18:00.0"), nvml::normalized_bus_id("0000:19:00.0"));
  EXPECT_NE(nvml::normalized_bus_id("00000001:18:00.0"), nvml::normalized_bus_id("0000:18:00.0"));
  EXPECT_EQ(nvml::normalized_bus_id("00010000:01:00.0"), "00010000:01:00.0");  // a domain past four digits stays
  EXPECT_EQ(nvml::normalized_bus_id("GPU-ABC"), "gpu-abc");                    // not a bus id
  EXPECT_EQ(nvml::normalized_bus_id(""), "");
}

TEST(Topology, NvmlVersionEnumIsDecoded) {
  // nvmlNvlinkVersion_t: A100 answers 5 (3.1), not NVLink 5.
  EXPECT_FALSE(nvml::nvlink_generation_of_nvml(0));
  EXPECT_EQ(nvml::nvlink_generation_of_nvml(1), 1);
  EXPECT_EQ(nvml::nvlink_generation_of_nvml(2), 2);
  EXPECT_EQ(nvml::nvlink_generation_of_nvml(3), 2);
  EXPECT_EQ(nvml::nvlink_generation_of_nvml(4), 3);
  EXPECT_EQ(nvml::nvlink_generation_of_nvml(5), 3);
  EXPECT_EQ(nvml::nvlink_generation_of_nvml(6), 4);
  EXPECT_EQ(nvml::nvlink_generation_of_nvml(7), 5);
  EXPECT_FALSE(nvml::nvlink_generation_of_nvml(99));
}

TEST(Topology, TableHasOneRowPerPairAndSaysWhatIsUnknown) {
  std::vector<GpuPairLink> links(2);
  links[0] = {0, 1, nvlink(18, 4, pcie_level::kSystem), ""};
  links[1] = {0, 2, std::nullopt, "NVML does not know GPU 2"};
  Report r("device");
  add_interconnect_table(r, links);
  const auto j = to_json(r);
  const auto* t = table(j, "interconnect");
  ASSERT_TRUE(t);
  ASSERT_EQ((*t)["rows"].size(), 2u);
  const auto& nv = (*t)["rows"][0];
  EXPECT_EQ(nv["gpu_a"], 0);
  EXPECT_EQ(nv["gpu_b"], 1);
  EXPECT_EQ(nv["link"], "NV18");
  EXPECT_EQ(nv["nvlinks"], 18);
  EXPECT_DOUBLE_EQ(nv["bandwidth"].get<double>(), 450.0);  // GB/s
  EXPECT_EQ(nv["pcie"], "SYS");
  const auto& unknown = (*t)["rows"][1];
  EXPECT_EQ(unknown["link"], "?");
  EXPECT_EQ(unknown["bandwidth"], "-");
  EXPECT_TRUE(contains(unknown["description"].get<std::string>(), "does not know GPU 2"));
  bool sourced = false;
  for (const auto& n : (*t)["notes"]) sourced |= contains(n.get<std::string>(), "NVLink 4: 900 GB/s");
  EXPECT_TRUE(sourced) << (*t)["notes"].dump();
}

TEST(Topology, NoTableForFewerThanTwoGpus) {
  for (size_t n : {0u, 1u}) {
    std::vector<GpuInfo> gpus;
    for (size_t i = 0; i < n; ++i) gpus.push_back(gpu(static_cast<int>(i), "0000:18:00.0"));
    Report r("device");
    EXPECT_NO_THROW(add_interconnect(r, gpus));
    EXPECT_EQ(r.find("interconnect"), nullptr) << n;
  }
}

TEST(Topology, TwoGpusNvmlDoesNotKnowGiveANoteOrUnknownRows) {
  // Bus ids no machine has: without NVML the table says why it is empty;
  // with NVML (a GPU machine) each pair is unknown, and says why.
  Report r("device");
  ASSERT_NO_THROW(add_interconnect(r, {gpu(0, "0000:fe:1f.6"), gpu(1, "0000:fe:1f.7")}));
  const Table* t = r.find("interconnect");
  ASSERT_TRUE(t);
  if (!nvml::available()) {
    EXPECT_TRUE(t->rows().empty());
    ASSERT_FALSE(t->notes().empty());
    EXPECT_TRUE(contains(t->notes()[0], "NVML unavailable")) << t->notes()[0];
    EXPECT_TRUE(contains(t->notes()[0], nvml::unavailable_reason())) << t->notes()[0];
  } else {
    ASSERT_EQ(t->rows().size(), 1u);
    const auto j = to_json(r);
    EXPECT_EQ((*table(j, "interconnect"))["rows"][0]["link"], "?");
  }
}

TEST(Topology, DeviceCommandListsPairsOnlyWithTwoGpus) {
  test::TempDir dir;
  auto r = test::run_cli({"--db", dir.file("r.db"), "--json", "device", "--device", "gpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto* t = table(j, "interconnect");
  const int n = cuda::gpu_count();
  if (n < 2) {
    EXPECT_EQ(t, nullptr) << r.out;
  } else {
    ASSERT_TRUE(t) << r.out;
    if (nvml::available()) {
      EXPECT_EQ((*t)["rows"].size(), static_cast<size_t>(n * (n - 1) / 2));
    }
  }
}
