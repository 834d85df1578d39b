// profile_target: a CUDA program whose GPU work is known exactly, profiled by
// the GPU tests (tests/gpu/test_profile_gpu.cpp) through `roofline profile`.
//
// Usage: profile_target [--fork] [--exit N] [--selfkill] [--cupti-first] [--reset] [--nvtx-early]
//   --fork         first fork a child (before this process touches CUDA) that
//                  runs child_kernel 7 times in its own CUDA context
//   --exit N       end with exit code N after the work
//   --selfkill     after the work, wait 2 s (snapshots are written) and SIGKILL itself
//   --cupti-first  subscribe to CUPTI before CUDA starts, as another profiler would
//   --reset        end with cudaDeviceReset (destroys the context before exit)
//   --nvtx-early   push an NVTX range "app" before CUDA starts and pop it at the
//                  end: every kernel's path then begins with "app/"
//
// Work of the main process:
//   scale_kernel x 200, grid (40,1,1) block (256,1,1)
//   add_kernel   x 50,  grid (8,2,1)  block (32,4,1), inside NVTX ranges epoch/forward
//   cudaMemcpy HtoD from pageable memory: 1 MiB x 3 and 40960 bytes x 1
//   cudaMemcpyAsync HtoD from pinned memory: 4 MiB x 2
//   cudaMemcpy DtoH to pinned memory: 4096 bytes x 1
//   cudaMemset: 8192 bytes x 1
// Work of the child (--fork): child_kernel x 7, grid (1,1,1) block (32,1,1),
//   cudaMemset 4 bytes x 1, cudaMemcpy DtoH to pageable memory 4 bytes x 1
// Results are checked, so a kernel that did not run fails the program.
#include <cuda_runtime.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                           \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "profile_target: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                           \
    }                                                                                         \
  } while (0)

__global__ void scale_kernel(float* x, int n, float a) {  // x: (n)
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

__global__ void add_kernel(float* y, const float* x, int n) {  // y, x: (n)
  int i = (blockIdx.y * gridDim.x + blockIdx.x) * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

__global__ void child_kernel(int* c) { atomicAdd(c, 1); }

namespace {

void CUPTIAPI ignore(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

int run_child() {
  int* c = nullptr;
  CHECK(cudaMalloc(&c, sizeof(int)));
  CHECK(cudaMemset(c, 0, sizeof(int)));
  for (int i = 0; i < 7; ++i) child_kernel<<<1, 32>>>(c);
  CHECK(cudaGetLastError());
  int h = 0;
  CHECK(cudaMemcpy(&h, c, sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(c));
  if (h != 7 * 32) {
    std::fprintf(stderr, "profile_target: child counted %d, expected %d\n", h, 7 * 32);
    return 3;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool fork_child = false, selfkill = false, cupti_first = false, reset = false, nvtx_early = false;
  int exit_code = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--fork"))
      fork_child = true;
    else if (!std::strcmp(argv[i], "--selfkill"))
      selfkill = true;
    else if (!std::strcmp(argv[i], "--cupti-first"))
      cupti_first = true;
    else if (!std::strcmp(argv[i], "--reset"))
      reset = true;
    else if (!std::strcmp(argv[i], "--nvtx-early"))
      nvtx_early = true;
    else if (!std::strcmp(argv[i], "--exit") && i + 1 < argc)
      exit_code = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: profile_target [--fork] [--exit N] [--selfkill] [--cupti-first] [--reset] [--nvtx-early]\n");
      return 64;
    }
  }
  if (nvtx_early) nvtxRangePushA("app");  // before any CUDA call: the profiler is not started yet
  CUpti_SubscriberHandle sub = nullptr;
  if (cupti_first) {
    CUptiResult r = cuptiSubscribe(&sub, reinterpret_cast<CUpti_CallbackFunc>(ignore), nullptr);
    std::printf("profile_target: cuptiSubscribe before CUDA: %d\n", static_cast<int>(r));
  }
  if (fork_child) {
    pid_t pid = fork();
    if (pid < 0) return 4;
    if (pid == 0) return run_child();  // returns through exit(): the profiler's atexit handler runs
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "profile_target: the child failed (status %d)\n", status);
      return 5;
    }
  }

  const int n = 40 * 256;        // scale: one thread per element
  const int m = 8 * 2 * 32 * 4;  // add: one thread per element
  const size_t page_bytes = 1 << 20, pin_bytes = 4 << 20;
  float *x = nullptr, *y = nullptr, *big = nullptr;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, m * sizeof(float)));
  CHECK(cudaMalloc(&big, pin_bytes));
  std::vector<float> pageable(page_bytes / sizeof(float));
  for (size_t i = 0; i < pageable.size(); ++i) pageable[i] = 1.0f + static_cast<float>(i % 7);
  float* pinned = nullptr;
  CHECK(cudaMallocHost(&pinned, pin_bytes));
  for (size_t i = 0; i < pin_bytes / sizeof(float); ++i) pinned[i] = 0.5f;
  for (int i = 0; i < 3; ++i) CHECK(cudaMemcpy(big, pageable.data(), page_bytes, cudaMemcpyHostToDevice));
  for (int i = 0; i < 2; ++i) CHECK(cudaMemcpyAsync(big, pinned, pin_bytes, cudaMemcpyHostToDevice, 0));
  CHECK(cudaMemset(y, 0, m * sizeof(float)));
  CHECK(cudaMemcpy(x, pageable.data(), n * sizeof(float), cudaMemcpyHostToDevice));  // 40960 bytes

  for (int i = 0; i < 200; ++i) scale_kernel<<<dim3(40, 1, 1), dim3(256, 1, 1)>>>(x, n, 1.0f);
  CHECK(cudaGetLastError());
  nvtxRangePushA("epoch");
  nvtxRangePushA("forward");
  for (int i = 0; i < 50; ++i) add_kernel<<<dim3(8, 2, 1), dim3(32, 4, 1)>>>(y, big, m);
  CHECK(cudaGetLastError());
  nvtxRangePop();
  nvtxRangePop();
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(pinned, y, 4096, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 1024; ++i)
    if (pinned[i] != 50 * 0.5f) {  // y = 50 x big, and big = 0.5 (the last, pinned copy)
      std::fprintf(stderr, "profile_target: y[%d] = %g, expected %g\n", i, pinned[i], 50 * 0.5f);
      return 6;
    }
  std::printf("profile_target: done\n");
  std::fflush(stdout);
  if (selfkill) {
    sleep(2);
    raise(SIGKILL);
  }
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaFree(big));
  CHECK(cudaFree(y));
  CHECK(cudaFree(x));
  if (nvtx_early) nvtxRangePop();
  if (reset) CHECK(cudaDeviceReset());
  if (sub) cuptiUnsubscribe(sub);
  return exit_code;
}
