// SPDX-License-Identifier: Apache-2.0
/// @file cuda_context.hpp
/// @brief The launcher layer's resources (internal to host/stats, CUDA builds only): a stream and
/// device memory that is allocated once and reused, grown only past its largest use.
///
/// Every CUDA path of the statistics runs on a `cuda_context`: the public `stats::compute_*`
/// calls make a private one per call (its own non-blocking stream); the CUDA executor keeps one on
/// its own stream for the whole run, so the rule statistics it computes over each batch
/// (percentiles, equality counts, channel sums: host/stats/rule_statistics.cpp) allocate nothing
/// and create no stream in the steady state. The executor's batch buffers use the same
/// `growing_block`.
#pragma once

#include "trialstat/config.hpp"

#if TRIALSTAT_HAS_CUDA

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/common/cuda_batch.hpp"
#include "trialstat/stats/segment.hpp"
#include "trialstat/status.hpp"

namespace trialstat::stats::detail {

/// @brief Bytes `n` rounded up to a multiple of `a` (a power of two).
[[nodiscard]] constexpr std::size_t align_up(std::size_t n, std::size_t a = 256) noexcept {
  return (n + a - 1) & ~(a - 1);
}

/// @brief CUDA memory (device: cudaMalloc; pinned host: cudaHostAlloc) that is allocated once and
/// grows only past its largest use, at least doubling, in multiples of 256 bytes (so the kernels'
/// aligned-word loads around an unaligned element stay inside it).
template <cudaError_t (*Alloc)(void**, std::size_t), cudaError_t (*Free)(void*)>
class growing_block {
 public:
  growing_block() = default;
  growing_block(const growing_block&) = delete;
  growing_block& operator=(const growing_block&) = delete;
  ~growing_block() {
    if (ptr_ != nullptr) static_cast<void>(Free(ptr_));
  }
  /// @brief At least `bytes`; the old contents are lost (grow only idle blocks: cudaFree waits for
  /// the device). `growths` counts reallocations of a block that already had memory.
  /// Errors: out_of_memory / cuda_error from the allocator.
  [[nodiscard]] status reserve(std::size_t bytes, int64_t& growths);
  [[nodiscard]] std::byte* get() const noexcept { return static_cast<std::byte*>(ptr_); }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

cudaError_t device_alloc(void** ptr, std::size_t bytes);
cudaError_t device_free(void* ptr);
cudaError_t pinned_alloc(void** ptr, std::size_t bytes);
cudaError_t pinned_free(void* ptr);

using device_block = growing_block<device_alloc, device_free>;
using pinned_block = growing_block<pinned_alloc, pinned_free>;

extern template class growing_block<device_alloc, device_free>;
extern template class growing_block<pinned_alloc, pinned_free>;

/// @brief Where a statistic's CUDA launches run: one stream and reusable device memory in named
/// slots. Calls on one context are serialised by its stream; a context is not thread-safe.
class cuda_context {
 public:
  /// The device memory of a context, one reusable block each.
  enum slot : std::size_t {
    input,       ///< the (first) input tensor or batch, staged from host memory
    input_b,     ///< a second input (pairwise: the current tensor; confusion: predictions)
    table,       ///< host tables uploaded per call (segment table, parameters)
    table_b,     ///< a second table (moments per segment, percentiles asked)
    output,      ///< results downloaded per call
    workspace,   ///< the launchers' temporary storage (two-phase: sized, then given)
    num_slots,
  };

  /// @brief A context without a stream: call `open` before use.
  cuda_context() = default;
  /// @brief A context on the caller's `stream` (not owned; must outlive the context).
  explicit cuda_context(cudaStream_t stream) noexcept : stream_(stream) {}
  cuda_context(const cuda_context&) = delete;
  cuda_context& operator=(const cuda_context&) = delete;
  /// Waits for the stream (no copy still reads or writes caller memory after an early return),
  /// frees the blocks and destroys an owned stream.
  ~cuda_context();

  /// @brief Create an owned non-blocking stream (never the legacy default stream) unless the
  /// context already has one. Errors: cuda_error.
  [[nodiscard]] status open();
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }
  /// @brief Reallocations of a block that had memory (0 in the steady state).
  [[nodiscard]] int64_t growths() const noexcept { return growths_; }

  /// @brief Device memory of `which`, at least `bytes` (contents undefined). Errors: as
  /// growing_block::reserve.
  [[nodiscard]] result<std::byte*> reserve(slot which, std::size_t bytes);
  /// @brief `bytes` bytes at `data` usable by a kernel: device or managed memory in place, host
  /// memory copied into `which` on the stream. Errors: as reserve, cuda_error.
  [[nodiscard]] result<const std::byte*> stage(slot which, const void* data, std::size_t bytes);
  /// @brief The elements of `host` copied into `which` on the stream (a table for a launch).
  template <class T>
  [[nodiscard]] result<const T*> upload(slot which, std::span<const T> host) {
    auto d = copy_to_device(which, host.data(), host.size_bytes());
    if (!d) return d.error_status();
    return reinterpret_cast<const T*>(*d);
  }
  /// @brief Run a two-phase launcher: `launch(nullptr, &bytes)` sizes the workspace, then
  /// `launch(workspace, &bytes)` enqueues the kernels (kernels/<stat>/<stat>_cuda.hpp).
  template <class Launch>
  [[nodiscard]] status run_two_phase(Launch&& launch) {
    std::size_t bytes = 0;
    TRIALSTAT_RETURN_IF_ERROR(launch(static_cast<void*>(nullptr), &bytes));
    auto workspace_memory = reserve(workspace, bytes);
    if (!workspace_memory) return workspace_memory.error_status();
    return launch(static_cast<void*>(*workspace_memory), &bytes);
  }
  /// @brief Copy `bytes` from the device to `host` and wait for the stream: on return every
  /// launch of this call has finished and the blocks are idle. Errors: cuda_error (including a
  /// failed kernel of this call).
  [[nodiscard]] status download(void* host, const void* device, std::size_t bytes);

 private:
  [[nodiscard]] result<std::byte*> copy_to_device(slot which, const void* host, std::size_t bytes);

  cudaStream_t stream_ = nullptr;
  bool owns_stream_ = false;
  int64_t growths_ = 0;
  std::array<device_block, num_slots> blocks_;
};

/// @brief Run on `cuda` when given, else on `own` (opened here): `cuda` then points to `own`.
/// Errors: as cuda_context::open.
[[nodiscard]] inline status use_or_open(cuda_context*& cuda, cuda_context& own) {
  if (cuda != nullptr) return status::success();
  TRIALSTAT_RETURN_IF_ERROR(own.open());
  cuda = &own;
  return status::success();
}

/// @brief The kernels' view of a batch: `segments` (host) uploaded to `d_segments`, over the
/// bytes at `d_base`; `max_total_elements` = Σ num_elements.
[[nodiscard]] inline kernels::device_batch device_batch_of(const std::byte* d_base,
                                                           const segment* d_segments,
                                                           std::span<const segment> segments) noexcept {
  int64_t total = 0;
  for (const segment& s : segments) total += s.num_elements;
  return kernels::device_batch{d_base, d_segments, static_cast<int64_t>(segments.size()), total};
}

/// @brief Whether the device can dereference `p` directly (device or managed memory).
[[nodiscard]] bool is_device_pointer(const void* p) noexcept;

}  // namespace trialstat::stats::detail

#endif  // TRIALSTAT_HAS_CUDA
