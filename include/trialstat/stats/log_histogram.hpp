// SPDX-License-Identifier: Apache-2.0
/// @file log_histogram.hpp
/// @brief Fixed log-scale histograms: the same 1548 bins for every tensor and step, so that
/// distributions can be compared across steps (TensorBoard's default buckets, as smdebug writes
/// histograms; spec/FORMAT.md §10). Edges: v = 1e-12, v *= 1.1 (float64) while v < 1e20 gives
/// 774 positive edges p₀ … p₇₇₃; edges = [−p₇₇₃ … −p₀, 0, p₀ … p₇₇₃]. Counting is
/// `numpy.histogram(x, bins=edges)` on the values converted to float64 (bool → 0/1, integers to
/// the nearest double, float16/bfloat16 exactly): bin i = [edge[i], edge[i+1]), the last bin
/// includes edge[1548]; 0 and −0.0 fall in [0, 1e-12). NaN, +Inf, −Inf and finite values
/// beyond ±p₇₇₃ (≈ 9.92e19) are counted beside the bins, never dropped.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trialstat/status.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/stats/segment.hpp"

namespace trialstat::stats {

/// @brief Number of bins of every log-scale histogram.
inline constexpr int log_histogram_bins = 1548;

/// @brief The 1549 edges, ascending (edge[774] = 0).
[[nodiscard]] std::span<const double> log_histogram_edges() noexcept;

/// @brief Counts of one tensor. Σ counts + the five counts beside them = element count.
struct log_histogram {
  std::vector<int64_t> counts;   ///< [log_histogram_bins]
  int64_t nan_count = 0;
  int64_t pos_inf_count = 0;
  int64_t neg_inf_count = 0;
  int64_t below_count = 0;       ///< finite x < edge[0] (≈ −9.92e19)
  int64_t above_count = 0;       ///< finite x > edge[1548] (≈ 9.92e19)

  /// @brief Elements in the bins.
  [[nodiscard]] int64_t binned_count() const noexcept {
    int64_t total = 0;
    for (int64_t c : counts) total += c;
    return total;
  }
};

/// @brief One tensor's counts from its kernel cells: `log_histogram_bins` bin counts, then the
/// NaN, +Inf, −Inf, below-range and above-range counts — the cell layout shared by the CPU twin
/// and the CUDA kernel (kernels/log_histogram/log_histogram_op.hpp, `log_cell_*`).
/// @param cells  [log_histogram_bins + 5] counts
[[nodiscard]] log_histogram log_histogram_from_cells(const int64_t* cells);

/// @brief The same from the bin counts already in a vector (moved in, no copy) and the 5 cells
/// after them.
/// @param bin_counts   [log_histogram_bins] counts
/// @param extra_cells  [5] NaN, +Inf, −Inf, below-range and above-range counts
[[nodiscard]] log_histogram log_histogram_from_cells(std::vector<int64_t>&& bin_counts,
                                                     const int64_t* extra_cells);

/// @brief Log-scale histograms of every segment of a batch buffer.
/// @param base      batch buffer (host memory; for backend::cuda it may also be device memory)
/// @param segments  [num_segments] tensors in the buffer (any alignment)
/// @param out       [num_segments], written in full
/// @return ok; invalid_argument (sizes, backend unavailable); unsupported_dtype (string or
///   complex segment, named by index); out_of_memory; cuda_error. Counts are exact and identical
///   on every backend.
[[nodiscard]] status compute_log_histograms(const std::byte* base, std::span<const segment> segments,
                                            std::span<log_histogram> out,
                                            backend which = backend::cpu);

/// @brief A histogram as smdebug writes it to TensorBoard (HistogramProto `bucket_limit` and
/// `bucket`, FORMAT §10): the bins from one before the first non-empty bin (an empty bin, so
/// that the left limit is shown; a zero count is prepended when that is bin 0) through the last
/// non-empty bin; `limits[i]` is the right edge of `counts[i]`. Both empty when no value is
/// binned. Source: smdebug/core/tfevent/summary.py `_make_histogram`.
struct tensorboard_buckets {
  std::vector<double> limits;
  std::vector<int64_t> counts;
};
[[nodiscard]] tensorboard_buckets to_tensorboard_buckets(const log_histogram& histogram);

}  // namespace trialstat::stats
