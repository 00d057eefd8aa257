// SPDX-License-Identifier: Apache-2.0
/// @file log_histogram_cpu.hpp
/// @brief CPU twin of the log-scale histogram (internal; called by host/stats/log_histogram.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "trialstat/stats/segment.hpp"
#include "trialstat/status.hpp"

namespace trialstat::kernels {

/// @brief Cells (log_histogram_op.hpp: 1548 bins + NaN, +Inf, −Inf, below, above) of every
/// segment of a host batch, added into `cells` [num_segments × log_histogram_num_cells] (the
/// caller zeroes it). OpenMP over fixed 64 Ki-element chunks; exact, so thread-count independent.
/// @return ok; invalid_argument (sizes); unsupported_dtype.
[[nodiscard]] status compute_log_histograms_cpu(const std::byte* base,
                                                std::span<const stats::segment> segments,
                                                std::span<int64_t> cells) noexcept;

/// @brief The cells of one segment on the calling thread, added into `bins`
/// [log_histogram_num_bins] and `extra_cells` [log_histogram_num_cells − log_histogram_num_bins]
/// (NaN, +Inf, −Inf, below, above: the cells after the bins) — the per-tensor form of
/// compute_log_histograms_cpu (exact counts, so the same cells), with the bins where the caller
/// keeps them (a record's vector: no copy). No segment checks: the caller has validated it
/// (validate_segments).
void segment_log_histogram_cpu(const std::byte* base, const stats::segment& seg, int64_t* bins,
                               int64_t* extra_cells) noexcept;

/// @brief Ranks of n float32 values given by their bit patterns (log_histogram_op.hpp's ranks,
/// 0 … log_rank_nan) by the CPU twin's float32 lane path on the active ISA — the labels the
/// counts take (log_histogram_labels_cpu.hpp), mapped back to ranks — exposed for the
/// exhaustive tests. `ranks` has room for n.
void log_histogram_ranks32_cpu(const uint32_t* bits, int64_t n, int32_t* ranks) noexcept;

}  // namespace trialstat::kernels
