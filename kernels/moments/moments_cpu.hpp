// SPDX-License-Identifier: Apache-2.0
/// @file moments_cpu.hpp
/// @brief CPU twin of the moments statistic (internal; called by host/stats/moments.cpp).
#pragma once

#include <cstddef>
#include <span>

#include "trialstat/stats/segment.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/status.hpp"

namespace trialstat::kernels {

/// @brief Moments of every segment of a host batch buffer (OpenMP over fixed 64 Ki-element
/// chunks, merged in chunk order: deterministic for any thread count).
/// @param base     host bytes; each segment's bytes need no alignment
/// @param segments [num_segments]; num_elements ≥ 0, real dtypes
/// @param out      [num_segments], written in full
/// @return ok; invalid_argument (sizes, negative counts, null base with elements);
///   unsupported_dtype (segment named by index); out_of_memory.
[[nodiscard]] status compute_moments_cpu(const std::byte* base,
                                         std::span<const stats::segment> segments,
                                         std::span<stats::moments> out) noexcept;

/// @brief Moments of one segment on the calling thread: the same chunks, merged in the same
/// order, as compute_moments_cpu — bit-identical to its record for that segment. No checks:
/// the caller has validated the segment (validate_segments); num_elements 0 gives the empty
/// record.
/// @param base host bytes of the batch; the segment's elements start at base + offset_bytes
[[nodiscard]] stats::moments segment_moments_cpu(const std::byte* base,
                                                 const stats::segment& seg) noexcept;

}  // namespace trialstat::kernels
