// How the fast CPU path splits work between threads (OMP_NUM_THREADS of them).
//
// Each op opens at most one parallel region, with as many threads as its work
// pays for: a region costs a few µs on an idle 16-core host (far more when the
// machine is oversubscribed and a thread of the team is descheduled), so a
// thread should get several microseconds of work. Regions run on the fast
// path's own thread pool (thread_pool.hpp). Work is split into a fixed
// set of tasks (tiles, images, column blocks); each task is computed by one
// thread, whichever takes it (parallel_for), so results depend neither on the
// thread count nor on which thread ran what.
#pragma once
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

#include "src/engine/cpu/thread_pool.hpp"

namespace roofline::engine::fast {

// Work below which a thread is not worth waking: ~2-4 µs of FMAs on one core.
constexpr double kFlopsPerThread = 256e3;
// Bytes per thread for memory-bound loops (~4 µs at L2/L3 speeds).
constexpr double kBytesPerThread = 128e3;
// Loops whose elements cost far more than their bytes (a max-pool window
// compare-and-select, an exp): elements per thread, ~3 µs at ~1-2 ns each.
constexpr double kElementsPerThread = 2048;
// What a task of a small convolution costs beside its FLOPs (scratch, the
// flattened copy-out), in FLOP-equivalents: a 12×12 plane of simple-cnn took
// ~0.15-0.23 µs per image for 1.6 kFLOP (one thread), so FLOPs
// alone kept batch 128 on one thread (29 µs on the GPU host).
constexpr double kFlopsPerTask = 16e3;

inline int max_threads() { return std::max(1, omp_get_max_threads()); }

// Inside a parallel region already: the pool's or an OpenMP one (the direct
// convolution's loops).
inline bool in_parallel() { return ThreadPool::in_job() || omp_in_parallel(); }

// Threads for `work` units when each thread should get at least `per_thread`,
// and no more than `tasks` (the number of independent pieces).
inline int threads_for(double work, double per_thread, std::int64_t tasks) {
  const double t = std::min<double>(max_threads(), std::max(1.0, work / per_thread));
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(static_cast<std::int64_t>(t), tasks)));
}

// Part `t` of `n` items split into `parts` contiguous ranges, the first n % parts
// one longer: the split parallel_for gives thread t when it runs `parts` tasks on
// `parts` threads, first (another thread takes them when t is late). Ops that
// want the same data on the same thread from one call to the next (a Linear
// layer's weight rows, forward and update) share it.
struct Range {
  std::int64_t begin = 0, end = 0;
};
inline Range owned_range(std::int64_t n, std::int64_t parts, std::int64_t t) {
  const std::int64_t q = n / parts, r = n % parts;
  const std::int64_t begin = t * q + std::min(t, r);
  return {begin, begin + q + (t < r ? 1 : 0)};
}

// Task claims for parallel_for: thread t's own range of tasks (owned_range)
// behind a cursor that whoever takes tasks from it moves, a few tasks a claim.
struct alignas(64) TaskCursor {
  std::atomic<std::int64_t> next{0};
  std::int64_t end = 0, grain = 1;
};

// Takes tasks from `c` until none is left, running f on each. A cursor seen
// spent is left alone: read, its line stays shared among the threads that look
// at it; a fetch_add would take it from them, once per thread and cursor at
// every region's end.
template <class F>
void drain(TaskCursor& c, F& f) {
  for (;;) {
    if (c.next.load(std::memory_order_relaxed) >= c.end) return;
    const std::int64_t i = c.next.fetch_add(c.grain, std::memory_order_relaxed);
    if (i >= c.end) return;
    for (std::int64_t j = i, e = std::min(c.end, i + c.grain); j < e; ++j) f(j);
  }
}

// Runs f(i) for i in [0, n) on up to `threads` threads. Thread t first takes
// the tasks of its own contiguous block (schedule(static)'s: the first n % t
// blocks one longer), in order, so data it touched in the same op last time is
// in its cache; then it takes what is left of the other threads' blocks. A
// thread slowed or descheduled by the host (a lent VM's vCPUs are not all
// equal from one moment to the next) then costs the region only the tasks it
// already started, and a worker that has not joined by the time the calling
// thread ran out of tasks skips the region (ThreadPool::Join::WhileOpen). Every
// task writes its own outputs and uses its own thread's scratch, so results do
// not depend on which thread ran it, nor on the thread count.
//
// Inside a parallel region already (for_row_chunks: each thread runs a whole
// forward on its own rows) it runs on the calling thread alone.
template <class F>
void parallel_for(std::int64_t n, int threads, F&& f) {
  if (threads <= 1 || n <= 1 || in_parallel()) {
    for (std::int64_t i = 0; i < n; ++i) f(i);
    return;
  }
  const int team = max_threads();
  const std::int64_t t = std::min<std::int64_t>(std::min(threads, team), n);
  std::unique_ptr<TaskCursor[]> cursors(new TaskCursor[static_cast<size_t>(t)]);
  for (std::int64_t id = 0; id < t; ++id) {
    const Range r = owned_range(n, t, id);
    cursors[id].next.store(r.begin, std::memory_order_relaxed);
    cursors[id].end = r.end;
    cursors[id].grain = std::max<std::int64_t>(1, (r.end - r.begin) / 4);  // ~4 claims a block
  }
  auto body = [&](std::int64_t id) {
    for (std::int64_t k = 0; k < t; ++k) drain(cursors[(id + k) % t], f);
  };
  run_on_threads(static_cast<int>(t), body, ThreadPool::Join::WhileOpen);
}

// Rows whose forward costs at least this many FLOPs (~16 µs of one core) are
// split finer than one chunk per thread: beside such a row, what a chunk costs
// on its own (every op's call, streaming a Linear layer's weights) is small.
constexpr double kHeavyRowFlops = 1e6;
// Chunks per thread for heavy rows: what a thread that runs slower (a busy
// hyperthread sibling, a vCPU the host shares) leaves is taken by the others.
constexpr std::int64_t kHeavyRowChunksPerThread = 4;

// f(r0, r1) over row ranges covering [0, n), in one parallel region, when every
// range gets at least `min_rows` rows; the ops f calls then run on their calling
// thread (parallel_for above). One range per thread, or where a row's forward
// costs `row_flops` ≥ kHeavyRowFlops up to kHeavyRowChunksPerThread per thread
// (one row at least each). Else f(0, n), and the ops split their own work
// between threads.
template <class F>
void for_row_chunks(std::int64_t n, std::int64_t min_rows, double row_flops, F&& f) {
  const std::int64_t threads = max_threads();
  std::int64_t chunks = std::min<std::int64_t>(threads, n / std::max<std::int64_t>(1, min_rows));
  if (row_flops >= kHeavyRowFlops) chunks = std::min<std::int64_t>(threads * kHeavyRowChunksPerThread, n);
  if (chunks <= 1 || in_parallel()) {
    f(std::int64_t{0}, n);
    return;
  }
  parallel_for(chunks, static_cast<int>(threads), [&](std::int64_t c) { f(c * n / chunks, (c + 1) * n / chunks); });
}

// A grid of gm × gn tiles of tm × tn (multiples of the alignments) covering M × N.
struct TileGrid {
  std::int64_t gm = 1, gn = 1, tm = 0, tn = 0;
  std::int64_t count() const { return gm * gn; }
};

// At least `tasks` tiles when the matrix allows, balancing each tile's
// compute (tm·tn) against the operand rows it must read (tm + tn).
inline TileGrid tile_grid(std::int64_t M, std::int64_t N, std::int64_t am, std::int64_t an, int tasks) {
  auto round_up = [](std::int64_t v, std::int64_t a) { return (v + a - 1) / a * a; };
  TileGrid best;
  double best_cost = -1;
  for (int gm = 1; gm <= tasks; ++gm) {
    const int gn = (tasks + gm - 1) / gm;
    TileGrid g;
    g.tm = std::max<std::int64_t>(am, round_up((M + gm - 1) / gm, am));
    g.tn = std::max<std::int64_t>(an, round_up((N + gn - 1) / gn, an));
    g.gm = (M + g.tm - 1) / g.tm;
    g.gn = (N + g.tn - 1) / g.tn;
    // The slowest thread's time, in units of one multiply-add row pair: its
    // tiles' area plus ~5 per operand row read (L2/L3 traffic vs FMAs).
    const std::int64_t per_thread = (g.count() + tasks - 1) / tasks;
    const double cost = static_cast<double>(per_thread) *
                        (static_cast<double>(g.tm * g.tn) + 5.0 * static_cast<double>(g.tm + g.tn));
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = g;
    }
  }
  return best;
}

// Runs f(i0, i1, j0, j1) over the tiles of an M × N output on up to `threads` threads.
template <class F>
void parallel_tiles(std::int64_t M, std::int64_t N, std::int64_t am, std::int64_t an, int threads, F&& f) {
  if (threads <= 1) {
    f(std::int64_t{0}, M, std::int64_t{0}, N);
    return;
  }
  const TileGrid g = tile_grid(M, N, am, an, threads);
  parallel_for(g.count(), threads, [&](std::int64_t t) {
    const std::int64_t i0 = (t / g.gn) * g.tm, j0 = (t % g.gn) * g.tn;
    f(i0, std::min(M, i0 + g.tm), j0, std::min(N, j0 + g.tn));
  });
}

// Elementwise work in chunks of 4096 elements (16 KiB of floats, whole cache
// lines): f(lo, len) for every chunk [lo, lo + len) of [0, n), on threads for
// the `bytes_per_element` · n bytes the loop moves.
constexpr std::int64_t kEltwiseChunk = 4096;
template <class F>
void parallel_chunks(std::int64_t n, double bytes_per_element, F&& f) {
  const std::int64_t chunks = (n + kEltwiseChunk - 1) / kEltwiseChunk;
  parallel_for(chunks, threads_for(bytes_per_element * double(n), kBytesPerThread, chunks), [&](std::int64_t c) {
    const std::int64_t lo = c * kEltwiseChunk;
    f(lo, std::min(kEltwiseChunk, n - lo));
  });
}

// A weight gradient from per-chunk partial sums (chunks of images, each
// computed by one task): partial holds `chunks` rows of `stride` values, nw
// weights then nb biases. dw[i] (and db[k] when db) is the sum over chunks in
// chunk order, in double: the same whatever thread computed which chunk.
template <class T>
void sum_chunks(const T* partial, std::int64_t chunks, std::int64_t stride, std::int64_t nw, std::int64_t nb,
                float* dw, float* db) {
  for (std::int64_t i = 0; i < nw; ++i) {
    double acc = 0;
    for (std::int64_t ch = 0; ch < chunks; ++ch) acc += partial[ch * stride + i];
    dw[i] = static_cast<float>(acc);
  }
  if (db)
    for (std::int64_t k = 0; k < nb; ++k) {
      double acc = 0;
      for (std::int64_t ch = 0; ch < chunks; ++ch) acc += partial[ch * stride + nw + k];
      db[k] = static_cast<float>(acc);
    }
}

}  // namespace roofline::engine::fast
