// SPDX-License-Identifier: Apache-2.0
/// @file dispatch.hpp
/// @brief Backend checks and the CUDA staging helpers of the statistics entry points (internal
/// to host/stats). The CUDA path of the convenience entry points copies host inputs to the
/// device on a private stream (allocate → copy → launch → copy back → free); the streaming
/// pipeline calls the kernels/ launchers directly with its own buffers and stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "trialstat/config.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/stats/segment.hpp"
#include "trialstat/status.hpp"

#if TRIALSTAT_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace trialstat::stats::detail {

/// @brief ok when `which` can run here; invalid_argument naming `what` otherwise (never a
/// silent fallback to the CPU).
[[nodiscard]] status check_backend(backend which, const char* what);

/// @brief Bytes a segment table spans from the base: max(offset + n·size). invalid_argument on
/// overflow.
[[nodiscard]] status segments_span_bytes(std::span<const segment> segments, const char* what,
                                         std::size_t& bytes);

#if TRIALSTAT_HAS_CUDA

/// @brief An owned non-blocking stream (never the legacy default stream). The destructor waits
/// for the stream before destroying it, so an entry point that returns early (an error after an
/// asynchronous copy was enqueued) never leaves a copy reading or writing the caller's memory.
/// Declare it before the device_buffers that use it (they are freed stream-ordered first).
class cuda_stream {
 public:
  cuda_stream() = default;
  cuda_stream(const cuda_stream&) = delete;
  cuda_stream& operator=(const cuda_stream&) = delete;
  ~cuda_stream();
  [[nodiscard]] status create();
  [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

/// @brief Stream-ordered device allocation (cudaMallocAsync / cudaFreeAsync on one stream).
class device_buffer {
 public:
  device_buffer() = default;
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer();
  [[nodiscard]] status allocate(std::size_t bytes, cudaStream_t stream);
  [[nodiscard]] void* get() const noexcept { return ptr_; }
  template <class T>
  [[nodiscard]] T* as() const noexcept {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

/// @brief The error for result `index` of `what` that came back poisoned (result_poison.hpp).
[[nodiscard]] status poisoned_result(const char* what, std::size_t index);

/// @brief Whether the device can dereference `p` directly (device or managed memory).
[[nodiscard]] bool is_device_pointer(const void* p) noexcept;

/// @brief `bytes` bytes at `host_or_device` as a device pointer: device memory is used in
/// place; host memory is copied into `staging` on `stream`.
[[nodiscard]] status device_view_of(const void* host_or_device, std::size_t bytes,
                                    device_buffer& staging, cudaStream_t stream,
                                    const void*& d_ptr);

#endif

}  // namespace trialstat::stats::detail
