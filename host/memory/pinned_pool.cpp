// SPDX-License-Identifier: Apache-2.0
// The fixed staging-buffer pool: one allocation (cudaHostAlloc or aligned host memory), one
// CUDA event per buffer, free / pending index lists of fixed capacity.
#include "trialstat/memory/pinned_pool.hpp"

#include <algorithm>
#include <new>
#include <string>

#include "trialstat/config.hpp"

#if TRIALSTAT_HAS_CUDA
#include <cuda_runtime_api.h>

#include "trialstat/detail/cuda_check.hpp"
#endif

namespace trialstat::memory {
namespace {

constexpr std::size_t page_bytes = 4096;

#if TRIALSTAT_HAS_CUDA
bool cuda_device_visible() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    return false;
  }
  return count > 0;
}
#endif

}  // namespace

// ---- pool_lease -------------------------------------------------------------------------------

pool_lease::pool_lease(pool_lease&& other) noexcept
    : pool_(other.pool_), index_(other.index_), data_(other.data_), size_(other.size_) {
  other.pool_ = nullptr;
  other.index_ = -1;
  other.data_ = nullptr;
  other.size_ = 0;
}

pool_lease& pool_lease::operator=(pool_lease&& other) noexcept {
  if (this != &other) {
    release();
    pool_ = other.pool_;
    index_ = other.index_;
    data_ = other.data_;
    size_ = other.size_;
    other.pool_ = nullptr;
    other.index_ = -1;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

pool_lease::~pool_lease() { release(); }

void pool_lease::release() noexcept {
  if (pool_ == nullptr) return;
  pool_->give_back(index_);
  pool_ = nullptr;
  index_ = -1;
  data_ = nullptr;
  size_ = 0;
}

status pool_lease::release_after(stream_handle stream) {
  if (pool_ == nullptr) return status::success();
  pinned_pool* pool = pool_;
  const int index = index_;
  pool_ = nullptr;
  index_ = -1;
  data_ = nullptr;
  size_ = 0;
  return pool->give_back_after(index, stream);
}

// ---- pinned_pool ------------------------------------------------------------------------------

result<std::unique_ptr<pinned_pool>> pinned_pool::create(const pinned_pool_options& options) {
  if (options.num_buffers == 0 || options.buffer_bytes == 0) {
    return status(error_code::invalid_argument,
                  "pinned_pool: need at least one buffer of at least one byte (got " +
                      std::to_string(options.num_buffers) + " buffers of " +
                      std::to_string(options.buffer_bytes) + " bytes)");
  }
  if (options.num_buffers > (1u << 20) || options.buffer_bytes > (std::size_t{1} << 44)) {
    return status(error_code::invalid_argument, "pinned_pool: absurd size requested");
  }
  const std::size_t buffer_bytes = (options.buffer_bytes + page_bytes - 1) / page_bytes * page_bytes;
  const std::size_t total = buffer_bytes * options.num_buffers;

  bool pinned = false;
  switch (options.memory) {
    case pool_memory::host:
      pinned = false;
      break;
    case pool_memory::pinned:
#if TRIALSTAT_HAS_CUDA
      if (!cuda_device_visible()) {
        return status(error_code::invalid_argument,
                      "pinned_pool: pinned memory requested but no CUDA device is visible");
      }
      pinned = true;
      break;
#else
      return status(error_code::invalid_argument,
                    "pinned_pool: pinned memory requested but this build has no CUDA backend");
#endif
    case pool_memory::automatic:
#if TRIALSTAT_HAS_CUDA
      pinned = cuda_device_visible();
#endif
      break;
  }

  std::unique_ptr<pinned_pool> pool(new (std::nothrow) pinned_pool());
  if (!pool) return status(error_code::out_of_memory, "pinned_pool: cannot allocate the pool object");
  try {
    pool->free_.reserve(options.num_buffers);
    pool->pending_.reserve(options.num_buffers);
    pool->events_.assign(options.num_buffers, nullptr);
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory, "pinned_pool: cannot allocate the index lists");
  }
  pool->buffer_bytes_ = buffer_bytes;
  pool->num_buffers_ = options.num_buffers;
  pool->pinned_ = pinned;
  if (pinned) {
#if TRIALSTAT_HAS_CUDA
    void* p = nullptr;
    const cudaError_t err = cudaHostAlloc(&p, total, cudaHostAllocPortable);
    if (err != cudaSuccess) {
      status failure = detail::cuda_failure(err, "cudaHostAlloc", __FILE__, __LINE__);
      return status(failure.code() == error_code::cuda_error ? error_code::out_of_memory
                                                             : failure.code(),
                    "pinned_pool: cannot pin " + std::to_string(total) + " bytes of host memory (" +
                        std::to_string(options.num_buffers) + " buffers of " +
                        std::to_string(buffer_bytes) + "): " + failure.message());
    }
    pool->base_ = static_cast<std::byte*>(p);
    for (auto& e : pool->events_) {
      cudaEvent_t event = nullptr;
      TRIALSTAT_CUDA_TRY(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
      e = event;
    }
#endif
  } else {
    pool->base_ = static_cast<std::byte*>(
        ::operator new(total, std::align_val_t{page_bytes}, std::nothrow));
    if (pool->base_ == nullptr) {
      return status(error_code::out_of_memory,
                    "pinned_pool: cannot allocate " + std::to_string(total) + " bytes of host memory");
    }
  }
  // Hand out low indices first (a stack: push high to low).
  for (std::size_t i = options.num_buffers; i-- > 0;) pool->free_.push_back(static_cast<int>(i));
  return pool;
}

pinned_pool::~pinned_pool() {
#if TRIALSTAT_HAS_CUDA
  if (pinned_) {
    // Pending copies may still read a buffer: wait for them before unpinning.
    for (int index : pending_) {
      static_cast<void>(cudaEventSynchronize(static_cast<cudaEvent_t>(events_[static_cast<std::size_t>(index)])));
    }
    for (void* e : events_) {
      if (e != nullptr) static_cast<void>(cudaEventDestroy(static_cast<cudaEvent_t>(e)));
    }
    if (base_ != nullptr) static_cast<void>(cudaFreeHost(base_));
    return;
  }
#endif
  if (base_ != nullptr) ::operator delete(base_, std::align_val_t{page_bytes});
}

pool_lease pinned_pool::make_lease_locked(int index) noexcept {
  pool_lease lease;
  lease.pool_ = this;
  lease.index_ = index;
  lease.data_ = base_ + static_cast<std::size_t>(index) * buffer_bytes_;
  lease.size_ = buffer_bytes_;
  counters_.acquired += 1;
  return lease;
}

void pinned_pool::reclaim_completed_locked() noexcept {
#if TRIALSTAT_HAS_CUDA
  for (std::size_t i = 0; i < pending_.size();) {
    const int index = pending_[i];
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(events_[static_cast<std::size_t>(index)]));
    if (err == cudaSuccess) {
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      free_.push_back(index);
    } else {
      // cudaErrorNotReady: still in flight. It is no failure, but the runtime may record it as
      // this thread's last error, where the next launch check would find it and blame the
      // launch: clear it (only it, never someone else's error). Any other error is cleared too
      // and the buffer stays pending until `acquire` waits on it and reports the failure.
      if (err != cudaErrorNotReady || cudaPeekAtLastError() == cudaErrorNotReady) {
        static_cast<void>(cudaGetLastError());
      }
      ++i;
    }
  }
#endif
}

result<pool_lease> pinned_pool::acquire() {
  std::unique_lock lock(mutex_);
  bool counted_wait = false;
  for (;;) {
    if (free_.empty()) reclaim_completed_locked();
    if (!free_.empty()) {
      const int index = free_.back();
      free_.pop_back();
      return make_lease_locked(index);
    }
    if (!counted_wait) {
      counters_.waited += 1;
      counted_wait = true;
    }
#if TRIALSTAT_HAS_CUDA
    if (!pending_.empty()) {
      // Wait (unlocked) for the oldest pending buffer's event; nobody else touches it meanwhile
      // because it is off both lists.
      const int index = pending_.front();
      pending_.erase(pending_.begin());
      counters_.event_waits += 1;
      lock.unlock();
      const cudaError_t err =
          cudaEventSynchronize(static_cast<cudaEvent_t>(events_[static_cast<std::size_t>(index)]));
      lock.lock();
      if (err != cudaSuccess) {
        pending_.insert(pending_.begin(), index);  // never hand out a buffer that may be in use
        return detail::cuda_failure(err, "cudaEventSynchronize (pinned_pool::acquire)", __FILE__,
                                    __LINE__);
      }
      return make_lease_locked(index);
    }
#endif
    returned_.wait(lock, [&] { return !free_.empty() || !pending_.empty(); });
  }
}

pool_lease pinned_pool::try_acquire() noexcept {
  std::lock_guard lock(mutex_);
  if (free_.empty()) reclaim_completed_locked();
  if (free_.empty()) {
    counters_.try_failed += 1;
    return {};
  }
  const int index = free_.back();
  free_.pop_back();
  return make_lease_locked(index);
}

void pinned_pool::give_back(int index) noexcept {
  {
    std::lock_guard lock(mutex_);
    free_.push_back(index);  // capacity reserved: never allocates
  }
  returned_.notify_one();
}

status pinned_pool::give_back_after(int index, stream_handle stream) {
#if TRIALSTAT_HAS_CUDA
  // A null stream is the legacy default stream (cudaStreamLegacy), not "no stream": a copy
  // enqueued on it may still be running, so it gets an event like any other stream.
  if (pinned_) {
    const cudaError_t err = cudaEventRecord(static_cast<cudaEvent_t>(events_[static_cast<std::size_t>(index)]),
                                            static_cast<cudaStream_t>(stream));
    if (err != cudaSuccess) {
      status failure = detail::cuda_failure(err, "cudaEventRecord (pool_lease::release_after)",
                                            __FILE__, __LINE__);
      // Without an event the only safe point is a synchronised device.
      static_cast<void>(cudaDeviceSynchronize());
      give_back(index);
      return failure;
    }
    {
      std::lock_guard lock(mutex_);
      pending_.push_back(index);
    }
    returned_.notify_one();
    return status::success();
  }
#else
  static_cast<void>(stream);
#endif
  give_back(index);
  return status::success();
}

bool pinned_pool::owns(const void* p, std::size_t bytes) const noexcept {
  const auto address = reinterpret_cast<uintptr_t>(p);
  const auto begin = reinterpret_cast<uintptr_t>(base_);
  const uintptr_t end = begin + total_bytes();
  return base_ != nullptr && address >= begin && address <= end && bytes <= end - address;
}

std::size_t pinned_pool::free_count() const {
  std::lock_guard lock(mutex_);
  return free_.size();
}

std::size_t pinned_pool::pending_count() const {
  std::lock_guard lock(mutex_);
  return pending_.size();
}

pinned_pool_counters pinned_pool::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

}  // namespace trialstat::memory
