// overhead_workload: steady GPU work for measuring the profiler's overhead
// (tools/checks/profiler.sh runs it with and without `roofline profile`).
//
// Usage: overhead_workload small|busy|large
//   small: 300000 launches of a tiny kernel (one block), synchronised every
//          1000 launches: launch-bound (the host's ~3.5 µs per launch is the
//          loop's time, the GPU idles ~70%), the worst case for tracing overhead
//   busy:  100000 launches of a ~10 µs kernel (a block per SM, a chain of FMAs),
//          synchronised every 1000: many small kernels keeping the GPU busy
//   large: 400 launches of a kernel streaming 2 x 2 GiB (about 1.5 ms each on
//          an H100): the GPU-bound case
// After a warm-up it prints the steady loop's time: "loop_s=<seconds> launches=<n>".
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "overhead_workload: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)

__global__ void tiny(float* x) { x[threadIdx.x] += 1.0f; }  // x: (128)

__global__ void busy_fma(float* x, int iters) {  // x: (gridDim.x * blockDim.x)
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  for (int k = 0; k < iters; ++k) v = fmaf(v, 0.999f, 0.5f);  // one dependent chain: ~4 cycles a step
  x[i] = v;
}

__global__ void stream_copy(float4* __restrict__ dst, const float4* __restrict__ src, size_t n) {  // dst, src: (n)
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "small") && std::strcmp(argv[1], "busy") && std::strcmp(argv[1], "large"))) {
    std::fprintf(stderr, "usage: overhead_workload small|busy|large\n");
    return 64;
  }
  const bool busy = !std::strcmp(argv[1], "busy");
  bool small = !std::strcmp(argv[1], "small") || busy;  // busy shares small's buffers and sync period
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float* x = nullptr;
  float4 *a = nullptr, *b = nullptr;
  const size_t bytes = size_t{2} << 30, n = bytes / sizeof(float4);
  if (small) {
    CHECK(cudaMalloc(&x, size_t(sms) * 128 * sizeof(float)));
    CHECK(cudaMemset(x, 0, size_t(sms) * 128 * sizeof(float)));
  } else {
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    CHECK(cudaMemset(a, 0, bytes));
  }
  auto run = [&](int launches) {
    for (int i = 0; i < launches; ++i) {
      if (busy)
        busy_fma<<<sms, 128>>>(x, 5000);
      else if (small)
        tiny<<<1, 128>>>(x);
      else
        stream_copy<<<sms * 8, 512>>>(i % 2 ? a : b, i % 2 ? b : a, n);
      if ((i + 1) % (small ? 1000 : 10) == 0) CHECK(cudaDeviceSynchronize());
    }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  };
  int launches = busy ? 100000 : small ? 300000 : 400;
  run(launches / 10);  // warm-up: clocks up, code loaded, buffers of the profiler allocated
  auto t0 = std::chrono::steady_clock::now();
  run(launches);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("loop_s=%.6f launches=%d\n", s, launches);
  if (small)
    CHECK(cudaFree(x));
  else {
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
  }
  return 0;
}
