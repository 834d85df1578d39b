#include "src/ceilings/cpu/host.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace roofline::ceilings::cpu {

namespace {
#if defined(__x86_64__)
// 16 dependent register-register adds per iteration: 16 cycles. (Adds of an
// immediate are avoided: some cores fold those at rename.)
double time_add_chain(std::uint64_t iters) {
  auto t0 = std::chrono::steady_clock::now();
  std::uint64_t x = 0, one = 1, n = iters;
  asm volatile(
      "1:\n\t"
      "add %[one], %[x]\n\tadd %[one], %[x]\n\tadd %[one], %[x]\n\tadd %[one], %[x]\n\t"
      "add %[one], %[x]\n\tadd %[one], %[x]\n\tadd %[one], %[x]\n\tadd %[one], %[x]\n\t"
      "add %[one], %[x]\n\tadd %[one], %[x]\n\tadd %[one], %[x]\n\tadd %[one], %[x]\n\t"
      "add %[one], %[x]\n\tadd %[one], %[x]\n\tadd %[one], %[x]\n\tadd %[one], %[x]\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      : [x] "+r"(x), [n] "+r"(n)
      : [one] "r"(one)
      : "cc");
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count();
}
#endif
}  // namespace

Frequency measure_frequency() {
  Frequency f;
#if defined(__x86_64__)
  const std::uint64_t iters = 1u << 20;  // 16M cycles: about 4 ms at 4 GHz
  int nt = threads();
  std::vector<double> mhz(static_cast<size_t>(nt), 0.0);
#pragma omp parallel num_threads(nt)
  {
    double best = 1e30;
    time_add_chain(iters);  // wake the core up to its load clock
    for (int r = 0; r < 5; ++r) best = std::min(best, time_add_chain(iters));
    mhz[static_cast<size_t>(omp_get_thread_num())] = 16.0 * static_cast<double>(iters) / best / 1e6;
  }
  std::sort(mhz.begin(), mhz.end());
  f.mhz = mhz[mhz.size() / 2];
  f.method = "timed chain of dependent adds, all threads at once (best of 5, median over threads)";
#else
  f.method = "not measured on this architecture";
#endif
  return f;
}

std::uint64_t available_memory_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("MemAvailable:", 0) == 0) return std::stoull(line.substr(13)) * 1024;  // "... kB"
  long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(size) : 0;
}

int threads() { return std::max(1, omp_get_max_threads()); }

#if defined(__x86_64__)
FlushDenormals::FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }  // FTZ | DAZ
FlushDenormals::~FlushDenormals() { _mm_setcsr(saved_); }
#else
FlushDenormals::FlushDenormals() = default;
FlushDenormals::~FlushDenormals() = default;
#endif

}  // namespace roofline::ceilings::cpu
