// The fast CPU path's own worker threads for its parallel regions.
//
// libgomp starts a region's threads one after the other from the opening thread
// (per-thread setup written into each worker's state): on the GPU host's 16-vCPU
// VM the sixteenth thread of a region started ~5 µs after the first
// (docs/perf-notes.md), for regions whose work is 30-70 µs, several a
// training step. Here a region is one job published to every worker at once (one
// word they spin on). Workers spin for a while after a job (the next region of a
// step is microseconds away), then sleep on a condition variable, so an idle
// process does not burn its cores.
//
// A job either waits for every worker (Join::Every) or only for those that
// joined it before the calling thread finished its own part (Join::WhileOpen):
// parallel_for's tasks are claimed from shared cursors, so the calling thread
// finishes whatever the others did not start, and a worker on a vCPU the host
// has descheduled, or one still waking up, does not hold the region up (on the
// GPU host's VM one lent instance ran the engine's CPU step 3.5x slower than the
// next, PyTorch's 1.05-1.25x: docs/perf-notes.md).
//
// Worker w is always thread id w + 1 (the caller is 0): thread t runs on the
// same OS thread in every region, so the tasks parallel_for gives it first are
// the ones it touched last time (parallel.hpp's owned_range).
#pragma once
#include <chrono>
#include <cstdint>

namespace roofline::engine::fast {

class ThreadPool {
 public:
  using Fn = void (*)(void* ctx, int thread);
  enum class Join {
    Every,      // fn runs for every t in [0, threads)
    WhileOpen,  // fn(ctx, 0), and fn(ctx, t) for the workers t that join before it returns
  };
  // Runs fn(ctx, t): t = 0 on the calling thread, the others on workers;
  // returns when all that ran are done, then rethrows the first exception a
  // task threw. Called inside a job, while another thread of the process is
  // running one, or in a child forked after the workers started (it has none of
  // them), it runs every t on the calling thread, in order.
  static void run(int threads, Fn fn, void* ctx, Join join = Join::Every);
  // Whether the calling thread is running a job's task.
  static bool in_job();
  // Workers waiting for the job after the current one stop spinning and sleep
  // until it comes: before work on other threads (oneDNN's OpenMP team,
  // dnnl_conv.hpp), which would otherwise share the cores with up to 200 µs
  // of spinning. Costs the next job a wake-up (tens of µs on a 16-core host).
  static void rest();
  // Fault injection for tests: worker `worker` (≥ 1) sleeps `delay` before it
  // joins the next job it sees, as a descheduled vCPU would.
  static void delay_join_for_testing(int worker, std::chrono::microseconds delay);
};

// While one is alive on a thread, that thread's jobs run on libgomp's team,
// the threads oneDNN's primitives run on, instead of on the pool's workers:
// for code that alternates oneDNN calls with the fast path's own ops (the graph
// networks on the CPU), so that one team takes every core. With two teams, one
// of them still spinning while the other works, ResNet-18's CPU inference at
// batch 1 on the GPU host's 16 vCPUs took 14.0 ms on 16 threads and 8.4 on 8
// (IQR 2.7 and 0.95 ms, 2026-11-27). Every thread of the team enters each job
// (a team whose size changes is re-created: docs/perf-notes/cpu-threads.md);
// thread t < threads runs fn(ctx, t), the others return at once.
class OpenMpJobs {
 public:
  explicit OpenMpJobs(bool enable = true);
  ~OpenMpJobs();
  OpenMpJobs(const OpenMpJobs&) = delete;
  OpenMpJobs& operator=(const OpenMpJobs&) = delete;

 private:
  bool saved_;
};

// run() for a callable: f(t) for t in [0, threads).
template <class F>
void run_on_threads(int threads, F& f, ThreadPool::Join join = ThreadPool::Join::Every) {
  ThreadPool::run(threads, [](void* ctx, int t) { (*static_cast<F*>(ctx))(t); }, &f, join);
}

}  // namespace roofline::engine::fast
