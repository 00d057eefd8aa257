// SPDX-License-Identifier: Apache-2.0
/// @file histogram_cpu.hpp
/// @brief CPU twin of the fixed-bin histogram (internal; called by host/stats/histogram.cpp).
#pragma once

#include <cstddef>
#include <span>

#include "trialstat/stats/segment.hpp"
#include "trialstat/stats/histogram.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/status.hpp"

namespace trialstat::kernels {

/// @brief Histograms of every segment over [min, max] from `segment_moments` (semantics in
/// kernels/histogram/histogram_op.hpp). OpenMP over fixed chunks; counts are exact, so the
/// result is identical for any thread count.
/// @param segment_moments [num_segments]; a record without finite values gives bins = 0
/// @param out             [num_segments], written in full
/// @return ok; invalid_argument (sizes, bins < 1); unsupported_dtype; out_of_memory.
[[nodiscard]] status compute_histograms_cpu(const std::byte* base,
                                            std::span<const stats::segment> segments,
                                            std::span<const stats::moments> segment_moments,
                                            int bins, std::span<stats::histogram> out) noexcept;

/// @brief The histogram of one segment on the calling thread (the per-tensor form of
/// compute_histograms_cpu: the same record, counts being exact). No segment checks: the caller
/// has validated it (validate_segments).
/// @param seg_moments the segment's moments; without finite values `out` gets bins = 0
/// @param out         overwritten
/// @return ok; invalid_argument (bins outside [1, 2^24]); out_of_memory.
[[nodiscard]] status segment_histogram_cpu(const std::byte* base, const stats::segment& seg,
                                           const stats::moments& seg_moments, int bins,
                                           stats::histogram& out) noexcept;

}  // namespace trialstat::kernels
