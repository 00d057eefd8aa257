// SPDX-License-Identifier: Apache-2.0
/// @file class_counts.hpp
/// @brief Counting integer class labels: a bincount of one tensor, and the 2-D count matrix of
/// (label, prediction) pairs of two tensors — whose diagonal gives the per-class hits and whose
/// row sums give the label bincount — for Confusion and ClassImbalance (spec/RULES.md §3.10,
/// §3.12, §4 "bincount of ints, per-class hits, argmax over last axis, 2-D pair counts").
///
/// Class of a value x (after float64 conversion): c = trunc(x) (toward zero, as numpy's
/// `astype(int)`); when x is NaN or ±Inf, or c < 0, or c ≥ num_classes, x belongs to the extra
/// "other" class with index num_classes. Counts are exact and identical on every backend.
#pragma once

#include <cstdint>
#include <vector>

#include "trialstat/status.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::stats {

/// @brief Largest `num_classes` accepted by `compute_bincount`.
inline constexpr int64_t max_bincount_classes = int64_t{1} << 24;
/// @brief Largest `num_classes` accepted by `compute_confusion` ((k + 1)² counters).
inline constexpr int64_t max_confusion_classes = 4096;

/// @brief counts[c] = #{x : class(x) = c} for c < num_classes; counts[num_classes] = the rest
/// (NaN, ±Inf, negative, ≥ num_classes).
struct class_histogram {
  int64_t num_classes = 0;
  std::vector<int64_t> counts;  ///< [num_classes + 1]
};

/// @brief numpy.bincount(x.astype(int), minlength=num_classes)[:num_classes] plus the "other"
/// count. @param num_classes in [1, max_bincount_classes]
/// @return the histogram; errors: invalid_argument (num_classes out of range, null data with
///   elements, backend unavailable); unsupported_dtype; out_of_memory; cuda_error/cuda_fatal.
///   Synchronous; exact.
[[nodiscard]] result<class_histogram> compute_bincount(const tensor_view& tensor,
                                                       int64_t num_classes,
                                                       backend which = backend::cpu);

/// @brief How a predictions tensor gives one predicted class per label.
enum class prediction_kind : uint8_t {
  class_values,      ///< element i is the class of label i (same element count as the labels)
  argmax_last_axis,  ///< scores [..., C]: row i's class is numpy.argmax over the last axis
                     ///< (first maximal index; a NaN score counts as maximal, as in numpy)
};

/// @brief counts[(num_classes + 1)·label + prediction] over pairs i = 0..n−1 (row = label class,
/// column = predicted class; index num_classes = "other" on either side).
struct confusion_counts {
  int64_t num_classes = 0;
  std::vector<int64_t> counts;  ///< [(num_classes + 1)²], row-major (label, prediction)

  /// @brief C[label][prediction] (each in [0, num_classes]).
  [[nodiscard]] int64_t at(int64_t label, int64_t prediction) const noexcept {
    return counts[static_cast<std::size_t>(label * (num_classes + 1) + prediction)];
  }
};

/// @brief Pair counts of labels (flattened) with predictions.
/// @param labels       any real dtype, n elements (shape ignored: flattened)
/// @param predictions  class_values: n elements (flattened); argmax_last_axis: rank ≥ 1 with
///                     last extent C ≥ 1 and num_elements / C = n rows
/// @param num_classes  in [1, max_confusion_classes]
/// @return the matrix; errors: invalid_argument (element/row counts differ, C = 0, num_classes out
///   of range, null data with elements, backend unavailable); unsupported_dtype; out_of_memory;
///   cuda_error/cuda_fatal. Synchronous; exact.
/// Source: spec/RULES.md §3.10 ("C[label][pred] += 1"), §3.12 (argmax).
[[nodiscard]] result<confusion_counts> compute_confusion(const tensor_view& labels,
                                                         const tensor_view& predictions,
                                                         int64_t num_classes,
                                                         prediction_kind kind,
                                                         backend which = backend::cpu);

}  // namespace trialstat::stats
