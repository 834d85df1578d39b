// What the CPU measurements need to know about the host at run time: the
// clock the cores really run at under load, memory still available, threads.
#pragma once
#include <cstdint>
#include <string>

namespace roofline::bench::cpu {

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

}  // namespace roofline::bench::cpu
