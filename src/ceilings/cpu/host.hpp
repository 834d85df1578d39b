// What the CPU measurements need to know about the host at run time: the
// clock the cores really run at under load, memory still available, threads.
#pragma once
#include <cstdint>
#include <string>

namespace roofline::ceilings::cpu {

struct Frequency {
  double mhz = 0;       // median over threads; 0 when it could not be measured
  std::string method;   // how, for people
};
// Every thread times a chain of dependent register adds (one cycle each on
// every x86 core) at the same time, so this is the all-core clock under load.
Frequency measure_frequency();

// MemAvailable from /proc/meminfo (bytes), or free pages from sysconf.
std::uint64_t available_memory_bytes();

// Threads OpenMP will use.
int threads();

// Flushes denormal results to zero and treats denormal inputs as zero (x86
// MXCSR FTZ and DAZ) in the calling thread while alive; restores the old mode.
// x86 cores take a microcode assist of ~100 cycles per denormal operand, so a
// sweep whose powers a^k underflow (a in [0.5, 1), k >= ~130 in fp32) would
// time the assists, not the arithmetic: 18 GFLOP/s instead of ~600 on a
// 16-thread Xeon (H100 host). GPUs handle denormals at full rate.
// A no-op on other architectures.
class FlushDenormals {
 public:
  FlushDenormals();
  ~FlushDenormals();
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  unsigned saved_ = 0;
};

}  // namespace roofline::ceilings::cpu
