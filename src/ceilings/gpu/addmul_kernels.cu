// CUDA-core add+multiply throughput: FP64 (DADD + DMUL), FP32 (FADD + FMUL),
// FP16 half2 (HADD2 + HMUL2) and BF16 bf16x2 (HADD2.BF16 + HMUL2.BF16). Each
// thread runs the sweep polynomial's own inner loop (kernels/poly_terms.cuh:
// r += p; p *= x on poly_elements<T>() independent elements) on registers
// only, so the ceiling is the rate of exactly the instructions, in exactly the
// dependency pattern, that the sweep's overlap kernels execute per term.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/fma_chain.cuh"
#include "kernels/poly_terms.cuh"
#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/chain_types.cuh"
#include "src/ceilings/gpu/kernels.hpp"
#include "src/ceilings/gpu/persistent_grid.cuh"

namespace roofline::ceilings::gpu {

namespace {

// Four blocks of 256 (1024 threads) per SM at least, as the overlap kernels run.
constexpr int kMinBlocks = 4;

// xs: the E multipliers (the same for every thread; arguments the compiler
// cannot see, so it can neither fold nor shorten the chains).
template <class T>
__global__ void __launch_bounds__(kAddmulThreads, kMinBlocks)
    addmul_kernel(int iters, const T* __restrict__ xs, T* __restrict__ out, int store_all, uint32_t sentinel,
                  ClockProbe* probe) {
  constexpr int E = kernels::poly_elements<T>();
  using Op = kernels::PolyOp<T>;
  const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  T x[E], r[E], p[E];
#pragma unroll
  for (int e = 0; e < E; ++e) {
    x[e] = xs[e];
    r[e] = start_value<T>(tid, 2 * e);
    p[e] = start_value<T>(tid, 2 * e + 1);
  }
  kernels::probe_begin(probe);
  kernels::addmul_steps<T, E>(r, p, x, iters * kernels::kPolyUnroll);
  T s = r[0];
#pragma unroll
  for (int e = 1; e < E; ++e) s = Op::add(s, r[e]);
#pragma unroll
  for (int e = 0; e < E; ++e) s = Op::add(s, p[e]);
  const uint32_t bits = kernels::Fma<T>::bits(s);
  kernels::probe_end(probe, bits);
  if (store_all) {
#pragma unroll
    for (int e = 0; e < E; ++e) {
      out[(static_cast<size_t>(tid) * E + e) * 2] = r[e];
      out[(static_cast<size_t>(tid) * E + e) * 2 + 1] = p[e];
    }
  } else if (bits == sentinel) {
    out[tid] = s;  // never, in practice: keeps the work without traffic
  }
}

template <class T>
int grid_of(int device) {
  return persistent_grid(addmul_kernel<T>, kAddmulThreads, 0, device, "the add+multiply kernel does not fit on an SM");
}

template <class T>
void launch(int grid, int iters, const void* xs, void* out, bool store_all, uint32_t sentinel, ClockProbe* probe,
            cudaStream_t s) {
  addmul_kernel<T><<<grid, kAddmulThreads, 0, s>>>(iters, static_cast<const T*>(xs), static_cast<T*>(out),
                                                   store_all ? 1 : 0, sentinel, probe);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

int addmul_elements(FmaType t) {
  return with_fma_type(t, [](auto v) { return kernels::poly_elements<decltype(v)>(); });
}

int addmul_grid(FmaType t, int device) {
  return with_fma_type(t, [&](auto v) { return grid_of<decltype(v)>(device); });
}

void launch_addmul(FmaType t, int grid, int iters, const void* xs, void* out, bool store_all, uint32_t sentinel,
                   ClockProbe* probe, cudaStream_t s) {
  with_fma_type(t, [&](auto v) { launch<decltype(v)>(grid, iters, xs, out, store_all, sentinel, probe, s); });
}

}  // namespace roofline::ceilings::gpu
