// The datasheet database: one entry per board variant, figures as NVIDIA
// prints them, each with the document it comes from.
//
// How to read NVIDIA's tables: since Ampere, datasheets print tensor-core
// figures "with sparsity" (an asterisk; "specifications 1/2 lower without
// sparsity"). Where only the sparse figure is printed, the dense one here is
// that figure halved and its basis says so. FP64 tensor rates have no sparse
// variant. Figures NVIDIA does not print are either absent or, where a
// published architectural ratio fixes them (FP64 at 1/64 of FP32 on Ada),
// marked "derived:" and shown as derived.
#include <fmt/format.h>

#include "roofline/core/strings.hpp"
#include "roofline/hardware/datasheet.hpp"

namespace roofline::hw {

namespace {

constexpr double T = 1e12;  // tera

const char* kV100Ds =
    "NVIDIA V100 Tensor Core GPU datasheet (2020; columns V100 PCIe, V100 SXM2, V100S PCIe) - "
    "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf";
const char* kVoltaWp =
    "NVIDIA Tesla V100 GPU Architecture whitepaper (WP-08608-001 v1.1): FP16 at twice the FP32 rate - "
    "https://images.nvidia.com/content/volta-architecture/pdf/volta-architecture-whitepaper.pdf";
const char* kA100Ds =
    "NVIDIA A100 Tensor Core GPU datasheet (2020 and 2021 editions; 40GB and 80GB, PCIe and SXM columns) - "
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf";
const char* kAmpereWp =
    "NVIDIA A100 Tensor Core GPU Architecture whitepaper (V1.0), Table 1 (Peak FP16 and BF16 non-Tensor) - "
    "https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf";
const char* kH100Ds =
    "NVIDIA H100 Tensor Core GPU datasheet and product page (columns H100 SXM, H100 PCIe, H100 NVL) - "
    "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet";
const char* kHopperWp =
    "NVIDIA H100 Tensor Core GPU Architecture whitepaper (V1.03 and later), Table 3 (H100 SXM5) - "
    "https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper";
const char* kH200Ds =
    "NVIDIA H200 Tensor Core GPU datasheet and product page (columns H200 SXM, H200 NVL) - "
    "https://www.nvidia.com/en-us/data-center/h200/";
const char* kL4Ds = "NVIDIA L4 Tensor Core GPU datasheet - https://www.nvidia.com/en-us/data-center/l4/";
const char* kL40sDs = "NVIDIA L40S GPU datasheet - https://www.nvidia.com/en-us/data-center/l40s/";
const char* kAdaWp =
    "NVIDIA Ada GPU Architecture whitepaper (v2.1), Table 2 (GeForce RTX 4090) and Appendix - "
    "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf";
const char* kB200Spec =
    "NVIDIA HGX B200 specifications, per-GPU figures (tensor figures with sparsity) - "
    "https://www.nvidia.com/en-us/data-center/hgx/";

struct Builder {
  Datasheet d;

  Builder(std::string id, std::string name, std::string arch, std::string form, std::string form_token,
          std::vector<std::string> tokens, int sms, double boost_mhz) {
    d.id = std::move(id);
    d.name = std::move(name);
    d.architecture = std::move(arch);
    d.form_factor = std::move(form);
    d.form_token = std::move(form_token);
    d.name_tokens = std::move(tokens);
    d.sms = sms;
    d.boost_mhz = boost_mhz;
  }
  Builder& memory(std::string type, double gb, int bus_bits, double bytes_per_s) {
    d.memory_type = std::move(type);
    d.memory_gb = gb;
    d.memory_bus_bits = bus_bits;
    d.bandwidth = bytes_per_s;
    return *this;
  }
  Builder& tdp(double w) {
    d.tdp_w = w;
    return *this;
  }
  Builder& sources(std::vector<std::string> s) {
    d.sources = std::move(s);
    return *this;
  }
  Builder& notes(std::string n) {
    d.notes = std::move(n);
    return *this;
  }
  // A figure printed as is (teraFLOP/s or teraOP/s).
  Builder& peak(const std::string& key, double tera, std::string basis) {
    d.peaks[key] = tera * T;
    d.basis[key] = std::move(basis);
    return *this;
  }
  // Dense and sparse both printed.
  Builder& both(const std::string& key, double dense, double sparse, const std::string& basis) {
    peak(key, dense, basis);
    return peak(key + ".sparse", sparse, basis);
  }
  // Only the sparse figure printed (the asterisked column): dense is half.
  Builder& from_sparse(const std::string& key, double sparse, const std::string& src) {
    peak(key + ".sparse", sparse, src);
    return peak(key, sparse / 2, fmt::format("{}: sparse {:g} / 2, per its footnote", src, sparse));
  }
  Builder& derived(const std::string& key, double tera, const std::string& how) {
    return peak(key, tera, "derived: " + how);
  }
  Datasheet done() { return std::move(d); }
};

// ---- Volta -----------------------------------------------------------------
Datasheet v100(const std::string& id, const std::string& name, const std::string& form, const std::string& token,
               std::vector<std::string> tokens, double gb, double boost, double bw, double tdp, double fp64,
               double fp32, double tensor) {
  return Builder(id, name, "Volta", form, token, std::move(tokens), 80, boost)
      .memory("HBM2", gb, 4096, bw)
      .tdp(tdp)
      .sources({kV100Ds, kVoltaWp})
      .peak("fp64.cuda", fp64, "[1]")
      .peak("fp32.cuda", fp32, "[1]")
      .derived("fp16.cuda", 2 * fp32, "2 x FP32: Volta runs packed FP16 (half2) at twice the FP32 rate [2]")
      .peak("fp16.tensor", tensor, "[1] \"Tensor Performance\" (FP16 inputs, FP32 accumulate; no sparsity on Volta)")
      .notes("Volta tensor cores take FP16 only: no TF32, BF16, INT8 or sparsity")
      .done();
}

// ---- Ampere (GA100) ----------------------------------------------------------
Datasheet a100(const std::string& id, const std::string& name, const std::string& form, const std::string& token,
               const std::string& mem, double gb, double bw, double tdp) {
  return Builder(id, name, "Ampere", form, token, {"a100"}, 108, 1410)
      .memory(mem, gb, 5120, bw)
      .tdp(tdp)
      .sources({kA100Ds, kAmpereWp})
      .peak("fp64.cuda", 9.7, "[1]")
      .peak("fp64.tensor", 19.5, "[1]")
      .peak("fp32.cuda", 19.5, "[1]")
      .peak("fp16.cuda", 78, "[2] Peak FP16 (non-Tensor)")
      .peak("bf16.cuda", 39, "[2] Peak BF16 (non-Tensor)")
      .both("tf32.tensor", 156, 312, "[1]")
      .both("bf16.tensor", 312, 624, "[1]")
      .both("fp16.tensor", 312, 624, "[1]")
      .both("int8.tensor", 624, 1248, "[1]")
      .notes(form == "PCIe" ? "PCIe boards hold lower clocks under load than SXM at the same printed peaks" : "")
      .done();
}

// ---- Hopper -------------------------------------------------------------------
// H100/H200 with only the datasheet's (rounded, sparse) figures.
Datasheet hopper(const std::string& id, const std::string& name, const std::string& form, const std::string& token,
                 const std::string& product, int sms, double boost, const std::string& mem, double gb, int bus,
                 double bw, double tdp, const char* src, double fp64, double fp64t, double fp32, double tf32s,
                 double bf16s, double fp8s) {
  return Builder(id, name, "Hopper", form, token, {product}, sms, boost)
      .memory(mem, gb, bus, bw)
      .tdp(tdp)
      .sources({src, kHopperWp})
      .peak("fp64.cuda", fp64, "[1]")
      .peak("fp64.tensor", fp64t, "[1]")
      .peak("fp32.cuda", fp32, "[1]")
      .derived("fp16.cuda", 2 * fp32, "2 x FP32, Hopper's non-tensor FP16 rate ([2] gives 133.8 for 66.9 on SXM5)")
      .derived("bf16.cuda", 2 * fp32, "2 x FP32, Hopper's non-tensor BF16 rate ([2])")
      .from_sparse("tf32.tensor", tf32s, "[1]")
      .from_sparse("bf16.tensor", bf16s, "[1]")
      .from_sparse("fp16.tensor", bf16s, "[1]")
      .from_sparse("fp8.tensor", fp8s, "[1]")
      .from_sparse("int8.tensor", fp8s, "[1]")
      .done();
}

std::vector<Datasheet> build() {
  std::vector<Datasheet> v;
  // Volta: 80 SMs; SXM2 boosts to 1530 MHz, PCIe to 1380, V100S to 1597.
  v.push_back(
      v100("v100-sxm2-16gb", "NVIDIA V100 SXM2 16GB", "SXM2", "sxm", {"v100"}, 16, 1530, 900e9, 300, 7.8, 15.7, 125));
  v.push_back(
      v100("v100-sxm2-32gb", "NVIDIA V100 SXM2 32GB", "SXM2", "sxm", {"v100"}, 32, 1530, 900e9, 300, 7.8, 15.7, 125));
  v.push_back(
      v100("v100-pcie-16gb", "NVIDIA V100 PCIe 16GB", "PCIe", "pcie", {"v100"}, 16, 1380, 900e9, 250, 7, 14, 112));
  v.push_back(
      v100("v100-pcie-32gb", "NVIDIA V100 PCIe 32GB", "PCIe", "pcie", {"v100"}, 32, 1380, 900e9, 250, 7, 14, 112));
  v.push_back(v100("v100s-pcie-32gb", "NVIDIA V100S PCIe 32GB", "PCIe", "pcie", {"v100s"}, 32, 1597, 1134e9, 250, 8.2,
                   16.4, 130));

  // Ampere A100: 108 SMs at 1410 MHz; 40GB boards carry HBM2, 80GB HBM2e.
  v.push_back(a100("a100-pcie-40gb", "NVIDIA A100 PCIe 40GB", "PCIe", "pcie", "HBM2", 40, 1555e9, 250));
  v.push_back(a100("a100-pcie-80gb", "NVIDIA A100 PCIe 80GB", "PCIe", "pcie", "HBM2e", 80, 1935e9, 300));
  v.push_back(a100("a100-sxm4-40gb", "NVIDIA A100 SXM4 40GB", "SXM4", "sxm", "HBM2", 40, 1555e9, 400));
  v.push_back(a100("a100-sxm4-80gb", "NVIDIA A100 SXM4 80GB", "SXM4", "sxm", "HBM2e", 80, 2039e9, 400));

  // Hopper H100 SXM5: the whitepaper's unrounded figures (the datasheet rounds them: 34, 67, 1,979*).
  v.push_back(Builder("h100-sxm5-80gb", "NVIDIA H100 SXM5 80GB", "Hopper", "SXM5", "sxm", {"h100"}, 132, 1980)
                  .memory("HBM3", 80, 5120, 3.35e12)
                  .tdp(700)
                  .sources({kH100Ds, kHopperWp})
                  .peak("fp64.cuda", 33.5, "[2]")
                  .peak("fp64.tensor", 66.9, "[2]")
                  .peak("fp32.cuda", 66.9, "[2]")
                  .peak("fp16.cuda", 133.8, "[2] Peak FP16 (non-Tensor)")
                  .peak("bf16.cuda", 133.8, "[2] Peak BF16 (non-Tensor)")
                  .both("tf32.tensor", 494.7, 989.4, "[2]")
                  .both("fp16.tensor", 989.4, 1978.9, "[2]")
                  .both("bf16.tensor", 989.4, 1978.9, "[2]")
                  .both("fp8.tensor", 1978.9, 3957.8, "[2]")
                  .both("int8.tensor", 1978.9, 3957.8, "[2]")
                  .notes("tensor figures assume 1830 MHz, CUDA-core figures 1980 MHz (the whitepaper's clocks)")
                  .done());
  v.push_back(hopper("h100-pcie-80gb", "NVIDIA H100 PCIe 80GB", "PCIe", "pcie", "h100", 114, 1755, "HBM2e", 80, 5120,
                     2.0e12, 350, kH100Ds, 26, 51, 51, 756, 1513, 3026));
  v.back().notes = "datasheet TDP 300-350 W (configurable); the upper bound is listed";
  v.push_back(hopper("h100-nvl-94gb", "NVIDIA H100 NVL 94GB", "NVL (PCIe, NVLink bridge)", "nvl", "h100", 132, 1785,
                     "HBM3", 94, 6144, 3.9e12, 400, kH100Ds, 30, 60, 60, 835, 1671, 3341));
  v.back().notes =
      "per GPU (NVIDIA sells H100 NVL in bridged pairs); TDP 350-400 W configurable, the upper bound "
      "is listed";
  v.push_back(hopper("h200-sxm-141gb", "NVIDIA H200 SXM 141GB", "SXM5", "sxm", "h200", 132, 1980, "HBM3e", 141, 6144,
                     4.8e12, 700, kH200Ds, 34, 67, 67, 989, 1979, 3958));
  v.push_back(hopper("h200-nvl-141gb", "NVIDIA H200 NVL 141GB", "NVL (PCIe, NVLink bridge)", "nvl", "h200", 132, 1785,
                     "HBM3e", 141, 6144, 4.8e12, 600, kH200Ds, 30, 60, 60, 835, 1671, 3341));
  v.back().notes = "TDP up to 600 W (configurable)";

  // Ada Lovelace.
  v.push_back(Builder("l4-24gb", "NVIDIA L4 24GB", "Ada Lovelace", "PCIe (low profile)", "pcie", {"l4"}, 58, 2040)
                  .memory("GDDR6", 24, 192, 300e9)
                  .tdp(72)
                  .sources({kL4Ds, kAdaWp})
                  .peak("fp32.cuda", 30.3, "[1]")
                  .derived("fp64.cuda", 30.3 / 64, "1/64 of FP32, Ada's FP64 rate ([2] Appendix)")
                  .derived("fp16.cuda", 30.3, "1:1 with FP32 on Ada ([2] Table 2)")
                  .derived("bf16.cuda", 30.3, "1:1 with FP32 on Ada ([2] Table 2)")
                  .from_sparse("tf32.tensor", 120, "[1]")
                  .from_sparse("fp16.tensor", 242, "[1]")
                  .from_sparse("bf16.tensor", 242, "[1]")
                  .from_sparse("fp8.tensor", 485, "[1]")
                  .from_sparse("int8.tensor", 485, "[1]")
                  .done());
  v.push_back(Builder("l40s-48gb", "NVIDIA L40S 48GB", "Ada Lovelace", "PCIe", "pcie", {"l40s"}, 142, 2520)
                  .memory("GDDR6", 48, 384, 864e9)
                  .tdp(350)
                  .sources({kL40sDs, kAdaWp})
                  .peak("fp32.cuda", 91.6, "[1]")
                  .derived("fp64.cuda", 91.6 / 64, "1/64 of FP32, Ada's FP64 rate ([2] Appendix)")
                  .derived("fp16.cuda", 91.6, "1:1 with FP32 on Ada ([2] Table 2)")
                  .derived("bf16.cuda", 91.6, "1:1 with FP32 on Ada ([2] Table 2)")
                  .both("tf32.tensor", 183, 366, "[1]")
                  .both("bf16.tensor", 362.05, 733, "[1] (as printed: 362.05 dense against 733 sparse)")
                  .both("fp16.tensor", 362.05, 733, "[1] (as printed: 362.05 dense against 733 sparse)")
                  .both("fp8.tensor", 733, 1466, "[1]")
                  .both("int8.tensor", 733, 1466, "[1]")
                  .done());
  v.push_back(
      Builder("rtx4090-24gb", "NVIDIA GeForce RTX 4090", "Ada Lovelace", "PCIe (GeForce card)", "", {"rtx", "4090"},
              128, 2520)
          .memory("GDDR6X", 24, 384, 1008e9)
          .tdp(450)
          .sources({kAdaWp})
          .peak("fp32.cuda", 82.6, "[1]")
          .derived("fp64.cuda", 82.6 / 64, "1/64 of FP32, Ada's FP64 rate ([1] Appendix)")
          .peak("fp16.cuda", 82.6, "[1] Peak FP16 (non-Tensor)")
          .peak("bf16.cuda", 82.6, "[1] Peak BF16 (non-Tensor)")
          .both("tf32.tensor", 82.6, 165.2, "[1]")
          .both("fp16.tensor", 165.2, 330.4, "[1] with FP32 accumulate (GeForce: half the FP16-accumulate rate)")
          .both("bf16.tensor", 165.2, 330.4, "[1] with FP32 accumulate")
          .both("fp16.tensor.fp16acc", 330.3, 660.6, "[1] with FP16 accumulate")
          .both("fp8.tensor", 660.6, 1321.2, "[1]")
          .both("int8.tensor", 660.6, 1321.2, "[1]")
          .notes("TGP 450 W; GeForce tensor cores run FP16/BF16/TF32 with FP32 accumulate at half rate")
          .done());

  // Blackwell B200 (HGX): NVIDIA prints no boost clock; FP64 and FP64 tensor share one figure.
  v.push_back(
      Builder("b200-sxm-180gb", "NVIDIA B200 (HGX) 180GB", "Blackwell", "SXM (HGX B200)", "sxm", {"b200"}, 148, 0)
          .memory("HBM3e", 180, 8192, 7.7e12)
          .tdp(1000)
          .sources({kB200Spec})
          .peak("fp64.cuda", 37, "[1] FP64/FP64 Tensor Core")
          .peak("fp64.tensor", 37, "[1] FP64/FP64 Tensor Core")
          .peak("fp32.cuda", 75, "[1]")
          .from_sparse("tf32.tensor", 2200, "[1]")
          .from_sparse("fp16.tensor", 4500, "[1]")
          .from_sparse("bf16.tensor", 4500, "[1]")
          .from_sparse("fp8.tensor", 9000, "[1]")
          .from_sparse("int8.tensor", 9000, "[1]")
          .from_sparse("fp4.tensor", 18000, "[1]")
          .notes("NVIDIA revised early B200 figures (192 GB, 8 TB/s, FP64 40 TFLOP/s) to these; configurable "
                 "up to 1,000 W")
          .done());
  return v;
}

}  // namespace

const std::vector<Datasheet>& datasheets() {
  static const std::vector<Datasheet> all = build();
  return all;
}

// NVLink 1 (P100, 20 GB/s per link each way) is left out: no P100 entry, no source here.
const std::vector<NvlinkGeneration>& nvlink_generations() {
  static const std::vector<NvlinkGeneration> all = {
      {2, "V100 SXM2", 7, 0, 6, 300e9,
       std::string("NVLink 300 GB/s (all links, both ways): ") + kV100Ds + "; 6 links: " + kVoltaWp},
      {3, "A100 SXM4", 8, 0, 12, 600e9,
       std::string("NVLink 600 GB/s (all links, both ways): ") + kA100Ds + "; 12 links: " + kAmpereWp},
      {4, "H100 SXM, H200 SXM", 9, 0, 18, 900e9,
       std::string("NVLink 900 GB/s (all links, both ways): ") + kH100Ds + ", " + kH200Ds + "; 18 links: " + kHopperWp},
      {5, "B200 (HGX)", 10, 0, 18, 1800e9,
       std::string("NVLink 1.8 TB/s per GPU (all links, both ways): ") + kB200Spec +
           "; 18 links: NVIDIA Blackwell architecture technical brief"},
  };
  return all;
}

const NvlinkGeneration* nvlink_generation(int version) {
  for (const auto& g : nvlink_generations())
    if (g.version == version) return &g;
  return nullptr;
}

const NvlinkGeneration* nvlink_generation_of(int cc_major, int cc_minor) {
  for (const auto& g : nvlink_generations())
    if (g.cc_major == cc_major && g.cc_minor == cc_minor) return &g;
  return nullptr;
}

}  // namespace roofline::hw
