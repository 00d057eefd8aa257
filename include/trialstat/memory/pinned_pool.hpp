// SPDX-License-Identifier: Apache-2.0
/// @file pinned_pool.hpp
/// @brief A fixed pool of equal staging buffers, allocated once (DESIGN.md "Pipeline and
/// memory"): page-locked with `cudaHostAlloc` when the CUDA backend runs (so host→device copies
/// are asynchronous DMA at full bandwidth), plain 4 KiB-aligned host memory otherwise. Buffers
/// are handed out as RAII leases; a lease given back with `release_after(stream)` returns to the
/// pool only once an event recorded on that stream has completed, so a buffer is never refilled
/// while a copy out of it is still in flight. The pool never grows: when every buffer is out,
/// `acquire` waits and `try_acquire` answers "none".
///
/// Thread-safe: any thread may acquire and give back (the pipeline's reader thread and the
/// executor share pools). Per-step code does not allocate: acquiring, recording an event and
/// recycling only move buffer indices between fixed-capacity lists.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "trialstat/status.hpp"

namespace trialstat::memory {

/// @brief A CUDA stream (`cudaStream_t`) without including CUDA headers. nullptr is CUDA's
/// null stream — the legacy default stream (per-thread default stream when compiled with
/// `--default-stream per-thread`) — never "no stream".
using stream_handle = void*;

/// @brief What memory a pool's buffers are.
enum class pool_memory : uint8_t {
  automatic,  ///< pinned when this build has CUDA and a device is visible, else host
  pinned,     ///< cudaHostAlloc (error when CUDA cannot be used)
  host,       ///< ordinary aligned host memory (the CPU backend; tests)
};

/// @brief Size of a pool: `num_buffers` buffers of `buffer_bytes` each (rounded up to 4 KiB).
struct pinned_pool_options {
  std::size_t num_buffers = 8;
  std::size_t buffer_bytes = std::size_t{32} << 20;
  pool_memory memory = pool_memory::automatic;
};

/// @brief Counters of a pool's life (for tests and benchmarks).
struct pinned_pool_counters {
  int64_t acquired = 0;        ///< leases handed out
  int64_t waited = 0;          ///< `acquire` calls that found no buffer free or reclaimable
  int64_t event_waits = 0;     ///< buffers reclaimed by waiting on their event
  int64_t try_failed = 0;      ///< `try_acquire` calls that got nothing
};

class pinned_pool;

/// @brief Exclusive use of one buffer of a pool. Move-only. Destroying (or `release`-ing) a
/// lease gives the buffer back at once: the holder guarantees no device work still reads or
/// writes it; use `release_after` when a copy on a stream may still be in flight.
/// The pool must outlive its leases.
class pool_lease {
 public:
  pool_lease() = default;
  pool_lease(pool_lease&& other) noexcept;
  pool_lease& operator=(pool_lease&& other) noexcept;
  pool_lease(const pool_lease&) = delete;
  pool_lease& operator=(const pool_lease&) = delete;
  ~pool_lease();

  /// @brief Whether this lease holds a buffer.
  [[nodiscard]] explicit operator bool() const noexcept { return pool_ != nullptr; }
  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  /// @brief The whole buffer's size (the pool's buffer_bytes).
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_; }
  [[nodiscard]] std::span<std::byte> span() const noexcept { return {data_, size_}; }
  /// @brief Index of the buffer in its pool (0 ≤ index < num_buffers), −1 when empty.
  [[nodiscard]] int index() const noexcept { return index_; }

  /// @brief Give the buffer back once every operation enqueued on `stream` so far has finished
  /// (an event is recorded on the stream; the buffer becomes free when it completes). A null
  /// stream is the default stream (an event is recorded on it too); with a host pool: at once.
  /// Use `release()` when no copy can be in flight. The lease is empty afterwards, also on error.
  /// @return ok; cuda_error/cuda_fatal when the event cannot be recorded (the buffer is then
  ///   returned only after the whole device has synchronised, never early).
  [[nodiscard]] status release_after(stream_handle stream);
  /// @brief Give the buffer back now.
  void release() noexcept;

 private:
  friend class pinned_pool;
  pinned_pool* pool_ = nullptr;
  int index_ = -1;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

/// @brief The pool. Create with `pinned_pool::create`; not copyable or movable (leases point
/// at it).
class pinned_pool {
 public:
  /// @brief Allocate every buffer now (one allocation) and, for pinned memory, one CUDA event
  /// per buffer. @return the pool; errors: invalid_argument (zero buffers or bytes, overflow,
  /// `pinned` without a usable CUDA device), out_of_memory (the allocation failed, naming the
  /// size), cuda_error.
  [[nodiscard]] static result<std::unique_ptr<pinned_pool>> create(const pinned_pool_options& options);

  ~pinned_pool();
  pinned_pool(const pinned_pool&) = delete;
  pinned_pool& operator=(const pinned_pool&) = delete;

  /// @brief A free buffer, waiting for one when all are leased: first buffers whose event has
  /// completed, else the oldest one whose event is pending (waited on), else until a holder
  /// gives one back. @return the lease; errors: cuda_error/cuda_fatal from waiting on an event.
  [[nodiscard]] result<pool_lease> acquire();
  /// @brief A free (or completed-event) buffer, or an empty lease when none is, without waiting.
  [[nodiscard]] pool_lease try_acquire() noexcept;

  /// @brief Whether [p, p + bytes) lies inside this pool's memory (one buffer or across).
  [[nodiscard]] bool owns(const void* p, std::size_t bytes) const noexcept;
  [[nodiscard]] bool is_pinned() const noexcept { return pinned_; }
  [[nodiscard]] std::size_t buffer_bytes() const noexcept { return buffer_bytes_; }
  [[nodiscard]] std::size_t num_buffers() const noexcept { return num_buffers_; }
  /// @brief Bytes allocated, fixed for the pool's life: num_buffers × buffer_bytes.
  [[nodiscard]] std::size_t total_bytes() const noexcept { return num_buffers_ * buffer_bytes_; }
  /// @brief Buffers free now (pending ones not counted).
  [[nodiscard]] std::size_t free_count() const;
  /// @brief Buffers given back with `release_after` whose event was not seen complete yet.
  [[nodiscard]] std::size_t pending_count() const;
  [[nodiscard]] pinned_pool_counters counters() const;

 private:
  pinned_pool() = default;
  friend class pool_lease;
  void give_back(int index) noexcept;
  status give_back_after(int index, stream_handle stream);
  /// Move every pending buffer whose event completed to the free list (lock held).
  void reclaim_completed_locked() noexcept;
  pool_lease make_lease_locked(int index) noexcept;

  std::byte* base_ = nullptr;
  std::size_t buffer_bytes_ = 0;
  std::size_t num_buffers_ = 0;
  bool pinned_ = false;
  std::vector<void*> events_;       // [num_buffers] cudaEvent_t (pinned pools)
  mutable std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<int> free_;           // stack of free buffer indices (capacity num_buffers)
  std::vector<int> pending_;        // FIFO (oldest first) of buffers waiting on their event
  pinned_pool_counters counters_;
};

}  // namespace trialstat::memory
