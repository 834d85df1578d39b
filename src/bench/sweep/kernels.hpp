// Launchers of the sweep kernels (kernels.cu). Only for .cu and _gpu.cpp files.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "roofline/bench/sweep.hpp"

namespace roofline::bench::sweep::gpu {

// Fills a[0..n) with the variant's inputs (input_value rounded to its type).
void launch_init(Variant v, void* a, std::int64_t n, std::uint32_t seed, cudaStream_t s);
// One sweep run: b = poly_k(a) over n elements, `block` threads per block.
void launch_sweep(Variant v, const void* a, void* b, std::int64_t n, int k, int block, cudaStream_t s);
// Counts non-finite outputs into *count (device memory, zeroed here first).
void launch_count_nonfinite(Variant v, const void* b, std::int64_t n, unsigned long long* count, cudaStream_t s);
// out[j] = raw bits of b[idx[j]] (2, 4 or 8 bytes, zero-extended).
void launch_gather(Variant v, const void* b, const std::int64_t* idx, std::int64_t m, std::uint64_t* out,
                   cudaStream_t s);

}  // namespace roofline::bench::sweep::gpu
