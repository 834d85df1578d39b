// Rates per SM per clock, from NVIDIA's architecture whitepapers (Volta,
// Turing, Ampere GA100 and GA102, Ada, Hopper, Blackwell) and the CUDA C++
// Programming Guide's "Arithmetic Instructions" throughput table. Each rate
// reproduces the whitepaper's peak for its reference product when multiplied
// by SMs and the clock NVIDIA used; tests check that against the datasheets.
#include "roofline/hardware/gpu_arch.hpp"

#include <fmt/format.h>

namespace roofline::hw {

namespace {

const std::vector<GpuArch>& table() {
  static const std::vector<GpuArch> t = {
      {6, 0, "Pascal (GP100)", "", 64, 32, 0, {{"fp64.cuda", 64}, {"fp32.cuda", 128}, {"fp16.cuda", 256}}, false, ""},
      {6,
       1,
       "Pascal",
       "",
       128,
       4,
       0,
       {{"fp64.cuda", 8}, {"fp32.cuda", 256}},
       false,
       "FP16 runs at 1/64 of FP32 on GP10x and is left out"},
      {7,
       0,
       "Volta",
       "1st generation",
       64,
       32,
       8,
       {{"fp64.cuda", 64}, {"fp32.cuda", 128}, {"fp16.cuda", 256}, {"fp16.tensor", 1024}},
       false,
       "Volta tensor cores take FP16 only (no BF16, TF32, INT8, sparsity)"},
      {7,
       5,
       "Turing",
       "2nd generation",
       64,
       2,
       8,
       {{"fp64.cuda", 4}, {"fp32.cuda", 128}, {"fp16.cuda", 256}, {"fp16.tensor", 1024}, {"int8.tensor", 2048}},
       false,
       "GeForce Turing halves the FP16 tensor rate with FP32 accumulate"},
      {8,
       0,
       "Ampere (GA100)",
       "3rd generation",
       64,
       32,
       4,
       {{"fp64.cuda", 64},
        {"fp32.cuda", 128},
        {"fp16.cuda", 512},
        {"bf16.cuda", 256},
        {"fp64.tensor", 128},
        {"tf32.tensor", 1024},
        {"fp16.tensor", 2048},
        {"bf16.tensor", 2048},
        {"int8.tensor", 4096}},
       true,
       ""},
      {8,
       6,
       "Ampere (GA10x)",
       "3rd generation",
       128,
       2,
       4,
       {{"fp64.cuda", 4},
        {"fp32.cuda", 256},
        {"fp16.cuda", 256},
        {"bf16.cuda", 256},
        {"tf32.tensor", 512},
        {"fp16.tensor", 1024},
        {"bf16.tensor", 1024},
        {"int8.tensor", 2048}},
       true,
       "GeForce GA10x halves the FP16/BF16/TF32 tensor rates with FP32 accumulate"},
      {8,
       7,
       "Ampere (Orin)",
       "3rd generation",
       128,
       0,
       4,
       {{"fp32.cuda", 256}, {"tf32.tensor", 1024}, {"fp16.tensor", 2048}, {"bf16.tensor", 2048}, {"int8.tensor", 4096}},
       true,
       "tensor rates from Jetson AGX Orin's published INT8 figure; FP64 rate not published"},
      {8,
       9,
       "Ada Lovelace",
       "4th generation",
       128,
       2,
       4,
       {{"fp64.cuda", 4},
        {"fp32.cuda", 256},
        {"fp16.cuda", 256},
        {"bf16.cuda", 256},
        {"tf32.tensor", 512},
        {"fp16.tensor", 1024},
        {"bf16.tensor", 1024},
        {"fp8.tensor", 2048},
        {"int8.tensor", 2048}},
       true,
       "GeForce Ada halves the FP16/BF16/TF32 tensor rates with FP32 accumulate"},
      {9,
       0,
       "Hopper",
       "4th generation",
       128,
       64,
       4,
       {{"fp64.cuda", 128},
        {"fp32.cuda", 256},
        {"fp16.cuda", 512},
        {"bf16.cuda", 512},
        {"fp64.tensor", 256},
        {"tf32.tensor", 2048},
        {"fp16.tensor", 4096},
        {"bf16.tensor", 4096},
        {"fp8.tensor", 8192},
        {"int8.tensor", 8192}},
       true,
       "NVIDIA quotes Hopper's tensor peaks at a lower clock than the maximum (H100 SXM5: 1830 MHz against "
       "1980 MHz), so tensor figures derived at the maximum clock exceed the datasheet's"},
      {10,
       0,
       "Blackwell (B200)",
       "5th generation",
       128,
       64,
       4,
       {{"fp64.cuda", 128},
        {"fp32.cuda", 256},
        {"fp64.tensor", 128},
        {"tf32.tensor", 4096},
        {"fp16.tensor", 8192},
        {"bf16.tensor", 8192},
        {"fp8.tensor", 16384},
        {"int8.tensor", 16384},
        {"fp4.tensor", 32768}},
       true,
       "Blackwell's tensor peaks are quoted at a lower clock than the maximum"},
      {12,
       0,
       "Blackwell (GB20x)",
       "5th generation",
       128,
       2,
       4,
       {{"fp64.cuda", 4},
        {"fp32.cuda", 256},
        {"tf32.tensor", 512},
        {"fp16.tensor", 1024},
        {"bf16.tensor", 1024},
        {"fp8.tensor", 2048},
        {"int8.tensor", 2048},
        {"fp4.tensor", 4096}},
       true,
       "GeForce Blackwell halves the FP16/BF16 tensor rates with FP32 accumulate"},
  };
  return t;
}

}  // namespace

const GpuArch* gpu_arch(int cc_major, int cc_minor) {
  for (const auto& a : table())
    if (a.cc_major == cc_major && a.cc_minor == cc_minor) return &a;
  return nullptr;
}

std::string architecture_name(int cc_major, int cc_minor) {
  if (const GpuArch* a = gpu_arch(cc_major, cc_minor)) return a->name;
  switch (cc_major) {
    case 6:
      return "Pascal";
    case 7:
      return cc_minor >= 5 ? "Turing" : "Volta";
    case 8:
      return cc_minor == 9 ? "Ada Lovelace" : "Ampere";
    case 9:
      return "Hopper";
    case 10:
    case 11:
    case 12:
      return "Blackwell";
    default:
      return fmt::format("unknown (CC {}.{})", cc_major, cc_minor);
  }
}

}  // namespace roofline::hw
