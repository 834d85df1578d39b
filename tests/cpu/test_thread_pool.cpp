// The fast CPU path's own thread pool (src/engine/cpu/thread_pool.hpp): every
// task once, nested regions on the calling thread, two host threads at once,
// exceptions back to the caller, idle workers asleep, and parallel_for's tasks
// taken by the other threads when one is slow or late.
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tests/cpu/test_engine_fixtures.hpp"
#include "src/engine/cpu/parallel.hpp"
#include "src/engine/cpu/thread_pool.hpp"

using namespace roofline::engine;
using roofline::test::Threads;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

}  // namespace

TEST(FastPool, EveryThreadIdRunsOnceAndTheCallerIsZero) {
  for (int threads : {2, 5, 16}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(threads));
    const long caller = static_cast<long>(syscall(SYS_gettid));
    std::atomic<long> zero_tid{0};
    auto task = [&](int t) {
      hits[static_cast<size_t>(t)].fetch_add(1);
      if (t == 0) zero_tid = static_cast<long>(syscall(SYS_gettid));
    };
    for (int rep = 0; rep < 200; ++rep) fast::run_on_threads(threads, task);
    for (int t = 0; t < threads; ++t) EXPECT_EQ(hits[static_cast<size_t>(t)].load(), 200) << threads << " threads, id " << t;
    EXPECT_EQ(zero_tid.load(), caller) << "thread id 0 is the calling thread";
  }
}

TEST(FastPool, NestedRegionsRunOnTheCallingThread) {
  Threads eight(8);
  std::atomic<int> wrong{0}, inner_tasks{0};
  fast::parallel_for(8, 8, [&](std::int64_t) {
    const long me = static_cast<long>(syscall(SYS_gettid));
    EXPECT_TRUE(fast::in_parallel());
    fast::parallel_for(6, 6, [&](std::int64_t) {
      inner_tasks.fetch_add(1);
      if (static_cast<long>(syscall(SYS_gettid)) != me) wrong.fetch_add(1);
    });
  });
  EXPECT_FALSE(fast::in_parallel());
  EXPECT_EQ(inner_tasks.load(), 48);
  EXPECT_EQ(wrong.load(), 0) << "an inner task ran on another thread";
}

TEST(FastPool, TwoHostThreadsAtOnceBothFinishEveryTask) {
  Threads eight(8);
  std::atomic<std::int64_t> a{0}, b{0};
  auto work = [](std::atomic<std::int64_t>& sum) {
    Threads inner(8);  // omp_set_num_threads is per host thread
    for (int rep = 0; rep < 300; ++rep) fast::parallel_for(64, 8, [&](std::int64_t i) { sum.fetch_add(i + 1); });
  };
  std::thread t1(work, std::ref(a)), t2(work, std::ref(b));
  t1.join();
  t2.join();
  EXPECT_EQ(a.load(), 300 * 64 * 65 / 2);
  EXPECT_EQ(b.load(), 300 * 64 * 65 / 2);
}

TEST(FastPool, ATaskExceptionReachesTheCallerAfterEveryTaskStopped) {
  std::atomic<int> finished{0};
  auto task = [&](int t) {
    if (t == 3) throw std::runtime_error("task 3 failed");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    finished.fetch_add(1);
  };
  EXPECT_THROW(fast::run_on_threads(6, task), std::runtime_error);
  EXPECT_EQ(finished.load(), 5) << "run() returned before the other tasks ended";
  // The pool still works afterwards, and a failure on the calling thread comes back too.
  std::atomic<int> hits{0};
  auto ok = [&](int) { hits.fetch_add(1); };
  fast::run_on_threads(6, ok);
  EXPECT_EQ(hits.load(), 6);
  auto caller_fails = [&](int t) {
    if (t == 0) throw std::runtime_error("caller's task failed");
  };
  EXPECT_THROW(fast::run_on_threads(6, caller_fails), std::runtime_error);
}

TEST(FastPool, IdleWorkersSleep) {
  Threads eight(8);
  std::atomic<int> hits{0};
  fast::parallel_for(8, 8, [&](std::int64_t) { hits.fetch_add(1); });
  ASSERT_EQ(hits.load(), 8);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past the workers' spin
  const double before = cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double used = cpu_seconds() - before;
  // 7 spinning workers would use up to 1.4 CPU-seconds here (or every core of a small machine).
  EXPECT_LT(used, 0.05) << "the process used " << used << " s of CPU in 200 ms while idle: workers kept spinning";
}

// ThreadPool::rest before oneDNN's OpenMP team runs: the workers go to sleep
// instead of spinning (what that saves is a matter for a quiet 16-core host;
// on the shared 2-core development machine the CPU time is noise), and the next
// job still wakes every one of them, from any point of their spin.
TEST(FastPool, RestedWorkersWakeForTheNextJob) {
  Threads eight(8);
  std::atomic<int> every{0};
  auto task = [&](int) { every.fetch_add(1); };
  for (int i = 0; i < 100; ++i) {
    every.store(0);
    fast::run_on_threads(8, task);
    fast::ThreadPool::rest();
    if (i % 3 == 1) std::this_thread::sleep_for(std::chrono::microseconds(i % 7 * 20));
    ASSERT_EQ(every.load(), 8) << "job " << i;
  }
  every.store(0);
  fast::run_on_threads(8, task);
  EXPECT_EQ(every.load(), 8);
}

TEST(FastPool, AForkedChildRunsItsRegionsOnItsOwnThread) {
  Threads eight(8);
  std::atomic<int> hits{0};
  fast::parallel_for(8, 8, [&](std::int64_t) { hits.fetch_add(1); });  // the workers exist
  ASSERT_EQ(hits.load(), 8);
  const pid_t kid = fork();
  ASSERT_GE(kid, 0);
  if (kid == 0) {
    alarm(10);  // a hang (waiting for workers the child does not have) fails the test
    std::atomic<int> n{0};
    fast::parallel_for(64, 8, [&](std::int64_t) { n.fetch_add(1); });
    _exit(n.load() == 64 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(kid, &status, 0), kid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the forked child did not finish its region (status " << status << ")";
}

TEST(FastPool, ALateWorkerDoesNotHoldTheRegionUp) {
  Threads two(2);
  std::atomic<int> warm{0};
  fast::parallel_for(2, 2, [&](std::int64_t) { warm.fetch_add(1); });  // worker 1 exists
  ASSERT_EQ(warm.load(), 2);
  // Worker 1 sleeps 400 ms before it joins the next region, as on a vCPU the host descheduled.
  fast::ThreadPool::delay_join_for_testing(1, std::chrono::milliseconds(400));
  const long caller = static_cast<long>(syscall(SYS_gettid));
  std::vector<std::atomic<int>> runs(64);
  std::atomic<int> elsewhere{0};
  const auto t0 = std::chrono::steady_clock::now();
  fast::parallel_for(64, 2, [&](std::int64_t i) {
    runs[static_cast<size_t>(i)].fetch_add(1);
    if (static_cast<long>(syscall(SYS_gettid)) != caller) elsewhere.fetch_add(1);
  });
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "task " << i;
  EXPECT_EQ(elsewhere.load(), 0) << "the late worker ran tasks of a region that had ended without it";
  EXPECT_LT(ms, 200.0) << "the region waited for the late worker";
  // The late worker skips the region it missed and takes part in the next ones
  // (Join::Every waits for it).
  std::vector<std::atomic<int>> hits(2);
  auto task = [&](int t) { hits[static_cast<size_t>(t)].fetch_add(1); };
  fast::run_on_threads(2, task);
  EXPECT_EQ(hits[0].load(), 1);
  EXPECT_EQ(hits[1].load(), 1);
}

TEST(FastPool, ASlowThreadsTasksAreTakenByTheOthers) {
  Threads two(2);
  const long caller = static_cast<long>(syscall(SYS_gettid));
  std::vector<std::atomic<int>> runs(40);
  std::atomic<int> on_caller{0};
  const auto t0 = std::chrono::steady_clock::now();
  // A task takes 20 ms on the worker and nothing on the caller: split 20 and 20
  // without taking, the region would last 400 ms.
  fast::parallel_for(40, 2, [&](std::int64_t i) {
    runs[static_cast<size_t>(i)].fetch_add(1);
    if (static_cast<long>(syscall(SYS_gettid)) == caller)
      on_caller.fetch_add(1);
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  });
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "task " << i;
  EXPECT_GE(on_caller.load(), 30) << "the caller took too few of the slow worker's tasks";
  EXPECT_LT(ms, 250.0);
}

// A worker that woke for one job and joins the next, in which it has no task
// (a smaller team), is counted as joined but not as one of the team: a region
// that waits for every thread (Join::Every) still waits for its real members.
TEST(FastPool, ALateJoinerWithoutATaskDoesNotEndARegionEarly) {
  Threads three(3);
  std::atomic<int> warm{0};
  fast::parallel_for(3, 3, [&](std::int64_t) { warm.fetch_add(1); });  // workers 1 and 2 exist
  ASSERT_EQ(warm.load(), 3);
  fast::ThreadPool::delay_join_for_testing(2, std::chrono::milliseconds(100));
  std::atomic<int> tasks{0};
  // ~30 ms, in which worker 2 wakes for this region and sleeps; it ends without worker 2.
  fast::parallel_for(30, 3, [&](std::int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    tasks.fetch_add(1);
  });
  ASSERT_EQ(tasks.load(), 30);
  std::atomic<bool> slow_done{false};
  auto job = [&](int t) {  // worker 2 wakes from its delay while worker 1 still works
    if (t == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      slow_done.store(true);
    }
  };
  fast::run_on_threads(2, job);
  EXPECT_TRUE(slow_done.load()) << "run() returned before thread 1's task ended";
}

// Under OpenMpJobs a job runs on libgomp's team: thread id t is OpenMP thread t
// (0 the caller), every id runs once, parallel_for inside it stays on its
// thread, a task's exception comes back, and leaving the scope gives the pool
// its jobs again.
TEST(FastPool, OpenMpJobsRunOnLibgompsTeam) {
  Threads four(4);
  const long caller = static_cast<long>(syscall(SYS_gettid));
  {
    const fast::OpenMpJobs on_team;
    std::vector<std::atomic<int>> hits(3);
    std::atomic<int> not_omp{0}, wrong_id{0}, nested_moved{0};
    std::atomic<long> zero_tid{0};
    auto task = [&](int t) {
      hits[static_cast<size_t>(t)].fetch_add(1);
      if (!omp_in_parallel()) not_omp.fetch_add(1);
      if (omp_get_thread_num() != t) wrong_id.fetch_add(1);
      if (t == 0) zero_tid = static_cast<long>(syscall(SYS_gettid));
      const long me = static_cast<long>(syscall(SYS_gettid));
      fast::parallel_for(4, 4, [&](std::int64_t) {
        if (static_cast<long>(syscall(SYS_gettid)) != me) nested_moved.fetch_add(1);
      });
    };
    for (int rep = 0; rep < 50; ++rep) fast::run_on_threads(3, task);  // a team of 4, 3 with a task
    for (auto& h : hits) EXPECT_EQ(h.load(), 50);
    EXPECT_EQ(not_omp.load(), 0) << "a task ran outside an OpenMP region";
    EXPECT_EQ(wrong_id.load(), 0) << "thread id t is not OpenMP thread t";
    EXPECT_EQ(nested_moved.load(), 0);
    EXPECT_EQ(zero_tid.load(), caller);
    auto fails = [&](int t) {
      if (t == 2) throw std::runtime_error("task 2 failed");
    };
    EXPECT_THROW(fast::run_on_threads(4, fails), std::runtime_error);
    std::atomic<std::int64_t> sum{0};
    fast::parallel_for(1000, 4, [&](std::int64_t i) { sum.fetch_add(i); });
    EXPECT_EQ(sum.load(), 999 * 1000 / 2);
  }
  std::atomic<int> in_omp{0};
  auto task = [&](int) { in_omp.fetch_add(omp_in_parallel() ? 1 : 0); };
  fast::run_on_threads(3, task);
  EXPECT_EQ(in_omp.load(), 0) << "after the scope the pool runs the jobs";
}
