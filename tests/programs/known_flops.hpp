// Kernels whose FLOPs (per precision, per unit) and minimum DRAM traffic are
// known exactly, for checking hardware-counter derivations against arithmetic:
//   fp32_fma    FFMA only (explicit fmaf on 8 independent chains)
//   half2_fma   HFMA2 only (__hfma2 on __half2)
//   bf16x2_fma  HFMA2.BF16 only (__hfma2 on __nv_bfloat162)
//   poly        the seed report's polynomial kernel: k FADD + k FMUL per element
//               (written with __fadd_rn/__fmul_rn so nvcc cannot contract them)
//   copy        float4 copy: no FLOPs, reads and writes `copy_bytes` each
//   read        XOR of copy's input (integer ops only): no FLOPs, reads `copy_bytes`,
//               writes 4 bytes per block, so DRAM writes in its range can only be
//               dirty lines of earlier kernels (it runs right after copy)
//   gemm_bf16   cuBLASLt BF16 GEMM (FP32 accumulate): 2*M*N*K tensor FLOPs
//   gemm_tf32   cuBLASLt FP32 GEMM with CUBLAS_COMPUTE_32F_FAST_TF32: 2*M*N*K tensor FLOPs
// Used by the known_flops program (ncu comparison) and the GPU counter tests.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace roofline::testprog {

struct Sizes {
  std::uint64_t fma_threads = 1u << 20;  // threads of each FMA loop
  int fma_iters = 2048;                  // iterations of 8 chained FMAs per thread
  std::uint64_t poly_n = 1u << 24;       // the seed's n
  int poly_k = 100;                      // the seed's k
  std::uint64_t copy_bytes = 512ull << 20;
  int gemm_m = 6144, gemm_n = 6144, gemm_k = 6144;  // multiples of 768: every tile width cuBLASLt uses divides them
};

// What one launch of a phase must read on the counters.
struct Expected {
  std::string phase;
  std::string kernel;  // substring of the (mangled) kernel name; empty for library GEMMs
  // Exact thread-instruction counts (metric base name -> count), for the CUDA-core kernels.
  std::map<std::string, double> instructions;
  std::map<std::string, double> flops;           // CUDA-core FLOPs by precision (fp16 = half and bf16 lanes)
  std::map<std::string, double> tensor_flops;    // tensor FLOPs by precision, summed over the phase's kernels
  double dram_read_min = 0, dram_write_min = 0;  // analytic minimum bytes
  bool streaming = false;                        // DRAM traffic should equal the minimum (within tolerance)
  std::uint64_t threads = 0;                     // threads launched (0 for library GEMMs)
  // HFMA2 instructions per thread that nvcc 13.0 emits for sm_90 as register moves
  // (`HFMA2.MMA Rd, -RZ, RZ, 0, 0`, zeroing a register outside the loops); the hfma
  // counter reads instructions["hfma"] + threads x this. -1: not known (the SASS
  // check in tools/checks/counters.sh counts them on the device).
  int hfma_moves_per_thread = 0;
};

constexpr int kFmaChains = 8;
constexpr unsigned kReadBlocks = 1024;  // blocks of 256 threads of the read phase (grid-stride)

class KnownFlops {
 public:
  explicit KnownFlops(const Sizes& s = {});  // allocates and fills inputs with random values (seeded)
  ~KnownFlops();
  KnownFlops(const KnownFlops&) = delete;
  KnownFlops& operator=(const KnownFlops&) = delete;

  static std::vector<std::string> phases();  // in the order run_phase expects them
  // Launches the phase's kernel(s) once and waits; returns what the counters must show.
  Expected run_phase(const std::string& phase);
  Expected expected(const std::string& phase) const;

  // Host checks of the last outputs (so a kernel that did not run, or ran
  // wrong, fails the test): max relative error against a CPU reference on a sample.
  double check_phase(const std::string& phase) const;
  const Sizes& sizes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace roofline::testprog
