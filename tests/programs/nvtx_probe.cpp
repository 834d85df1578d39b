// nvtx_probe: NVTX calls and nothing else (no CUDA), for the test that
// NVTX_INJECTION64_PATH=libroofline_inject.so installs the profiler's NVTX
// hooks (tests/gpu/test_profile_gpu.cpp, ProfileGpu.NvtxHooksInstallWithoutAGpu;
// it needs no GPU). Prints what NVTX returned: push and pop give the nesting
// level with a tool attached and a negative value without one; a start/end
// range gets a non-zero id with a tool, 0 without.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>

int main() {
  int a = nvtxRangePushA("epoch");
  int b = nvtxRangePushA("forward");
  int c = nvtxRangePop();
  int d = nvtxRangePop();
  nvtxRangeId_t id = nvtxRangeStartA("io");
  nvtxRangeEnd(id);
  std::printf("nvtx_probe: push %d %d pop %d %d range %llu\n", a, b, c, d, static_cast<unsigned long long>(id));
  return 0;
}
