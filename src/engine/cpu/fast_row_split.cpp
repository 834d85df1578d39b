// The fast CPU backend's row split (ops::for_row_chunks and
// ops::linear_joins_row_split): when a network pass runs every layer on each
// thread's rows in one parallel region, and which Linear layers join it.
#include <cstdlib>
#include <functional>
#include <string>

#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast {

// Rows per thread below which a forward (or the row part of a backward) is split by
// columns inside each op instead: with fewer rows a thread streams a whole layer's weights for too few
// multiply-adds (simple-mlp's 784x256 layer is 800 KB per thread).
constexpr std::int64_t kMinRowsPerChunk = 4;

void for_row_chunks(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& f, bool training,
                    double row_flops) {
  // ROOFLINE_ROW_CHUNKS=0: every op splits its own work instead; =infer: only
  // outside training steps (for comparisons; the results are the same bit for bit).
  enum class Use { All, Infer, Off };
  static const Use use = [] {
    const char* v = std::getenv("ROOFLINE_ROW_CHUNKS");
    const std::string s = v ? v : "";
    return s == "0" ? Use::Off : s == "infer" ? Use::Infer : Use::All;
  }();
  if (use == Use::Off || (use == Use::Infer && training)) return f(0, n);
  fast::for_row_chunks(n, kMinRowsPerChunk, row_flops, f);
}

bool linear_joins_row_split(std::int64_t in) {
  // Largest K whose 8 rows of input plus a 6-row weight panel (the GEMM's 4 x 6 blocks)
  // fit in ~24 KB, half of a 48 KB L1: 14 x 512 x 4 B = 28 KB.
  constexpr std::int64_t kMaxK = 512;
  static const bool off = [] {  // ROOFLINE_ROW_PREFIX=0: every layer in the row split (for comparisons)
    const char* v = std::getenv("ROOFLINE_ROW_PREFIX");
    return v && std::string(v) == "0";
  }();
  return off || in <= kMaxK;
}

}  // namespace roofline::engine::fast
