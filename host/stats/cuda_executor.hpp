// SPDX-License-Identifier: Apache-2.0
// The CUDA statistics executor (internal to host/pipeline; built only with CUDA). Design:
//  - buffers, all allocated once (grown only when a batch needs more than ever before): a pinned
//    pool of 8 buffers of `pinned_pool_bytes / 8` (2 stage pageable bytes for the 2 streams, 6
//    are lent to the reader through `staging_pool()`), per stream a device input buffer of one
//    buffer's size plus a scratch block (segment tables, results, kernel workspace) and pinned
//    table/result mirrors, and a device history arena for pairwise statistics;
//  - a batch is cut into pieces (segments larger than the input buffer are split) and pieces
//    into groups (host byte span ≤ the input buffer, ≤ max_segments_per_launch pieces); group k
//    runs on stream k % 2: host→device copy of its byte span (straight from pinned memory, or
//    through a staging buffer that returns to the pool when an event after the copy completes),
//    one moments launch, one histogram launch per bin count, one log-scale histogram launch
//    (over its own table of the group's pieces that asked for it), axis-0 counts, one pairwise launch
//    per allclose parameter set against the previous copies kept in the arena, one kernel that
//    copies this step's pieces into the arena, and one device→host copy of all results. While
//    stream A copies and computes group k the host stages group k+1 onto stream B;
//  - split segments: moments of the pieces merge (Chan); a histogram needs the merged
//    [min, max], so a second pass re-copies those segments' pieces from host memory and counts
//    them against the merged range (counts add); log-scale histograms (fixed edges) are counted
//    per piece in the first pass and add; axis-0 counts and pairwise results of pieces add
//    exactly / merge;
//  - the rule statistics that have no place in these launches (percentiles, equality counts,
//    channel sums, kept values) run afterwards, exactly where the CPU executor runs them, as task
//    launches over the whole batch (detail::compute_rule_statistics_batch: per group one staging
//    copy, one launch per statistic, one download and wait);
//  - `compute` stays synchronous (statistics_executor's contract): it returns after both streams
//    drained, so the overlap is within a batch; across batches the reader thread overlaps.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "trialstat/stats/statistics_executor.hpp"

namespace trialstat::stats {

/// @brief What a CUDA executor did (benchmarks and tests read these).
struct cuda_executor_counters {
  int64_t batches = 0;               ///< compute() calls with segments
  int64_t groups = 0;                ///< device launch groups, both passes
  int64_t second_pass_groups = 0;    ///< groups of the histogram pass over split segments
  int64_t split_segments = 0;        ///< segments larger than one device input buffer
  int64_t bytes_to_device = 0;       ///< host→device bytes (group spans, gaps included)
  int64_t bytes_staged = 0;          ///< of those, copied through a staging buffer first
  int64_t history_bytes = 0;         ///< device bytes reserved by the pairwise history arena
  int64_t buffer_growths = 0;        ///< (re)allocations of scratch or history after the first
  double stage_seconds = 0.0;        ///< host time copying pageable bytes into staging buffers
  double wait_seconds = 0.0;         ///< host time waiting for streams
  double compute_seconds = 0.0;      ///< wall time inside compute()
};

/// @brief A CUDA executor. Errors: out_of_memory / cuda_error when buffers cannot be made.
[[nodiscard]] result<std::unique_ptr<statistics_executor>> make_cuda_statistics_executor(
    const executor_options& options);

/// @brief The counters of an executor made by make_cuda_statistics_executor (nullopt for others).
[[nodiscard]] std::optional<cuda_executor_counters> cuda_counters(const statistics_executor& executor);

}  // namespace trialstat::stats
