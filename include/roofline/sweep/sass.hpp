// What the GPU really executes for each sweep kernel: floating-point
// instructions counted in the compiled SASS (cuobjdump -sass), so the sweep
// states its FLOPs per instruction from the machine code rather than from the
// source. The build runs cuobjdump on the sweep kernels' object and compiles
// the result in; a binary built where cuobjdump was missing runs it on itself
// at run time if it can, and otherwise says the check was not done.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "roofline/sweep/sweep.hpp"

namespace roofline::sweep {

struct SassKernel {
  std::string name;  // function name as SASS shows it
  std::string arch;  // "sm_90"
  // Opcode -> count, for the floating-point add/multiply/FMA families:
  // FADD FMUL FFMA, DADD DMUL DFMA, HADD2 HMUL2 HFMA2, and HADD2.BF16 HMUL2.BF16
  // HFMA2.BF16 for bfloat16 (any _V2 suffix folded in). HFMA2 with both
  // factors RZ (the compiler's way to load a constant) is not counted.
  // HFMA2.MMA (the half2 FMA on the second, MMA pipe; also the compiler's form
  // of some adds, R * 1 + R, and multiplies, R * R - 0) counts in HFMA2 and
  // again under "HFMA2.MMA" ("HFMA2.MMA.BF16").
  std::map<std::string, int> ops;
  int count(const std::string& op) const;
};

// Parses the text of `cuobjdump -sass`.
std::vector<SassKernel> parse_sass(const std::string& text);

struct SassCheck {
  bool done = false;
  std::string source;   // how the SASS was read, for people
  std::string why_not;  // why it was not, when !done
  std::vector<SassKernel> kernels;
  const SassKernel* find(const std::string& kernel, const std::string& arch) const;
};

// The build's check, or one made now on this executable (once per process).
const SassCheck& sweep_sass();
// Runs `cuobjdump -sass` on a binary (for the run-time check and tests).
SassCheck sass_of_binary(const std::string& path);
// "sm_90" for compute capability 9.0.
std::string sm_arch(int cc_major, int cc_minor);

// What the instruction mix means for the peak: the FLOP rate it can reach as
// a fraction of the FMA FLOP rate of the same precision (FADD, FMUL and FFMA
// issue at one rate, so one FLOP per instruction is half of FMA's two).
struct MixVerdict {
  bool from_sass = false;
  double fraction_of_fma_peak = 0.5;
  std::string text;  // e.g. "SASS (sm_90): compute_k_terms has FADD + FMUL per term, no FFMA -> ..."
};
MixVerdict mix_verdict(Variant v, const SassCheck& sass, const std::string& arch);  // the seed's kernel
MixVerdict mix_verdict(Variant v, Kernel kernel, const SassCheck& sass, const std::string& arch);

}  // namespace roofline::sweep
