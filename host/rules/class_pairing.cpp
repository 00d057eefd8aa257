// SPDX-License-Identifier: Apache-2.0
// Pairing labels with predictions for Confusion and ClassImbalance (issue 16).
#include "host/rules/class_pairing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "host/rules/rule_support.hpp"

namespace trialstat::rules::detail {
namespace {

using record_span = std::span<const stats::statistics_record* const>;

/// "'labels' [60]" (several tensors joined by ", ").
std::string describe(const trial::catalog& trial, record_span records) {
  std::string out;
  for (const stats::statistics_record* r : records) {
    if (!out.empty()) out += ", ";
    out += fmt::format("'{}' [{}]", trial.tensor_names()[r->tensor], fmt::join(r->shape, ", "));
  }
  return out;
}

/// The common last extent of the records (0 when they differ or one has no axis, or when
/// `min_rank` is not met).
int64_t common_last_extent(record_span records, std::size_t min_rank) {
  int64_t width = 0;
  for (const stats::statistics_record* r : records) {
    if (r->shape.size() < std::max<std::size_t>(min_rank, 1)) return 0;
    const int64_t w = r->shape.back();
    if (width != 0 && w != width) return 0;
    width = w;
  }
  return width;
}

bool is_floating(dtype t) noexcept {
  return t == dtype::float16 || t == dtype::bfloat16 || t == dtype::float32 || t == dtype::float64;
}

/// Floating values within [0, 1] that are not all whole numbers (NaN ignored).
bool look_like_probabilities(record_span records, const std::vector<double>& values) {
  if (!std::all_of(records.begin(), records.end(), [](const auto* r) { return is_floating(r->type); })) {
    return false;
  }
  bool fractional = false;
  for (const double v : values) {
    if (std::isnan(v)) continue;
    if (v < 0.0 || v > 1.0) return false;
    if (v != std::trunc(v)) fractional = true;
  }
  return fractional;
}

double finite_max_of(const std::vector<double>& values) noexcept {
  double best = std::numeric_limits<double>::quiet_NaN();
  for (const double v : values) {
    if (std::isfinite(v) && !(v <= best)) best = v;
  }
  return best;
}

}  // namespace

result<stats::confusion_counts> class_pairs::count(int64_t num_classes) const {
  const auto n = static_cast<int64_t>(labels.size());
  const std::vector<int64_t> label_shape{n};
  const std::vector<int64_t> prediction_shape =
      width > 0 ? std::vector<int64_t>{n, width} : std::vector<int64_t>{n};
  const tensor_view l{reinterpret_cast<const std::byte*>(labels.data()), dtype::float64,
                      label_shape, n, memory_kind::host};
  const tensor_view p{reinterpret_cast<const std::byte*>(predictions.data()), dtype::float64,
                      prediction_shape, static_cast<int64_t>(predictions.size()),
                      memory_kind::host};
  return stats::compute_confusion(
      l, p, num_classes,
      width > 0 ? stats::prediction_kind::argmax_last_axis : stats::prediction_kind::class_values);
}

const class_pairs* class_pairing::pair(const trial::catalog& trial, record_span labels,
                                       record_span predictions) {
  if (!error_.ok() || labels.empty() || predictions.empty()) return nullptr;
  if (!concat_values(labels, pairs_.labels) || !concat_values(predictions, pairs_.predictions) ||
      pairs_.labels.empty()) {
    return nullptr;
  }
  const auto n = static_cast<int64_t>(pairs_.labels.size());
  const auto m = static_cast<int64_t>(pairs_.predictions.size());
  const int64_t step = labels.front()->step;
  const auto fail = [&](const std::string& why) {
    error_ = status(error_code::invalid_argument,
                    fmt::format("labels {} and predictions {} do not pair at step {}: {}",
                                describe(trial, labels), describe(trial, predictions), step, why));
    return nullptr;
  };
  pairs_.width = 0;
  if (options_.argmax) {
    const int64_t width = common_last_extent(predictions, 1);
    if (width < 1) return fail("the argmax needs prediction tensors with one last extent (classes)");
    if (m != n * width) {
      return fail(fmt::format("the argmax over the last axis ({}) gives {} predicted classes for "
                              "{} labels",
                              width, m / width, n));
    }
    pairs_.width = width;
  } else if (m != n) {
    const int64_t width = common_last_extent(predictions, 2);
    if (width < 2 || m != n * width) {
      return fail(fmt::format("{} prediction values for {} labels; expected one class or "
                              "probability per label, or scores [{}, C] (argmax over C)",
                              m, n, n));
    }
    pairs_.width = width;
    if (!warned_argmax_) {
      warned_argmax_ = true;
      warnings_.push_back(fmt::format(
          "predictions {} with labels {}: took the argmax over the last axis ({} classes) as the "
          "predicted class (from step {})",
          describe(trial, predictions), describe(trial, labels), width, step));
    }
  }
  const double label_max = finite_max_of(pairs_.labels);
  if (pairs_.width > 0) {
    pairs_.largest_class = std::isnan(label_max)
                               ? static_cast<double>(pairs_.width - 1)
                               : std::max(label_max, static_cast<double>(pairs_.width - 1));
    return &pairs_;
  }
  if (options_.threshold) {
    for (double& p : pairs_.predictions) {
      if (!std::isnan(p)) p = p > *options_.threshold ? 1.0 : 0.0;
    }
  } else if (!warned_probabilities_ && look_like_probabilities(predictions, pairs_.predictions)) {
    warned_probabilities_ = true;
    warnings_.push_back(fmt::format(
        "predictions {} look like probabilities (floating values within [0, 1], not all whole "
        "numbers) and are cast to int, so every value below 1 is class 0 (from step {}); set "
        "prediction_threshold (e.g. 0.5) to read them as binary probabilities",
        describe(trial, predictions), step));
  }
  const double prediction_max = finite_max_of(pairs_.predictions);
  pairs_.largest_class = std::isnan(label_max) ? prediction_max
                         : std::isnan(prediction_max) ? label_max
                                                      : std::max(label_max, prediction_max);
  return &pairs_;
}

std::vector<std::string> class_pairing::take_warnings() {
  std::vector<std::string> out;
  out.swap(warnings_);
  return out;
}

}  // namespace trialstat::rules::detail
