// The GPU interconnect of `roofline device`: NVML's link facts per pair of
// GPUs, labelled with nvidia-smi's words, beside the datasheet's NVLink
// bandwidth.
#include "roofline/hardware/topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "roofline/hardware/datasheet.hpp"
#include "roofline/hardware/nvml.hpp"

namespace roofline::hw {

namespace {

struct PcieWords {
  const char* label;
  const char* meaning;
};

// nvidia-smi topo -m's legend, by NVML topology level.
std::optional<PcieWords> pcie_words(int level) {
  switch (level) {
    case pcie_level::kBoard:
      return PcieWords{"PIX", "PCIe on the same board (its own PCIe switch)"};
    case pcie_level::kSingleSwitch:
      return PcieWords{"PIX", "PCIe through at most one PCIe switch"};
    case pcie_level::kMultipleSwitches:
      return PcieWords{"PXB", "PCIe through several PCIe switches, without a host bridge"};
    case pcie_level::kHostBridge:
      return PcieWords{"PHB", "PCIe through a PCIe host bridge (the CPU)"};
    case pcie_level::kNumaNode:
      return PcieWords{"NODE", "PCIe and the interconnect between the host bridges of one NUMA node"};
    case pcie_level::kSystem:
      return PcieWords{"SYS", "PCIe and the interconnect between NUMA nodes (sockets: QPI/UPI, Infinity Fabric)"};
    default:
      return std::nullopt;
  }
}

std::string gb(double bytes_per_s) { return fmt::format("{:g}", bytes_per_s / 1e9); }

}  // namespace

LinkMeaning describe_link(const LinkFacts& f) {
  LinkMeaning m;
  const std::optional<PcieWords> pcie = f.pcie_level ? pcie_words(*f.pcie_level) : std::nullopt;
  m.pcie = pcie ? pcie->label : "?";
  if (f.nvlinks > 0) {
    m.label = fmt::format("NV{}", f.nvlinks);
    const std::string links = f.nvlinks == 1 ? "link" : "links";
    const std::string via = f.nvswitch ? " through NVSwitch" : "";
    const NvlinkGeneration* g = f.nvlink_version ? nvlink_generation(*f.nvlink_version) : nullptr;
    if (g) {
      m.bandwidth = f.nvlinks * g->per_link_each_way();
      m.description =
          fmt::format("{} NVLink {} {}{}: {} GB/s each way by the datasheet ({} GB/s per link per direction)",
                      f.nvlinks, g->version, links, via, gb(*m.bandwidth), gb(g->per_link_each_way()));
    } else if (f.nvlink_version) {
      m.description = fmt::format("{} NVLink {} {}{}: no datasheet figure for NVLink {} in roofline's table", f.nvlinks,
                                  *f.nvlink_version, links, via, *f.nvlink_version);
    } else {
      m.description =
          fmt::format("{} NVLink {}{}, generation not reported: no datasheet figure", f.nvlinks, links, via);
    }
    return m;
  }
  if (!f.pcie_level) {
    m.label = "?";
    m.description = "no NVLink; NVML did not report the PCIe path";
    return m;
  }
  if (pcie) {
    m.label = pcie->label;
    m.description = std::string("no NVLink: ") + pcie->meaning;
    return m;
  }
  m.label = "?";
  m.description = fmt::format("no NVLink; PCIe path at NVML topology level {}, unknown to roofline", *f.pcie_level);
  return m;
}

std::vector<GpuPairLink> query_gpu_links(const std::vector<GpuInfo>& gpus) {
  std::vector<GpuPairLink> out;
  if (!nvml::available()) return out;
  std::vector<std::optional<nvml::Gpu>> handles;
  for (const auto& g : gpus)
    handles.push_back(g.pci_bus_id.empty() ? std::nullopt : nvml::Gpu::by_pci_bus_id(g.pci_bus_id));
  for (size_t i = 0; i < gpus.size(); ++i)
    for (size_t j = i + 1; j < gpus.size(); ++j) {
      GpuPairLink p;
      p.gpu_a = gpus[i].ordinal;
      p.gpu_b = gpus[j].ordinal;
      const size_t missing = !handles[i] ? i : !handles[j] ? j : gpus.size();
      if (missing < gpus.size()) {
        p.remark =
            fmt::format("NVML does not know GPU {} (PCI bus id '{}')", gpus[missing].ordinal, gpus[missing].pci_bus_id);
        out.push_back(std::move(p));
        continue;
      }
      const nvml::Gpu& a = *handles[i];
      const nvml::Gpu& b = *handles[j];
      LinkFacts f;
      f.pcie_level = a.common_ancestor(b);
      const auto path = a.nvlinks_to(b);
      if (!path) {
        p.remark = "NVML did not report the NVLinks";
        out.push_back(std::move(p));
        continue;
      }
      f.nvlinks = path->links;
      f.nvswitch = path->through_switch;
      if (f.nvlinks > 0) {
        const NvlinkGeneration* arch = nvlink_generation_of(gpus[i].cc_major, gpus[i].cc_minor);
        const std::optional<int> reported = a.nvlink_version();
        f.nvlink_version = arch ? std::optional<int>(arch->version) : reported;
        if (arch && reported && *reported != arch->version)
          p.remark = fmt::format(
              "NVML reports NVLink {} on GPU {}; its architecture ({}) carries NVLink {} by the datasheet, which is "
              "used",
              *reported, gpus[i].ordinal, gpus[i].architecture, arch->version);
      }
      p.facts = f;
      out.push_back(std::move(p));
    }
  return out;
}

void add_interconnect_table(Report& r, const std::vector<GpuPairLink>& links, const std::string& why_none) {
  Table& t = r.add(Table("interconnect", "GPU interconnect (NVML; as nvidia-smi topo -m)"));
  t.col("gpu_a", "GPU")
      .col("gpu_b", "GPU")
      .col("link", "Link")
      .col("nvlinks", "NVLinks")
      .col("bandwidth", "Each way, datasheet", "GB/s", 0)
      .col("pcie", "PCIe path")
      .col("description", "Meaning", "", -1, 110);
  std::set<int> versions;
  std::vector<std::string> remarks;
  for (const auto& p : links) {
    if (!p.facts) {
      t.row({std::int64_t{p.gpu_a}, std::int64_t{p.gpu_b}, std::string("?"), std::string("-"), std::string("-"),
             std::string("?"), "unknown: " + p.remark});
      continue;
    }
    const LinkMeaning m = describe_link(*p.facts);
    t.row({std::int64_t{p.gpu_a}, std::int64_t{p.gpu_b}, m.label, std::int64_t{p.facts->nvlinks},
           m.bandwidth ? Cell(*m.bandwidth / 1e9) : Cell(std::string("-")), m.pcie, m.description});
    if (m.bandwidth && p.facts->nvlink_version) versions.insert(*p.facts->nvlink_version);
    if (!p.remark.empty() && std::find(remarks.begin(), remarks.end(), p.remark) == remarks.end())
      remarks.push_back(p.remark);
  }
  if (links.empty()) {
    if (!why_none.empty()) t.note(why_none);
    return;
  }
  t.note(
      "Link: NV# = # NVLinks; PIX = at most one PCIe switch; PXB = several PCIe switches, no host bridge; PHB = a "
      "PCIe host bridge (the CPU); NODE = between the host bridges of one NUMA node; SYS = across NUMA nodes");
  t.note(
      "each way: links x the datasheet's per-link figure, a ceiling no copy reaches; `roofline ceilings` measures "
      "p2p.gpu<J>.write and .bidir");
  for (int v : versions) {
    const NvlinkGeneration* g = nvlink_generation(v);
    t.note(fmt::format("NVLink {}: {} GB/s per GPU ({} links, both ways) on {}, so {} GB/s per link each way; {}", v,
                       gb(g->total_both_ways), g->links, g->gpus, gb(g->per_link_each_way()), g->basis));
  }
  for (const auto& remark : remarks) t.note(remark);
}

void add_interconnect(Report& r, const std::vector<GpuInfo>& gpus) {
  if (gpus.size() < 2) return;
  if (!nvml::available()) {
    add_interconnect_table(r, {},
                           fmt::format("how the {} GPUs are linked is unknown: NVML unavailable ({})", gpus.size(),
                                       nvml::unavailable_reason()));
    return;
  }
  add_interconnect_table(r, query_gpu_links(gpus));
}

std::optional<LinkFigure> datasheet_link(int gpu_a, int gpu_b) {
  const auto links = query_gpu_links({query_gpu(gpu_a), query_gpu(gpu_b)});
  if (links.empty() || !links[0].facts) return std::nullopt;
  const LinkMeaning m = describe_link(*links[0].facts);
  if (!m.bandwidth) return std::nullopt;
  return LinkFigure{*m.bandwidth, fmt::format("datasheet: {}, {}", m.label, m.description)};
}

}  // namespace roofline::hw
