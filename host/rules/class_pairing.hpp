// SPDX-License-Identifier: Apache-2.0
// Internal: how Confusion and ClassImbalance pair one step's label and prediction records into
// one (label, predicted class) pair per sample — or say why they cannot (issue 16: shapes that do
// not pair are an error naming both, never a silent skip), and warn where the reading is a guess
// (an argmax not asked for, probabilities cast to int).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/stats/class_counts.hpp"
#include "trialstat/status.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::rules::detail {

/// How predictions become one class per label.
struct class_pairing_options {
  /// ClassImbalance `argmax`: predictions are scores [..., C]; class = argmax over the last axis.
  bool argmax = false;
  /// `prediction_threshold` [ours]: predictions with one value per label are binary
  /// probabilities; class 1 when p > threshold, else 0 (NaN stays NaN: the "other" class).
  std::optional<double> threshold;
};

/// One step's labels and predictions, paired.
struct class_pairs {
  std::vector<double> labels;       ///< n label values (float64; several tensors concatenated)
  std::vector<double> predictions;  ///< n class values, or n × width scores (argmax)
  int64_t width = 0;                ///< C when the argmax is taken, else 0
  /// Largest finite label, or predicted class (C − 1 with the argmax); NaN when none is finite.
  double largest_class = 0.0;

  /// C[label][predicted class] over `num_classes` (see stats::compute_confusion).
  [[nodiscard]] result<stats::confusion_counts> count(int64_t num_classes) const;
};

/// Pairs label and prediction records step by step; keeps the first error and the warnings.
class class_pairing {
 public:
  explicit class_pairing(class_pairing_options options) : options_(options) {}

  /// This step's pairs; nullptr when the step is skipped (a side has no records or no usable
  /// values at this step) or once `error()` is set — which happens here when the two sides'
  /// shapes do not pair (invalid_argument naming both sides' tensors, shapes and the step).
  /// Predictions [N, C] with N labels take the argmax over C (a warning says so, once); floating
  /// predictions within [0, 1] that are not all whole numbers, cast to int without a threshold,
  /// give a warning (once). Valid until the next call.
  const class_pairs* pair(const trial::catalog& trial,
                          std::span<const stats::statistics_record* const> labels,
                          std::span<const stats::statistics_record* const> predictions);

  [[nodiscard]] const status& error() const noexcept { return error_; }
  /// The warnings not yet taken (each kind given once per rule).
  [[nodiscard]] std::vector<std::string> take_warnings();

 private:
  class_pairing_options options_;
  class_pairs pairs_;
  status error_ = status::success();
  std::vector<std::string> warnings_;
  bool warned_argmax_ = false;
  bool warned_probabilities_ = false;
};

}  // namespace trialstat::rules::detail
