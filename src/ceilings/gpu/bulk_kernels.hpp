// DRAM streaming through the bulk-copy engine (cp.async.bulk, compute
// capability 9.0+): 16 KiB chunks moved between global and shared memory,
// completing on mbarriers, with few threads issuing them. Internal to
// memory_kernels.cu, which lists these as the last variant of each kind.
#pragma once
#include "src/ceilings/gpu/kernels.hpp"

namespace roofline::ceilings::gpu {

StreamVariant bulk_variant(StreamKind kind);
int bulk_grid(StreamKind kind, int device);
void launch_bulk_read(int grid, const void* in, size_t bytes, uint32_t* block_sums, int* error, cudaStream_t s);
void launch_bulk_write(int grid, void* out, size_t bytes, uint32_t seed, int* error, cudaStream_t s);
void launch_bulk_copy(int grid, const void* in, void* out, size_t bytes, int* error, cudaStream_t s);

}  // namespace roofline::ceilings::gpu
