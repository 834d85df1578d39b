// The fast CPU path's own worker threads for its parallel regions.
//
// libgomp starts a region's threads one after the other from the opening thread
// (per-thread setup written into each worker's state): on the GPU host's 16-vCPU
// VM the sixteenth thread of a region started ~5 µs after the first
// (2026-11-25, docs/perf-notes.md), for regions whose work is 30-70 µs, several a
// training step. Here a region is one job published to every worker at once (one
// counter they spin on), and it ends when a countdown reaches zero. Workers spin
// for a while after a job (the next region of a step is microseconds away), then
// sleep on a condition variable, so an idle process does not burn its cores.
//
// Worker w is always thread id w + 1 (the caller is 0): a task given to thread t
// runs on the same OS thread in every region, which the owner splits rely on
// (parallel.hpp's owned_range).
#pragma once
#include <cstdint>

namespace roofline::engine::fast {

class ThreadPool {
 public:
  using Fn = void (*)(void* ctx, int thread);
  // Runs fn(ctx, t) for every t in [0, threads): t = 0 on the calling thread,
  // the others on workers; returns when all are done, then rethrows the first
  // exception a task threw. Called inside a job, while another thread of the
  // process is running one, or in a child forked after the workers started (it
  // has none of them), it runs them all on the calling thread, in order.
  static void run(int threads, Fn fn, void* ctx);
  // Whether the calling thread is running a job's task.
  static bool in_job();
};

// run() for a callable: f(t) for t in [0, threads).
template <class F>
void run_on_threads(int threads, F& f) {
  ThreadPool::run(threads, [](void* ctx, int t) { (*static_cast<F*>(ctx))(t); }, &f);
}

}  // namespace roofline::engine::fast
