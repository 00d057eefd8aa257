// SPDX-License-Identifier: Apache-2.0
// Internal to host/io/s3: reusable receive buffers for ranged GETs. Not a public header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

namespace trialstat::io::detail {

/// A receive buffer of at least the size asked for; uninitialised (libcurl writes every byte that
/// is read back: `s3_request::received` says how many).
struct part_buffer {
  std::unique_ptr<std::byte[]> data;
  uint64_t capacity_bytes = 0;
};

/// Receive buffers kept for reuse between ranged GETs, so that a steady read of a trial neither
/// zero-fills nor page-faults fresh memory for every part (measured: zero-filled fresh 8 MiB part
/// buffers were ~20 % of `stats s3://`'s CPU and stalled the fetch loop that allocates them).
/// Capacities are powers of two from 64 KiB, so parts of similar size share buffers; at most
/// `max_pooled_bytes` of idle capacity is kept (the rest is freed). Thread-safe.
class part_buffer_pool {
 public:
  explicit part_buffer_pool(uint64_t max_pooled_bytes) : max_pooled_bytes_(max_pooled_bytes) {}

  /// A buffer of at least `size_bytes`. Throws std::bad_alloc when memory is exhausted.
  part_buffer take(uint64_t size_bytes);

  /// Return a buffer taken from this pool (or an empty one, ignored).
  void give(part_buffer buffer);

  /// The capacity class of a request: the next power of two ≥ max(size, 64 KiB).
  [[nodiscard]] static uint64_t capacity_for(uint64_t size_bytes) noexcept;

 private:
  std::mutex mutex_;
  std::multimap<uint64_t, std::unique_ptr<std::byte[]>> idle_;  // capacity -> buffer
  uint64_t idle_bytes_ = 0;
  uint64_t max_pooled_bytes_;
};

}  // namespace trialstat::io::detail
