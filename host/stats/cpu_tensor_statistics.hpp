// SPDX-License-Identifier: Apache-2.0
// Every streaming statistic of one tensor, back to back on one thread: the CPU executor's
// cache-blocked path (cpu_executor.cpp). A tensor that fits the cache budget is read from
// memory once, by the moments, and the fixed-bin histogram (which needs the moments' range),
// the log-scale histogram and the pairwise pass against the previous step's copy then find it
// in the core's L2 — instead of each statistic streaming the whole batch through memory in
// turn, and one pool job per batch instead of one per statistic. (Measured on the Zen 4
// benchmark machine, 256 KiB float32 tensors: no faster than the streamed passes — the kernels
// are bound by their instructions there, not by where the tensor is; bench/RESULTS.md, issue 24,
// eleventh session.) Every statistic runs the same chunk functions merged in the same order as
// its batch pass (kernels/*/*_cpu.hpp: segment_moments_cpu, segment_histogram_cpu,
// segment_log_histogram_cpu, compute_pairwise_cpu), so the records are bit-identical to the
// per-statistic passes'. Internal to host/stats.
#pragma once

#include <cstddef>
#include <cstdint>

#include "host/stats/cpu_pairwise_history.hpp"
#include "trialstat/stats/segment.hpp"
#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/stats/statistics_request.hpp"
#include "trialstat/status.hpp"

namespace trialstat::stats::detail {

/// @brief Whether a tensor of `size_bytes` element bytes takes the blocked path under
/// `block_bytes` (executor_options::cpu_block_bytes; 0: no tensor does).
[[nodiscard]] inline bool fits_cpu_block(std::size_t size_bytes, std::size_t block_bytes) noexcept {
  return size_bytes <= block_bytes && block_bytes > 0;
}

/// @brief For one tensor, on the calling thread: `record.moments` (and `record.scalar` when it has
/// one element), `record.histogram` when `request.histogram_bins` > 0, `record.log_histogram`
/// when `request.log_histogram`, and — when `kept` is non-null — the pairwise comparisons with
/// the kept copies and this step's copy (compare_with_history). Axis-0 counts and rule
/// statistics are left to the caller.
/// @param base the batch's host bytes; the segment is validated (validate_segments) by the caller
/// @param seg  the tensor's elements (dtype, count, offset from `base`)
/// @return ok; invalid_argument (histogram bins above 2^24); out_of_memory; errors of the
///   pairwise statistics. Never throws.
[[nodiscard]] status compute_tensor_statistics(const std::byte* base, const stats::segment& seg,
                                               const stats::statistics_request& request,
                                               stats::statistics_record& record,
                                               snapshot_window* kept) noexcept;

}  // namespace trialstat::stats::detail
