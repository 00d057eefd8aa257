// SPDX-License-Identifier: Apache-2.0
/// @file histogram.hpp
/// @brief Fixed-bin histograms over each tensor's finite [min, max] with numpy.histogram
/// semantics. Source: ../shared/trials/README.md ("hist"), numpy `histogram(x, bins,
/// range=(min, max))`:
///  - edges are numpy.linspace(lo, hi, bins + 1): edge[i] = lo + i·((hi − lo)/bins), edge[bins] = hi;
///  - bins are half-open [edge[i], edge[i+1]) except the last, which includes hi; a value's bin
///    is the one whose edges contain it (numpy's edge correction after the fast index guess);
///  - min == max: numpy widens the range to [min − 0.5, max + 0.5] (a scalar lands in bin
///    bins/2) and lo/hi record the widened edges; if the widening is lost to rounding
///    (|min| ≳ 1e16), every value goes to bin bins/2, lo == hi == min, `degenerate` is set;
///  - NaN and ±Inf are never binned; they are counted in the moments record beside the bins.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trialstat/status.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/stats/segment.hpp"
#include "trialstat/stats/moments.hpp"

namespace trialstat::stats {

/// @brief Default number of bins (the golden files use 64).
inline constexpr int default_histogram_bins = 64;

/// @brief Histogram of one tensor's finite values.
struct histogram {
  int bins = 0;
  double lo = 0.0;                 ///< first edge (after numpy's widening)
  double hi = 0.0;                 ///< last edge
  bool degenerate = false;         ///< lo == hi even after widening: all values in bin bins/2
  std::vector<int64_t> counts;     ///< [bins]; Σ counts = finite count
};

/// @brief Histograms of every segment, over the [min, max] its moments record gives.
/// @param segment_moments [num_segments] from `compute_moments` on the same segments
/// @param bins            ≥ 1
/// @param out             [num_segments]; a segment without finite values gets bins = 0 and no
///                        counts (the golden files' `null`)
/// @return ok; invalid_argument (sizes, bins < 1, backend unavailable); unsupported_dtype.
/// Counts are exact and identical on every backend. Deterministic.
[[nodiscard]] status compute_histograms(const std::byte* base, std::span<const segment> segments,
                                        std::span<const moments> segment_moments, int bins,
                                        std::span<histogram> out, backend which = backend::cpu);

}  // namespace trialstat::stats
