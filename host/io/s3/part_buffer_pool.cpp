// SPDX-License-Identifier: Apache-2.0
#include "host/io/s3/part_buffer_pool.hpp"

#include <bit>

namespace trialstat::io::detail {

uint64_t part_buffer_pool::capacity_for(uint64_t size_bytes) noexcept {
  constexpr uint64_t smallest = uint64_t{64} << 10;
  if (size_bytes <= smallest) return smallest;
  if (size_bytes > (uint64_t{1} << 62)) return size_bytes;  // no power of two above: exact
  return std::bit_ceil(size_bytes);
}

part_buffer part_buffer_pool::take(uint64_t size_bytes) {
  const uint64_t capacity = capacity_for(size_bytes);
  {
    std::lock_guard lock(mutex_);
    if (auto it = idle_.find(capacity); it != idle_.end()) {
      part_buffer buffer{std::move(it->second), capacity};
      idle_.erase(it);
      idle_bytes_ -= capacity;
      return buffer;
    }
  }
  // Default-initialised: no zero fill (pages are touched as the body arrives).
  return part_buffer{std::unique_ptr<std::byte[]>(new std::byte[capacity]), capacity};
}

void part_buffer_pool::give(part_buffer buffer) {
  if (!buffer.data) return;
  std::lock_guard lock(mutex_);
  if (idle_bytes_ + buffer.capacity_bytes > max_pooled_bytes_) return;  // freed here
  idle_bytes_ += buffer.capacity_bytes;
  idle_.emplace(buffer.capacity_bytes, std::move(buffer.data));
}

}  // namespace trialstat::io::detail
