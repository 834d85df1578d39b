#include "src/engine/cpu/thread_pool.hpp"

#include <immintrin.h>
#include <omp.h>
#include <pthread.h>

#include <algorithm>
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
constexpr int kMaxThreads = 0x7fff;  // the job word counts joined workers in 15 bits
constexpr int kGenShift = 32, kThreadsShift = 16;
constexpr std::uint64_t kClosed = std::uint64_t{1} << 15, kJoinedMask = kClosed - 1;
constexpr std::uint64_t gen_of(std::uint64_t job) { return job >> kGenShift; }
constexpr int threads_of(std::uint64_t job) { return static_cast<int>((job >> kThreadsShift) & 0xffff); }

thread_local bool t_in_job = false;
thread_local bool t_openmp_jobs = false;  // OpenMpJobs
// Set in a child forked from this process: libgomp keeps none of its team's
// threads there but still waits for them, so jobs run on the calling thread.
std::atomic<bool> g_forked_omp{false};
[[maybe_unused]] const int g_omp_atfork =
    pthread_atfork(nullptr, nullptr, [] { g_forked_omp.store(true, std::memory_order_relaxed); });

// A job on libgomp's team (OpenMpJobs): the first exception a task throws is
// kept and rethrown here, after every thread is done (none may leave a region).
void run_on_openmp(int threads, ThreadPool::Fn fn, void* ctx) {
  std::exception_ptr error;
  std::mutex error_mu;
  const int team = std::max(threads, omp_get_max_threads());
#pragma omp parallel num_threads(team)
  {
    const int t = omp_get_thread_num();
    if (t < threads) {
      t_in_job = true;
      try {
        fn(ctx, t);
      } catch (...) {
        const std::lock_guard<std::mutex> lk(error_mu);
        if (!error) error = std::current_exception();
      }
      t_in_job = false;
    }
  }
  if (error) std::rethrow_exception(error);
}
struct JoinDelay {  // ThreadPool::delay_join_for_testing
  std::atomic<int> worker{0};
  std::chrono::microseconds delay{0};
} g_join_delay;
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

  void run(int threads, ThreadPool::Fn fn, void* ctx, ThreadPool::Join join) {
    if (threads <= 1 || t_in_job || t_forked.load(std::memory_order_relaxed)) {
      for (int t = 0; t < threads; ++t) fn(ctx, t);
      return;
    }
    if (t_openmp_jobs) {
      if (omp_in_parallel() || g_forked_omp.load(std::memory_order_relaxed)) {
        for (int t = 0; t < threads; ++t) fn(ctx, t);
      } else {
        run_on_openmp(threads, fn, ctx);
      }
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
    done_.store(0, std::memory_order_relaxed);
    ran_.store(0, std::memory_order_relaxed);
    // The job's thread count travels in the job word, so a worker that takes no
    // part reads nothing else of it (fn_ and ctx_ may be rewritten for the next
    // job while it is still waking up).
    const std::uint64_t next = (gen_of(job_.load(std::memory_order_relaxed)) + 1) << kGenShift |
                               static_cast<std::uint64_t>(threads) << kThreadsShift;
    entry_.store(next, std::memory_order_seq_cst);  // open for joining, then
    job_.store(next, std::memory_order_seq_cst);    // published to the spinning workers
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
    // Join::Every: first every worker of the job runs its task (they join
    // while the job is open). Then the job closes: a worker that has not joined
    // yet skips it (asleep, or on a vCPU the host has descheduled; with
    // Join::WhileOpen it is not waited for), and the caller waits for those
    // that joined, whether they had a task or not.
    if (join == ThreadPool::Join::Every)
      while (ran_.load(std::memory_order_acquire) != threads - 1) _mm_pause();
    const int joined = static_cast<int>(entry_.fetch_or(kClosed, std::memory_order_acq_rel) & kJoinedMask);
    while (done_.load(std::memory_order_acquire) != joined) _mm_pause();
    // A task's exception reaches the caller once every task has stopped using
    // the job's data (OpenMP would have terminated the process).
    if (failed_.load(std::memory_order_acquire)) {
      std::exception_ptr e = std::move(error_);
      error_ = nullptr;
      failed_.store(false, std::memory_order_relaxed);
      std::rethrow_exception(e);
    }
  }

  // Workers waiting past the current generation sleep at once (ThreadPool::rest).
  void rest() { rest_gen_.store(gen_of(job_.load(std::memory_order_acquire)), std::memory_order_release); }

 private:
  void grow(int workers) {
    while (static_cast<int>(workers_.size()) < workers) {
      const int id = static_cast<int>(workers_.size()) + 1;
      workers_.emplace_back([this, id, seen = gen_of(job_.load())] { loop(id, seen); });
      workers_.back().detach();
    }
  }

  void loop(int id, std::uint64_t seen) {
    t_in_job = true;  // a worker's nested regions run on it alone
    for (;;) {
      std::uint64_t w = wait(seen);
      seen = gen_of(w);
      if (g_join_delay.worker.load(std::memory_order_acquire) == id) {
        g_join_delay.worker.store(0, std::memory_order_relaxed);
        std::this_thread::sleep_for(g_join_delay.delay);
      }
      if (id >= threads_of(w)) continue;  // no part in the job it woke for
      // Joining is one fetch_add on the entry word (no compare-and-swap retries
      // while 15 workers join at once; not on the word the others spin on). It
      // counts for whatever job the entry holds by then, unless that job is
      // closed: possibly a later one than the job it woke for.
      w = entry_.fetch_add(1, std::memory_order_acq_rel);
      seen = gen_of(w);
      if (w & kClosed) continue;  // too late: the caller counted the joined without it
      if (id < threads_of(w)) {
        try {
          fn_(ctx_, id);
        } catch (...) {
          keep_first_error();
        }
        ran_.fetch_add(1, std::memory_order_acq_rel);
      }
      done_.fetch_add(1, std::memory_order_acq_rel);
    }
  }

  // The job word after generation `seen`: spin, then sleep (at once when told to rest).
  std::uint64_t wait(std::uint64_t seen) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0;; ++i) {
      const std::uint64_t w = job_.load(std::memory_order_acquire);
      if (gen_of(w) != seen) return w;
      _mm_pause();
      if ((i & 255) == 255 && (rest_gen_.load(std::memory_order_relaxed) == seen ||
                               std::chrono::steady_clock::now() - start > kSpin))
        break;
    }
    std::unique_lock<std::mutex> lk(sleep_mu_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    wake_.wait(lk, [&] { return gen_of(job_.load(std::memory_order_seq_cst)) != seen; });
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    return job_.load(std::memory_order_acquire);
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
  // The job: written by run() before the job word moves, read by workers that joined it.
  ThreadPool::Fn fn_ = nullptr;
  void* ctx_ = nullptr;
  // The job word workers spin on: generation (bits 32-63), thread count
  // (16-31); written once a job. The entry word: the same, and closed (bit 15)
  // and the workers joined (0-14): workers join it with a fetch_add, the caller
  // closes it. Apart, so the joins do not take the line from the spinners.
  alignas(64) std::atomic<std::uint64_t> job_{0};
  alignas(64) std::atomic<std::uint64_t> entry_{0};
  alignas(64) std::atomic<int> done_{0};  // joined workers that are done with the job
  alignas(64) std::atomic<int> ran_{0};   // of those, the ones whose task ran (thread id < the job's count)
  alignas(64) std::atomic<int> sleepers_{0};
  // The generation whose waiters were told to rest; read every 256 spins.
  alignas(64) std::atomic<std::uint64_t> rest_gen_{~std::uint64_t{0}};
  std::mutex sleep_mu_;
  std::condition_variable wake_;
};

}  // namespace

void ThreadPool::run(int threads, Fn fn, void* ctx, Join join) { Pool::get().run(threads, fn, ctx, join); }

bool ThreadPool::in_job() { return t_in_job; }

OpenMpJobs::OpenMpJobs(bool enable) : saved_(t_openmp_jobs) { t_openmp_jobs = saved_ || enable; }
OpenMpJobs::~OpenMpJobs() { t_openmp_jobs = saved_; }

void ThreadPool::rest() {
  if (!t_in_job) Pool::get().rest();
}

void ThreadPool::delay_join_for_testing(int worker, std::chrono::microseconds delay) {
  g_join_delay.delay = delay;
  g_join_delay.worker.store(worker, std::memory_order_release);
}

}  // namespace roofline::engine::fast
