// The kernel that cleans L2 before a profiled launch (RangeProfiler, L2Clean::Evict),
// as PTX the driver compiles at first use. The range profiler loads it with the
// driver API into the launch's own context, so it needs no CUDA runtime and works
// for any context the application made. Plain C++: a CPU test assembles it with
// ptxas.
#pragma once

#include "roofline/profiler/range_profiler.hpp"

namespace roofline::prof::detail {

// Entry point name, also what the kernel is called in a trace of the profiled program.
inline constexpr const char* kL2EvictKernel = kL2CleanKernel;

// PTX of
//   extern "C" __global__ void roofline_l2_evict(const uint4* p, unsigned long long n,
//                                                unsigned never, unsigned* sink)
// which reads p[0..n) with ordinary loads (grid-stride) and XORs the words; it
// stores to *sink only when the XOR equals `never` (the caller zeroes p and passes
// 1, so it never stores). Reading 4 x L2 of distinct lines evicts every line L2
// held, so dirty lines are written back now and L2 is left holding clean lines only.
const char* l2_evict_ptx();

}  // namespace roofline::prof::detail
