// In-kernel SM clock probe: thread 0 of block 0 reads the SM cycle counter
// (clock64) and the global nanosecond timer (%globaltimer) when the timed work
// starts and ends; cycles over nanoseconds is the SM clock the kernel actually
// ran at, even for kernels too short for NVML's sampling to see.
#pragma once
#include <cstdint>

namespace roofline::kernels {

struct ClockProbe {
  unsigned long long clock0, clock1;  // SM cycles
  unsigned long long ns0, ns1;        // %globaltimer, nanoseconds
};

#if defined(__CUDACC__)
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ unsigned long long sm_cycles() {
  unsigned long long c;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
  return c;
}

__device__ __forceinline__ bool probe_thread() { return blockIdx.x == 0 && threadIdx.x == 0; }

__device__ __forceinline__ void probe_begin(ClockProbe* p) {
  if (p != nullptr && probe_thread()) {
    p->ns0 = global_ns();
    p->clock0 = sm_cycles();
  }
}

// `dep` is a value computed by the timed work: passing it to the asm keeps the
// compiler from reading the clocks before that work is done.
__device__ __forceinline__ void probe_end(ClockProbe* p, uint32_t dep) {
  if (p != nullptr && probe_thread()) {
    asm volatile("" ::"r"(dep));
    p->clock1 = sm_cycles();
    p->ns1 = global_ns();
  }
}
#endif

// MHz from a filled probe; 0 when it is implausible (not written, or too short
// for the timer's resolution).
inline double probe_mhz(const ClockProbe& p) {
  if (p.ns1 <= p.ns0 + 20000 || p.clock1 <= p.clock0) return 0;  // < 20 µs: too coarse
  return static_cast<double>(p.clock1 - p.clock0) / static_cast<double>(p.ns1 - p.ns0) * 1e3;
}

}  // namespace roofline::kernels
