// SPDX-License-Identifier: Apache-2.0
// The staging-buffer pool (host memory here; pinned memory takes the same paths plus events,
// exercised by the gpu_* suites): leases, recycling, waiting, no growth, thread safety.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "tests/support/gpu.hpp"
#include "trialstat/config.hpp"
#include "trialstat/memory/pinned_pool.hpp"
#include "trialstat/stats/backend.hpp"

#if TRIALSTAT_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace trialstat::memory {
namespace {

std::unique_ptr<pinned_pool> make_host_pool(std::size_t buffers, std::size_t bytes) {
  auto pool = pinned_pool::create({buffers, bytes, pool_memory::host});
  EXPECT_TRUE(pool) << pool.error_status().to_string();
  return pool ? std::move(*pool) : nullptr;
}

TEST(pinned_pool, RejectsEmptyPools) {
  EXPECT_EQ(pinned_pool::create({0, 4096, pool_memory::host}).error_status().code(),
            error_code::invalid_argument);
  EXPECT_EQ(pinned_pool::create({4, 0, pool_memory::host}).error_status().code(),
            error_code::invalid_argument);
}

TEST(pinned_pool, PinnedNeedsADevice) {
  auto pool = pinned_pool::create({2, 4096, pool_memory::pinned});
  if (stats::cuda_device_available()) {
    ASSERT_TRUE(pool) << pool.error_status().to_string();
    EXPECT_TRUE((*pool)->is_pinned());
  } else {
    EXPECT_EQ(pool.error_status().code(), error_code::invalid_argument);
  }
  auto automatic = pinned_pool::create({2, 4096, pool_memory::automatic});
  ASSERT_TRUE(automatic) << automatic.error_status().to_string();
  EXPECT_EQ((*automatic)->is_pinned(), stats::cuda_device_available());
}

TEST(pinned_pool, LeasesAreDistinctAlignedAndInside) {
  auto pool = make_host_pool(4, 10000);
  ASSERT_TRUE(pool);
  EXPECT_FALSE(pool->is_pinned());
  EXPECT_EQ(pool->buffer_bytes(), 12288u);  // rounded up to 4 KiB
  EXPECT_EQ(pool->total_bytes(), 4u * 12288u);
  std::vector<pool_lease> leases;
  std::set<int> indices;
  for (int i = 0; i < 4; ++i) {
    pool_lease lease = pool->try_acquire();
    ASSERT_TRUE(lease);
    EXPECT_EQ(lease.size_bytes(), 12288u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(lease.data()) % 4096, 0u);
    EXPECT_TRUE(pool->owns(lease.data(), lease.size_bytes()));
    std::memset(lease.data(), i + 1, lease.size_bytes());  // writable in full (ASan checks)
    indices.insert(lease.index());
    leases.push_back(std::move(lease));
  }
  EXPECT_EQ(indices.size(), 4u);
  EXPECT_EQ(pool->free_count(), 0u);
  // Contents are private to each lease.
  for (std::size_t i = 0; i < leases.size(); ++i) {
    EXPECT_EQ(static_cast<int>(leases[i].data()[leases[i].size_bytes() - 1]), static_cast<int>(i + 1));
  }
  // Exhausted: try_acquire answers "none" instead of allocating.
  pool_lease none = pool->try_acquire();
  EXPECT_FALSE(none);
  EXPECT_EQ(pool->counters().try_failed, 1);
  EXPECT_FALSE(pool->owns(leases[0].data() + pool->total_bytes() + 1, 1));
  leases.clear();
  EXPECT_EQ(pool->free_count(), 4u);
}

TEST(pinned_pool, RecyclesWithoutGrowing) {
  auto pool = make_host_pool(3, 4096);
  ASSERT_TRUE(pool);
  std::set<const std::byte*> seen;
  for (int round = 0; round < 5000; ++round) {
    auto a = pool->acquire();
    ASSERT_TRUE(a);
    auto b = pool->acquire();
    ASSERT_TRUE(b);
    seen.insert(a->data());
    seen.insert(b->data());
    if (round % 2 == 0) {
      EXPECT_TRUE(a->release_after(nullptr).ok());  // host pool: back at once
      EXPECT_FALSE(*a);
    }
  }
  EXPECT_LE(seen.size(), 3u);  // only the pool's own buffers ever
  EXPECT_EQ(pool->total_bytes(), 3u * 4096u);
  EXPECT_EQ(pool->free_count(), 3u);
  EXPECT_EQ(pool->pending_count(), 0u);
  EXPECT_EQ(pool->counters().acquired, 10000);
}

TEST(pinned_pool, MovedLeasesGiveBackOnce) {
  auto pool = make_host_pool(2, 4096);
  ASSERT_TRUE(pool);
  pool_lease a = pool->try_acquire();
  const int index = a.index();
  pool_lease b = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from is documented empty
  EXPECT_EQ(b.index(), index);
  pool_lease c = pool->try_acquire();
  EXPECT_EQ(pool->free_count(), 0u);
  c = std::move(b);  // c's old buffer goes back, b's moves in
  EXPECT_EQ(pool->free_count(), 1u);
  EXPECT_EQ(c.index(), index);
  c.release();
  c.release();  // idempotent
  EXPECT_EQ(pool->free_count(), 2u);
}

TEST(pinned_pool, AcquireWaitsForAReturn) {
  auto pool = make_host_pool(1, 4096);
  ASSERT_TRUE(pool);
  pool_lease held = pool->try_acquire();
  ASSERT_TRUE(held);
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    auto lease = pool->acquire();
    ASSERT_TRUE(lease);
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(got.load());
  held.release();
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_GE(pool->counters().waited, 1);
  EXPECT_EQ(pool->free_count(), 1u);
}

TEST(pinned_pool, ThreadsNeverShareABuffer) {
  auto pool = make_host_pool(3, 4096);
  ASSERT_TRUE(pool);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        auto lease = (i % 3 == 0) ? pool->acquire() : result<pool_lease>(pool->try_acquire());
        if (!lease || !*lease) continue;
        std::memset(lease->data(), t + 1, lease->size_bytes());
        std::this_thread::yield();
        for (std::size_t k = 0; k < lease->size_bytes(); k += 512) {
          if (static_cast<int>(lease->data()[k]) != t + 1) failures++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(pool->free_count(), 3u);
}

#if TRIALSTAT_HAS_CUDA
// ---- pinned pools (need a device; skipped otherwise) --------------------------------------------

/// A device buffer and a long host→device copy out of `lease` on `stream` (256 MiB: several
/// milliseconds, so event queries right after it see cudaErrorNotReady).
struct long_copy {
  void* device = nullptr;
  ~long_copy() {
    if (device != nullptr) static_cast<void>(cudaFree(device));
  }
  bool start(const pool_lease& lease, cudaStream_t stream) {
    if (cudaMalloc(&device, lease.size_bytes()) != cudaSuccess) return false;
    return cudaMemcpyAsync(device, lease.data(), lease.size_bytes(), cudaMemcpyHostToDevice,
                           stream) == cudaSuccess;
  }
};

constexpr std::size_t long_copy_bytes = std::size_t{256} << 20;

TEST(gpu_pinned_pool, NullStreamIsTheLegacyDefaultStream) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  auto pool = pinned_pool::create({1, long_copy_bytes, pool_memory::pinned});
  ASSERT_TRUE(pool) << pool.error_status().to_string();
  auto lease = (*pool)->acquire();
  ASSERT_TRUE(lease);
  long_copy copy;
  ASSERT_TRUE(copy.start(*lease, nullptr));  // the null stream: the legacy default stream
  ASSERT_TRUE(lease->release_after(nullptr).ok());
  // The copy may still read the buffer: it waits on an event, it is not free yet.
  EXPECT_EQ((*pool)->pending_count(), 1u);
  EXPECT_EQ((*pool)->free_count(), 0u);
  auto again = (*pool)->acquire();  // waits for the event, then hands the buffer out
  ASSERT_TRUE(again) << again.error_status().to_string();
  EXPECT_EQ(cudaStreamQuery(nullptr), cudaSuccess);
}

TEST(gpu_pinned_pool, NotReadyEventQueriesLeaveNoErrorBehind) {
  TRIALSTAT_REQUIRE_CUDA_DEVICE();
  auto pool = pinned_pool::create({2, long_copy_bytes, pool_memory::pinned});
  ASSERT_TRUE(pool) << pool.error_status().to_string();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  {
    auto a = (*pool)->acquire();
    auto b = (*pool)->acquire();
    ASSERT_TRUE(a && b);
    long_copy copy_a, copy_b;
    ASSERT_TRUE(copy_a.start(*a, stream));
    ASSERT_TRUE(copy_b.start(*b, stream));
    ASSERT_TRUE(a->release_after(stream).ok());
    ASSERT_TRUE(b->release_after(stream).ok());
    // Both pending; try_acquire queries their events (most likely not ready yet).
    for (int i = 0; i < 100; ++i) {
      pool_lease none = (*pool)->try_acquire();
      if (none) break;  // the copies finished: nothing left to check
    }
    // Whatever the queries returned, no error is left for the next launch check to find.
    EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}
#endif

}  // namespace
}  // namespace trialstat::memory
