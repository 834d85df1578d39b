// capture_target: kernels inside and outside capture ranges, for the GPU
// tests of `roofline profile --capture-range/--delay/--duration`
// (tests/gpu/test_profile_gpu.cpp). Every kernel is named for where it runs,
// and the GPU is synchronized at each boundary, so that each kernel starts on
// the GPU on its side of the boundary (what counts is the GPU start time).
//
// Usage:
//   capture_target api A N B M    A outside_kernel, cudaProfilerStart, N inside_kernel, cudaProfilerStop,
//                                 B outside_kernel, cudaProfilerStart, M inside_kernel, cudaProfilerStop,
//                                 A outside_kernel (two ranges, N + M inside)
//   capture_target nvtx A N B M   A outside_kernel; N inside_kernel inside a pushed range "capture_me"
//                                 (half of them in a nested range "inner"); B outside_kernel inside a range
//                                 "other"; M inside_kernel inside a start/end range "capture_me"; A outside_kernel
//   capture_target none A         A outside_kernel, no cudaProfilerStart and no NVTX range
//   capture_target phases P Q     P phase1_kernel right after CUDA starts (done before 1.5 s after main),
//                                 then idle until 3.0 s after main, then Q phase2_kernel: --delay 2 keeps
//                                 phase 2 alone, --duration 2 phase 1 alone
// Exit 0 when every kernel ran; 3 when phase 1 overran its 1.5 s (the
// timing the test relies on did not hold: it says so).
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#define CHECK(call)                                                                           \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "capture_target: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)

__global__ void outside_kernel(int* c) { atomicAdd(c, 1); }
__global__ void inside_kernel(int* c) { atomicAdd(c, 1); }
__global__ void phase1_kernel(int* c) { atomicAdd(c, 1); }
__global__ void phase2_kernel(int* c) { atomicAdd(c, 1); }

namespace {

using Clock = std::chrono::steady_clock;
int* g_count = nullptr;  // device counter: one per kernel that ran
long g_launched = 0;

void launch(void (*k)(int*), long n) {
  for (long i = 0; i < n; ++i) k<<<1, 1>>>(g_count);
  CHECK(cudaGetLastError());
  g_launched += n;
  CHECK(cudaDeviceSynchronize());  // the next boundary comes after these ran
}

int usage() {
  std::fprintf(stderr,
               "usage: capture_target api A N B M | nvtx A N B M | none A | phases P Q (see the file's comment)\n");
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  const Clock::time_point t0 = Clock::now();
  if (argc < 2) return usage();
  const char* mode = argv[1];
  long v[4] = {0, 0, 0, 0};
  const int want = !std::strcmp(mode, "none") ? 1 : !std::strcmp(mode, "phases") ? 2 : 4;
  if (argc != 2 + want) return usage();
  for (int i = 0; i < want; ++i) v[i] = std::atol(argv[2 + i]);
  CHECK(cudaMalloc(&g_count, sizeof(int)));
  CHECK(cudaMemset(g_count, 0, sizeof(int)));
  CHECK(cudaDeviceSynchronize());

  if (!std::strcmp(mode, "api")) {
    launch(outside_kernel, v[0]);
    CHECK(cudaProfilerStart());
    launch(inside_kernel, v[1]);
    CHECK(cudaProfilerStop());
    launch(outside_kernel, v[2]);
    CHECK(cudaProfilerStart());
    launch(inside_kernel, v[3]);
    CHECK(cudaProfilerStop());
    launch(outside_kernel, v[0]);
  } else if (!std::strcmp(mode, "nvtx")) {
    launch(outside_kernel, v[0]);
    nvtxRangePushA("capture_me");
    launch(inside_kernel, v[1] / 2);
    nvtxRangePushA("inner");
    launch(inside_kernel, v[1] - v[1] / 2);
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangePushA("other");
    launch(outside_kernel, v[2]);
    nvtxRangePop();
    nvtxRangeId_t id = nvtxRangeStartA("capture_me");
    launch(inside_kernel, v[3]);
    nvtxRangeEnd(id);
    launch(outside_kernel, v[0]);
  } else if (!std::strcmp(mode, "none")) {
    launch(outside_kernel, v[0]);
  } else if (!std::strcmp(mode, "phases")) {
    launch(phase1_kernel, v[0]);
    const double phase1_s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (phase1_s > 1.5) {
      std::fprintf(stderr, "capture_target: phase 1 ended %.2f s after the start, later than 1.5 s\n", phase1_s);
      return 3;
    }
    std::this_thread::sleep_until(t0 + std::chrono::milliseconds(3000));
    launch(phase2_kernel, v[1]);
  } else {
    return usage();
  }

  int ran = 0;
  CHECK(cudaMemcpy(&ran, g_count, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(g_count));
  if (ran != g_launched) {
    std::fprintf(stderr, "capture_target: %d kernels ran, %ld launched\n", ran, g_launched);
    return 4;
  }
  std::printf("capture_target: done (%ld kernels)\n", g_launched);
  return 0;
}
