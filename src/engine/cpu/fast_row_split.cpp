// The fast CPU backend's row split (ops::for_row_chunks and
// ops::linear_joins_row_split): when a network pass runs every layer on each
// thread's rows in one parallel region, and which Linear layers join it.
#include <functional>

#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast {

// Rows per thread below which a forward (or the row part of a backward) is split by
// columns inside each op instead: with fewer rows a thread streams a whole layer's weights for too few
// multiply-adds (simple-mlp's 784x256 layer is 800 KB per thread).
constexpr std::int64_t kMinRowsPerChunk = 4;

void for_row_chunks(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& f, double row_flops) {
  fast::for_row_chunks(n, kMinRowsPerChunk, row_flops, f);
}

bool linear_joins_row_split(std::int64_t in) {
  // Largest K whose 8 rows of input plus a 6-row weight panel (the GEMM's 4 x 6 blocks)
  // fit in ~24 KB, half of a 48 KB L1: 14 x 512 x 4 B = 28 KB.
  constexpr std::int64_t kMaxK = 512;
  return in <= kMaxK;
}

}  // namespace roofline::engine::fast
