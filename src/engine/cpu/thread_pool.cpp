#include "src/engine/cpu/thread_pool.hpp"

#include <immintrin.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace roofline::engine::fast {

namespace {

// How long a worker spins for the next job before it sleeps: past the gaps
// between the regions of a training step or an inference (a few µs to ~100 µs).
constexpr std::chrono::microseconds kSpin{200};
constexpr int kMaxThreads = 0xffff;

thread_local bool t_in_job = false;
std::atomic<bool> t_forked{false};  // this process is a fork of the one that started the workers

class Pool {
 public:
  // Never destroyed: the workers live as long as the process (they sleep when idle).
  static Pool& get() {
    static Pool* p = [] {
      // A child forked from this process has none of the workers: its jobs run
      // on the calling thread (the CLI's tests and the peer launch fork).
      pthread_atfork(nullptr, nullptr, [] { t_forked.store(true, std::memory_order_relaxed); });
      return new Pool;
    }();
    return *p;
  }

  void run(int threads, ThreadPool::Fn fn, void* ctx) {
    if (threads <= 1 || t_in_job || t_forked.load(std::memory_order_relaxed)) {
      for (int t = 0; t < threads; ++t) fn(ctx, t);
      return;
    }
    std::unique_lock<std::mutex> busy(run_mu_, std::try_to_lock);
    if (!busy.owns_lock() || threads > kMaxThreads) {  // another thread's job is running
      for (int t = 0; t < threads; ++t) fn(ctx, t);
      return;
    }
    grow(threads - 1);
    fn_ = fn;
    ctx_ = ctx;
    remaining_.store(threads - 1, std::memory_order_relaxed);
    // The job's thread count travels in the generation word, so a worker that
    // takes no part reads nothing else of it (fn_ and ctx_ may be rewritten for
    // the next job while it is still waking up).
    const std::uint64_t next = ((generation_.load(std::memory_order_relaxed) >> 16) + 1) << 16 |
                               static_cast<std::uint64_t>(threads);
    generation_.store(next, std::memory_order_seq_cst);  // publishes the job
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      { std::lock_guard<std::mutex> lk(sleep_mu_); }
      wake_.notify_all();
    }
    t_in_job = true;
    try {
      fn(ctx, 0);
    } catch (...) {
      keep_first_error();
    }
    t_in_job = false;
    while (remaining_.load(std::memory_order_acquire) != 0) _mm_pause();
    // A task's exception reaches the caller once every task has stopped using
    // the job's data (OpenMP would have terminated the process).
    if (failed_.load(std::memory_order_acquire)) {
      std::exception_ptr e = std::move(error_);
      error_ = nullptr;
      failed_.store(false, std::memory_order_relaxed);
      std::rethrow_exception(e);
    }
  }

 private:
  void grow(int workers) {
    while (static_cast<int>(workers_.size()) < workers) {
      const int id = static_cast<int>(workers_.size()) + 1;
      workers_.emplace_back([this, id, seen = generation_.load()] { loop(id, seen); });
      workers_.back().detach();
    }
  }

  void loop(int id, std::uint64_t seen) {
    t_in_job = true;  // a worker's nested regions run on it alone
    for (;;) {
      seen = wait(seen);
      if (id < static_cast<int>(seen & 0xffff)) {
        try {
          fn_(ctx_, id);
        } catch (...) {
          keep_first_error();
        }
        remaining_.fetch_sub(1, std::memory_order_acq_rel);
      }
    }
  }

  // The next generation after `seen`: spin, then sleep.
  std::uint64_t wait(std::uint64_t seen) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0;; ++i) {
      const std::uint64_t g = generation_.load(std::memory_order_acquire);
      if (g != seen) return g;
      _mm_pause();
      if ((i & 255) == 255 && std::chrono::steady_clock::now() - start > kSpin) break;
    }
    std::unique_lock<std::mutex> lk(sleep_mu_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    wake_.wait(lk, [&] { return generation_.load(std::memory_order_seq_cst) != seen; });
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    return generation_.load(std::memory_order_acquire);
  }

  void keep_first_error() {
    std::lock_guard<std::mutex> lk(error_mu_);
    if (!error_) error_ = std::current_exception();
    failed_.store(true, std::memory_order_release);
  }

  std::mutex run_mu_;  // one job at a time
  std::mutex error_mu_;
  std::exception_ptr error_;  // the job's first exception
  std::atomic<bool> failed_{false};
  std::vector<std::thread> workers_;
  // The job: written by run() before generation_ moves, read by workers after.
  ThreadPool::Fn fn_ = nullptr;
  void* ctx_ = nullptr;
  alignas(64) std::atomic<std::uint64_t> generation_{0};
  alignas(64) std::atomic<int> remaining_{0};
  alignas(64) std::atomic<int> sleepers_{0};
  std::mutex sleep_mu_;
  std::condition_variable wake_;
};

}  // namespace

void ThreadPool::run(int threads, Fn fn, void* ctx) { Pool::get().run(threads, fn, ctx); }

bool ThreadPool::in_job() { return t_in_job; }

}  // namespace roofline::engine::fast
