// SPDX-License-Identifier: Apache-2.0
// The CPU twins' worker pool (kernels/common/cpu_parallel.hpp), driven directly with more
// threads than the budget would give, so that it runs the same in every build — also the TSan
// tree, which has no OpenMP (the budget there is 1) and compiles the kernels uninstrumented:
// this file's instantiation of the pool is what TSan checks (scripts/sanitize.sh tsan).
// Every index runs exactly once, jobs follow each other without losing or repeating work,
// and a job started while another runs (another thread, or nested in a body) runs serially on
// its caller rather than waiting or deadlocking.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "kernels/common/cpu_parallel.hpp"

namespace trialstat::kernels {
namespace {

/// Runs a job of n indices on `threads` threads; each index adds index + 1 to its own slot
/// (plain writes: TSan reports two threads writing one slot, or a read of the slots before
/// every write has happened-before the return).
std::vector<int64_t> run_job(int64_t n, int threads) {
  std::vector<int64_t> slots(static_cast<std::size_t>(n), 0);
  auto body = [&](int64_t i) { slots[static_cast<std::size_t>(i)] += i + 1; };
  cpu_worker_pool::instance().run(n, threads, body);
  return slots;
}

TEST(CpuWorkerPool, EveryIndexRunsExactlyOnceAcrossManyJobs) {
  for (int job = 0; job < 200; ++job) {
    const int64_t n = 1 + (job * 37) % 300;
    const int threads = 2 + job % 4;
    const auto slots = run_job(n, threads);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(slots[static_cast<std::size_t>(i)], i + 1) << "job " << job;
  }
}

TEST(CpuWorkerPool, AWorkerJoinsTheCallersJob) {
  // Index 0 waits (up to 10 s) for index 1 to start: only a second thread can start it, so the
  // job proves the workers take part (and TSan sees them write beside the caller).
  for (int job = 0; job < 20; ++job) {
    std::atomic<bool> second_started{false};
    std::thread::id ids[2];
    bool waited_in_vain = false;
    auto body = [&](int64_t i) {
      ids[i] = std::this_thread::get_id();
      if (i == 1) {
        second_started.store(true, std::memory_order_release);
        return;
      }
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!second_started.load(std::memory_order_acquire)) {
        if (std::chrono::steady_clock::now() > give_up) {
          waited_in_vain = true;
          return;
        }
        std::this_thread::yield();
      }
    };
    cpu_worker_pool::instance().run(2, 2, body);
    ASSERT_FALSE(waited_in_vain) << "job " << job << ": no worker took index 1 within 10 s";
    EXPECT_NE(ids[0], ids[1]) << "job " << job;
  }
}

TEST(CpuWorkerPool, ResultsWrittenByWorkersAreVisibleToTheCaller) {
  // Sums per index computed on the workers, read by the caller after run() returns.
  constexpr int64_t n = 4096;
  std::vector<double> partial(n, -1.0);
  auto body = [&](int64_t i) {
    double s = 0;
    for (int64_t k = 0; k <= i % 64; ++k) s += static_cast<double>(k);
    partial[static_cast<std::size_t>(i)] = s;
  };
  cpu_worker_pool::instance().run(n, 4, body);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t m = i % 64;
    ASSERT_EQ(partial[static_cast<std::size_t>(i)], static_cast<double>(m * (m + 1) / 2)) << i;
  }
}

TEST(CpuWorkerPool, ConcurrentCallersAndNestedJobsRunSeriallyInsteadOfWaiting) {
  std::atomic<int64_t> total{0};
  auto caller = [&](int id) {
    for (int job = 0; job < 50; ++job) {
      auto body = [&](int64_t i) {
        // Nested: the pool is busy with this job, so the inner job runs on this thread.
        std::vector<int64_t> inner(8, 0);
        auto inner_body = [&](int64_t k) { inner[static_cast<std::size_t>(k)] = k + i; };
        cpu_worker_pool::instance().run(8, 4, inner_body);
        int64_t sum = 0;
        for (int64_t v : inner) sum += v;
        total.fetch_add(sum + id, std::memory_order_relaxed);
      };
      cpu_worker_pool::instance().run(16, 3, body);
    }
  };
  std::thread a(caller, 0), b(caller, 1);
  a.join();
  b.join();
  // Per outer index i: sum_k (k + i) = 28 + 8i; 16 indices: 28 * 16 + 8 * 120 = 1408; plus id.
  EXPECT_EQ(total.load(), 2 * 50 * 1408 + 50 * 16 * 1);
}

TEST(CpuWorkerPool, ParallelForFallsBackToTheCallerBelowTheThreshold) {
  // Below cpu_parallel_min_elements nothing is handed to the pool: every body call is on this thread.
  const auto self = std::this_thread::get_id();
  int calls = 0;
  cpu_parallel_for(10, cpu_parallel_min_elements - 1, [&](int64_t) {
    EXPECT_EQ(std::this_thread::get_id(), self);
    ++calls;
  });
  EXPECT_EQ(calls, 10);
}

}  // namespace
}  // namespace trialstat::kernels
