// SPDX-License-Identifier: Apache-2.0
/// @file reference_rule_stats.hpp
/// @brief Naive references for the statistics the later built-in rules need (percentiles,
/// top-k sums, class counts, equality counts, per-channel sums), written independently of
/// kernels/: a full std::sort, plain loops, long-double sums.
#pragma once

#include <cstdint>
#include <vector>

namespace trialstat::reference {

/// @brief numpy.percentile(x, q) (linear), literally: sort (NaN → NaN result), virtual index
/// (n − 1)·(q/100), floor, above-bounds → last element with gamma = virtual + 1, `_lerp`.
/// Empty → NaN.
[[nodiscard]] double percentile_numpy(const std::vector<double>& values, double q_percent);

/// @brief percentile_numpy of values already sorted ascending (not sorted again, so the caller
/// decides where −0.0 and +0.0 sit; NaN → NaN result, empty → NaN).
[[nodiscard]] double percentile_numpy_sorted(const std::vector<double>& sorted, double q_percent);

/// @brief Σ of the k largest values (long double), Σ of all (long double), max; NaN → NaN.
struct top_k_ref {
  int64_t k = 0;
  long double top_sum = 0, total_sum = 0, top_abs = 0, total_abs = 0;
  double max = 0;
};
[[nodiscard]] top_k_ref top_k_sum_ref(const std::vector<double>& values, int64_t k);

/// @brief Class of x: trunc(x) if finite and in [0, k), else k.
[[nodiscard]] int64_t class_ref(double x, int64_t num_classes);

/// @brief counts[k + 1] of class_ref.
[[nodiscard]] std::vector<int64_t> bincount_ref(const std::vector<double>& values,
                                                int64_t num_classes);

/// @brief (k+1)² pair counts; `width` > 0: predictions are rows of `width` scores (argmax: first
/// maximal, or first NaN), else one class value per label.
[[nodiscard]] std::vector<int64_t> confusion_ref(const std::vector<double>& labels,
                                                 const std::vector<double>& predictions,
                                                 int64_t num_classes, int64_t width);

/// @brief #{x == v} per value.
[[nodiscard]] std::vector<int64_t> count_equal_ref(const std::vector<double>& values,
                                                   const std::vector<double>& targets);

/// @brief Per-channel totals of a [outer, channels, inner] tensor (long-double sums of finite
/// values and of their magnitudes for tolerances).
struct channel_ref {
  std::vector<long double> sum, sum_abs;
  std::vector<int64_t> count, nan_count, pos_inf_count, neg_inf_count;
};
[[nodiscard]] channel_ref channel_sums_ref(const std::vector<double>& values, int64_t outer,
                                           int64_t channels, int64_t inner);

}  // namespace trialstat::reference
