// SPDX-License-Identifier: Apache-2.0
/// @file moments.hpp
/// @brief The fused per-tensor statistics record ("moments"): counts of NaN, ±Inf, zero,
/// positive and negative values, and over the finite values min, max, sum, Σ|x|, Σx², max|x|,
/// mean and a numerically stable second central moment. One pass over the data, float64
/// accumulation. Records merge exactly (counts) / stably (Chan et al. 1979 for mean and M2), so
/// partial records of a split tensor, a shard or a worker combine.
///
/// Definitions match ../shared/trials/README.md ("stats" fields) and numpy on float64-converted
/// values: bool → 0/1, integers → nearest double, float16/bfloat16 exactly.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include "trialstat/status.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/stats/segment.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::stats {

/// @brief Mergeable statistics of one tensor (or part of one).
struct moments {
  int64_t count = 0;           ///< all elements seen, non-finite included
  int64_t nan_count = 0;
  int64_t pos_inf_count = 0;
  int64_t neg_inf_count = 0;
  int64_t zero_count = 0;      ///< exact zeros, −0.0 included
  int64_t positive_count = 0;  ///< finite x > 0
  int64_t negative_count = 0;  ///< finite x < 0
  double min = std::numeric_limits<double>::infinity();    ///< over finite values
  double max = -std::numeric_limits<double>::infinity();   ///< over finite values
  double sum = 0.0;            ///< Σx over finite values
  double sum_abs = 0.0;        ///< Σ|x| (l1) over finite values
  double sum_squares = 0.0;    ///< Σx² over finite values
  double max_abs = 0.0;        ///< max|x| (linf) over finite values
  double mean = 0.0;           ///< mean of finite values (0 when none)
  double m2 = 0.0;             ///< Σ(x − mean)² over finite values (stable merge)

  [[nodiscard]] int64_t finite_count() const noexcept {
    return count - nan_count - pos_inf_count - neg_inf_count;
  }
  [[nodiscard]] bool has_finite() const noexcept { return finite_count() > 0; }
  /// @brief Population variance (ddof 0) of finite values; NaN when there are none.
  [[nodiscard]] double variance() const noexcept {
    return has_finite() ? m2 / static_cast<double>(finite_count())
                        : std::numeric_limits<double>::quiet_NaN();
  }
  [[nodiscard]] double std_dev() const noexcept { return std::sqrt(variance()); }
  /// @brief √Σx² over finite values.
  [[nodiscard]] double l2() const noexcept { return std::sqrt(sum_squares); }
  /// @brief Σ|x| / finite count; NaN when there are no finite values.
  [[nodiscard]] double mean_abs() const noexcept {
    return has_finite() ? sum_abs / static_cast<double>(finite_count())
                        : std::numeric_limits<double>::quiet_NaN();
  }
};

/// @brief Combine the records of two disjoint parts of one tensor. Counts add exactly; mean and
/// m2 use Chan's parallel update. Deterministic for a fixed merge order.
[[nodiscard]] moments merge(const moments& a, const moments& b) noexcept;

/// @brief Statistics of every segment of a batch buffer.
/// @param base      batch buffer (host memory for backend::cpu; pinned host or device for cuda)
/// @param segments  [num_segments] tensors in the buffer
/// @param out       [num_segments] written in full (poisoned entries are overwritten)
/// @param which     backend::cpu parallelises over segments and within large ones (OpenMP)
/// @return ok; invalid_argument when sizes differ or backend::cuda is not available;
///   unsupported_dtype for a string or complex segment (named by index).
/// Float outputs agree with a long-double reference within 1e-12 relative to the scale
/// (Σ|x| for sums and means, max(variance, mean²) for variance). Deterministic on the CPU.
[[nodiscard]] status compute_moments(const std::byte* base, std::span<const segment> segments,
                                     std::span<moments> out, backend which = backend::cpu);

/// @brief Convenience for one host tensor. Errors as above.
[[nodiscard]] result<moments> compute_moments(const tensor_view& tensor);

}  // namespace trialstat::stats
