// SPDX-License-Identifier: Apache-2.0
/// @file cpu_parallel.hpp
/// @brief How the CPU twins split a segmented batch: every segment is cut into fixed-size chunks
/// of `cpu_chunk_elements` (independent of the thread count), the chunks of all segments form
/// one work list run with OpenMP, and each segment's chunk results are merged in chunk order.
/// Results therefore do not depend on OMP_NUM_THREADS (deterministic), and one list covers both
/// "many small tensors" and "one huge tensor".
///
/// Threads: a process-wide pool of workers that sleep (futex, via std::condition_variable)
/// between jobs, not an OpenMP team. libgomp's idle workers spin for GOMP_SPINCOUNT (300,000
/// pauses, several milliseconds) after every parallel region unless the user sets
/// OMP_WAIT_POLICY=passive before the program starts; in the statistics pipeline that spinning
/// took the core the reader thread needed (on 2 cores, `trialstat stats` spent 0.68 s of 1.3 s
/// CPU in libgomp's spin loop on a 1.25 GB trial). The thread count still follows OpenMP's
/// settings (OMP_NUM_THREADS, omp_set_num_threads) when the build has OpenMP
/// (TRIALSTAT_ENABLE_OPENMP); without it the twins run serially, as before.
///
/// Nested calls run serially: a kernel called from inside a cpu_parallel_for body (the CPU
/// executor's per-tensor tasks, host/stats/cpu_tensor_statistics.cpp) sees a thread budget of 1, as
/// inside an OpenMP region, and runs on the thread that called it.
///
/// Small batches run on the calling thread: waking workers and waiting for them costs
/// microseconds when the machine is idle and milliseconds when it is oversubscribed (the reader
/// thread, other processes), far more than the work itself below `cpu_parallel_min_elements`.
/// Serial and parallel runs merge in the same order, so the threshold never changes a result.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "trialstat/stats/segment.hpp"

namespace trialstat::kernels {

/// @brief Elements per block: the unit of the two-pass moments and of the lanes' merges.
inline constexpr int64_t cpu_block_elements = 1024;
/// @brief Elements per chunk (the unit of parallel work): 64 blocks.
inline constexpr int64_t cpu_chunk_elements = 64 * cpu_block_elements;
/// @brief Batches with fewer elements than this run serially (no OpenMP region).
inline constexpr int64_t cpu_parallel_min_elements = 4 * cpu_chunk_elements;

/// @brief One chunk: elements [begin, begin + count) of segment `segment`.
struct cpu_work_item {
  int64_t segment = 0;
  int64_t begin = 0;
  int64_t count = 0;
};

/// @brief The chunk list of a batch: items of segment s are items[first[s] .. first[s+1]).
/// Empty segments get no item. Throws std::bad_alloc only (callers catch it).
struct cpu_work_plan {
  std::vector<cpu_work_item> items;
  std::vector<int64_t> first;  ///< [num_segments + 1]
};

/// @brief Fill `plan` (its capacity is reused) with the chunks of `segments`.
inline void plan_cpu_chunks(std::span<const stats::segment> segments, cpu_work_plan& plan,
                            int64_t chunk_elements = cpu_chunk_elements) {
  plan.items.clear();
  plan.first.resize(segments.size() + 1);
  std::size_t total = 0;
  for (const auto& s : segments) {
    total += static_cast<std::size_t>((s.num_elements + chunk_elements - 1) / chunk_elements);
  }
  plan.items.reserve(total);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    plan.first[i] = static_cast<int64_t>(plan.items.size());
    for (int64_t begin = 0; begin < segments[i].num_elements; begin += chunk_elements) {
      const int64_t left = segments[i].num_elements - begin;
      plan.items.push_back({static_cast<int64_t>(i), begin,
                            left < chunk_elements ? left : chunk_elements});
    }
  }
  plan.first[segments.size()] = static_cast<int64_t>(plan.items.size());
}

[[nodiscard]] inline cpu_work_plan plan_cpu_chunks(std::span<const stats::segment> segments,
                                                   int64_t chunk_elements = cpu_chunk_elements) {
  cpu_work_plan plan;
  plan_cpu_chunks(segments, plan, chunk_elements);
  return plan;
}

/// @brief Total elements of a segment table.
[[nodiscard]] inline int64_t total_elements(std::span<const stats::segment> segments) {
  int64_t total = 0;
  for (const auto& s : segments) total += s.num_elements;
  return total;
}

namespace parallel_detail {
/// True on a thread while it runs a cpu_parallel_for body (workers: always).
inline thread_local bool inside_parallel_body = false;

/// Marks the calling thread as inside a body for its lifetime (restores the previous mark).
class body_scope {
 public:
  body_scope() noexcept : previous_(inside_parallel_body) { inside_parallel_body = true; }
  ~body_scope() { inside_parallel_body = previous_; }
  body_scope(const body_scope&) = delete;
  body_scope& operator=(const body_scope&) = delete;

 private:
  bool previous_;
};
}  // namespace parallel_detail

/// @brief Threads the twins may use now: omp_get_max_threads() in OpenMP builds (so
/// OMP_NUM_THREADS and omp_set_num_threads apply), 1 otherwise, inside an OpenMP region or
/// inside a cpu_parallel_for body (nested calls run serially on their thread).
[[nodiscard]] inline int cpu_thread_budget() {
  if (parallel_detail::inside_parallel_body) return 1;
#if defined(_OPENMP)
  if (omp_in_parallel() != 0) return 1;
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/// @brief Whether a batch of `work_elements` elements in `num_items` chunks is worth waking
/// workers for.
[[nodiscard]] inline bool cpu_should_parallelise(int64_t num_items, int64_t work_elements) {
  return num_items > 1 && work_elements >= cpu_parallel_min_elements && cpu_thread_budget() > 1;
}

/// @brief The process-wide worker pool behind cpu_parallel_for (internal). Workers are started
/// on first use, sleep while idle, and live until exit. One job at a time: a call made while
/// another runs (another thread, or nested inside a body) runs serially on its caller.
class cpu_worker_pool {
 public:
  static cpu_worker_pool& instance() {
    // Leaked on purpose: workers must not be joined during static destruction while another
    // static's destructor might still run a job.
    static cpu_worker_pool* pool = new cpu_worker_pool();
    return *pool;
  }

  /// body(i) for i in [0, n) on the caller and up to threads − 1 workers (dynamic schedule:
  /// each thread takes the next index). Returns after every body call has returned.
  template <class Body>
  void run(int64_t n, int threads, Body& body) {
    const parallel_detail::body_scope in_body;
    std::unique_lock<std::mutex> job_lock(run_mutex_, std::try_to_lock);
    if (!job_lock.owns_lock() || threads <= 1 || n <= 1) {
      for (int64_t i = 0; i < n; ++i) body(i);
      return;
    }
    job j;
    j.n = n;
    j.context = &body;
    j.call = [](void* context, int64_t i) { (*static_cast<Body*>(context))(i); };
    const int helpers = static_cast<int>(std::min<int64_t>(threads, n)) - 1;
    if (!start_workers(helpers)) {
      for (int64_t i = 0; i < n; ++i) body(i);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &j;
      wanted_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    j.work();
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = nullptr;  // workers that have not joined yet stay out
    done_.wait(lock, [&] { return active_ == 0; });
  }

 private:
  struct job {
    std::atomic<int64_t> next{0};
    int64_t n = 0;
    void* context = nullptr;
    void (*call)(void*, int64_t) = nullptr;
    void work() {
      for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < n;
           i = next.fetch_add(1, std::memory_order_relaxed)) {
        call(context, i);
      }
    }
  };

  cpu_worker_pool() = default;

  /// Make sure `count` workers exist (false if a thread cannot be started).
  bool start_workers(int count) {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      while (static_cast<int>(workers_.size()) < count) {
        workers_.emplace_back([this] { worker_loop(); });
        workers_.back().detach();
      }
    } catch (...) {  // std::system_error: run with the workers there are
      return !workers_.empty();
    }
    return true;
  }

  void worker_loop() {
    parallel_detail::inside_parallel_body = true;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen && job_ != nullptr && wanted_ > 0; });
      seen = generation_;
      --wanted_;
      ++active_;
      job* j = job_;
      lock.unlock();
      j->work();
      lock.lock();
      if (--active_ == 0) done_.notify_all();
    }
  }

  std::mutex run_mutex_;  ///< held by the caller of the running job
  std::mutex mutex_;      ///< guards everything below
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  job* job_ = nullptr;
  uint64_t generation_ = 0;
  int wanted_ = 0;  ///< workers still to join the current job
  int active_ = 0;  ///< workers inside job_->work()
};

/// @brief Run body(i) for i in [0, n) — on the worker pool when `work_elements` (the elements
/// the n items touch in all) reaches cpu_parallel_min_elements and the thread budget allows,
/// else on the calling thread. Dynamic schedule: chunks differ in cost when segments have
/// different dtypes. At most min(n, cpu_thread_budget()) threads. body must not throw.
template <class Body>
void cpu_parallel_for(int64_t n, int64_t work_elements, Body&& body) {
  if (!cpu_should_parallelise(n, work_elements)) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  cpu_worker_pool::instance().run(n, cpu_thread_budget(), body);
}

/// @brief Run body(i) for i in [0, n) in parallel whenever n > 1 (items whose size the caller
/// does not state; prefer the overload with `work_elements`).
template <class Body>
void cpu_parallel_for(int64_t n, Body&& body) {
  cpu_parallel_for(n, cpu_parallel_min_elements, static_cast<Body&&>(body));
}

}  // namespace trialstat::kernels
