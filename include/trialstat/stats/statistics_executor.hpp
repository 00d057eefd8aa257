// SPDX-License-Identifier: Apache-2.0
/// @file statistics_executor.hpp
/// @brief Stage 5 of DESIGN.md behind one interface: an executor computes every statistic
/// requested for a batch of decoded tensors (segments of one staging buffer) and writes
/// them into the batch's statistics records. The CPU executor runs the OpenMP twins; a CUDA
/// executor copies the staging buffer to the device on its streams and runs the kernels.
/// Executors own the history of previous copies needed for pairwise statistics.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "trialstat/stats/backend.hpp"
#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/stats/tensor_batch.hpp"
#include "trialstat/status.hpp"

namespace trialstat::memory {
class pinned_pool;
}

namespace trialstat::stats {

/// @brief Default pinned staging memory of the CUDA executor (`--pinned-mb 256`).
inline constexpr std::size_t default_pinned_pool_bytes = std::size_t{256} << 20;

/// @brief Default cache budget of the CPU executor (`executor_options::cpu_block_bytes`):
/// 512 KiB, half the 1 MiB L2 of the Zen 4 machine it was measured on, leaving room beside a
/// tensor for the previous step's copy its pairwise pass reads (bench/RESULTS.md, issue 24,
/// eleventh session).
inline constexpr std::size_t default_cpu_block_bytes = std::size_t{512} << 10;

/// @brief How an executor sizes its buffers and splits its work.
struct executor_options {
  /// Pinned host memory for staging, in bytes (`--pinned-mb`), allocated once. The CUDA
  /// executor cuts it into 8 equal buffers (at least 64 KiB each): 2 stage copies to the device
  /// (one per stream), 6 are lent to the reader for event files that fit one buffer. The device
  /// input buffer of each stream is one buffer's size; larger tensors are split into pieces.
  std::size_t pinned_pool_bytes = default_pinned_pool_bytes;
  /// Most segments per device launch (segment-table capacity); 0 = 16384.
  std::size_t max_segments_per_launch = 0;
  /// CPU executor only: tensors of at most this many element bytes get every statistic
  /// computed back to back on one thread while they are in its cache (the tensors of a batch
  /// spread over the threads); larger ones are streamed, one pass per statistic with its chunks
  /// spread over the threads. Records are bit-identical either way; 0 streams every tensor.
  std::size_t cpu_block_bytes = default_cpu_block_bytes;
};

/// @brief Computes requested statistics for batches, in submission order.
class statistics_executor {
 public:
  virtual ~statistics_executor() = default;

  /// @brief Fill, for every segment, what `batch.requests` asks for its record's tensor: moments,
  /// fixed-bin and log-scale histograms, the scalar of one-element tensors, axis-0 counts,
  /// pairwise statistics against the kept copies of earlier steps of the same (tensor, worker) —
  /// after which this step's copy is kept (up to the request's `history_depth`) — and the rule
  /// statistics (percentiles, equality counts, channel sums, kept values). Batches must be
  /// submitted in global-step order. Records of segments with a dtype that has no statistics
  /// must not be submitted.
  /// @return ok; errors: invalid_argument when segments, records and requests do not match
  ///   (`tensor_batch::check`), else what the kernels return (invalid_argument, out_of_memory,
  ///   cuda_*). Synchronous: on return every record is complete and `base` may be reused.
  [[nodiscard]] virtual status compute(const tensor_batch& batch) = 0;

  [[nodiscard]] virtual stats::backend backend() const noexcept = 0;

  /// @brief Buffers a reader may fill for this executor (pinned event-file buffers the CUDA
  /// executor copies to the device without a host copy), or nullptr (the CPU executor). The
  /// pool outlives every lease taken from it as long as the executor outlives the reader.
  [[nodiscard]] virtual memory::pinned_pool* staging_pool() noexcept { return nullptr; }
};

/// @brief The executor for a backend. Errors: invalid_argument when the backend is not built or
/// no device is visible (never a silent fallback to the CPU).
[[nodiscard]] result<std::unique_ptr<statistics_executor>> make_statistics_executor(
    backend which);

/// @brief As above, with buffer sizes. Errors also: out_of_memory (pinned or device buffers),
/// cuda_error.
[[nodiscard]] result<std::unique_ptr<statistics_executor>> make_statistics_executor(
    backend which, const executor_options& options);

/// @brief The value of a one-element tensor from its moments record (exact: no second
/// conversion): the finite value, NaN, +Inf or −Inf.
[[nodiscard]] double scalar_from_moments(const moments& m) noexcept;

}  // namespace trialstat::stats
