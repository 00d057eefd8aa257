// SPDX-License-Identifier: Apache-2.0
/// @file statistics_record.hpp
/// @brief The statistics stage's output for one (tensor, global step, worker) — what rules,
/// reports and bindings consume (DESIGN.md stage 5 → 6).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "trialstat/dtype.hpp"
#include "trialstat/mode.hpp"
#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/stats/channel_sums.hpp"
#include "trialstat/stats/histogram.hpp"
#include "trialstat/stats/log_histogram.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/pairwise.hpp"
#include "trialstat/tensor_view.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::stats {

/// @brief Pairwise statistics against one earlier saved step of the same tensor and worker.
struct previous_comparison {
  int64_t previous_step = 0;                 ///< global step p < step
  bool shape_matches = true;                 ///< false: shapes differ, `result` is empty
  stats::pairwise result;                    ///< with the first allclose parameter set
  std::vector<int64_t> allclose_violations;  ///< one per requested allclose parameter set
};

/// @brief A saved reduction's value (smdebug `reduction_value` of a saved record).
struct reduction_value {
  trial::reduction_op op = trial::reduction_op::min;
  bool abs = false;
  double value = 0.0;
  dtype type = dtype::float32;
};

/// @brief One requested percentile of a tensor (numpy 'linear'; NaN when the tensor holds NaN or
/// is empty — stats/order_statistics.hpp).
struct percentile_value {
  double q = 0.0;      ///< percent, as requested
  double value = 0.0;
};

/// @brief count(x == value) of a tensor (stats/value_counts.hpp).
struct equal_count {
  double value = 0.0;
  int64_t count = 0;
};

/// @brief A record of the trial that could not be read or decoded, and why.
struct record_problem {
  trial::record_location location;
  status reason;
};

/// @brief Everything computed for one (tensor, step, worker).
struct statistics_record {
  trial::tensor_id tensor = 0;
  trial::worker_id worker = 0;
  int64_t step = 0;                     ///< global step
  trialstat::mode mode = trialstat::mode::global;
  int64_t mode_step = 0;
  /// Event.wall_time (seconds since the epoch) of the raw tensor's record, or — with
  /// `statistics_request::wall_time` for an entry that saved reductions only — of its first saved
  /// reduction's record; absent when no such record was read or it could not be decoded.
  std::optional<double> wall_time;

  /// ok, or why the raw tensor could not be used (not saved, corrupt record, unsupported dtype):
  /// such a record costs only itself; `moments` etc. are then absent.
  status raw_status;
  dtype type = dtype::invalid;
  std::vector<int64_t> shape;
  int64_t num_elements = 0;

  std::optional<stats::moments> moments;
  std::optional<stats::histogram> histogram;
  /// `statistics_request::log_histogram`: counts over the fixed 1548 log-scale bins
  /// (stats/log_histogram.hpp; `counts` has log_histogram_bins entries), NaN, ±Inf and finite
  /// values beyond ±9.92e19 counted beside the bins. Absent when not requested or when the raw
  /// tensor is unusable (`raw_status`). Identical on every backend.
  std::optional<stats::log_histogram> log_histogram;
  std::optional<double> scalar;                      ///< the value when num_elements == 1
  std::vector<previous_comparison> previous;         ///< most recent previous step first
  std::vector<stats::axis0_counts> axis0;            ///< parallel to the request's predicates
  std::vector<reduction_value> saved_reductions;     ///< when requested
  /// Requested saved-reduction records that could not be read (their values are then absent
  /// from `saved_reductions`): where each is, and why.
  std::vector<record_problem> reduction_problems;
  /// One per requested percentile, in the merged request's (ascending) order.
  std::vector<percentile_value> percentiles;
  /// One per requested value, in the merged request's (ascending) order.
  std::vector<equal_count> equal_counts;
  /// One per requested axis valid for this tensor's rank (`axis` normalised to [0, rank)).
  std::vector<stats::channel_sums> channel_sums;
  /// `statistics_request::keep_strings`: the string_val items of a string tensor, in order
  /// (byte strings, any content; FORMAT §4). Empty when not requested, for a numeric tensor, for
  /// an empty string tensor, or when the record is unreadable (`raw_status`).
  std::vector<std::string> strings;
  /// `keep_values`: the decoded elements (host memory, little-endian `type`, `num_elements`,
  /// C order, any alignment). Valid only during the step callback; null when not requested or
  /// when the raw tensor is unusable (`raw_status`).
  const std::byte* values_data = nullptr;

  /// @brief The kept values as a view (`data` null when there are none; shape = `shape`).
  [[nodiscard]] tensor_view values() const noexcept {
    return tensor_view{values_data, type, shape, num_elements, memory_kind::host};
  }
  /// @brief The requested percentile `q`, if computed for this record.
  [[nodiscard]] std::optional<double> percentile(double q) const noexcept {
    for (const auto& p : percentiles) {
      if (p.q == q) return p.value;
    }
    return std::nullopt;
  }
  /// @brief count(x == value), if computed for this record.
  [[nodiscard]] std::optional<int64_t> equal_count_of(double value) const noexcept {
    for (const auto& e : equal_counts) {
      if (e.value == value) return e.count;
    }
    return std::nullopt;
  }
  /// @brief The channel sums along `axis` (Python-style), if computed for this record.
  [[nodiscard]] const stats::channel_sums* channel_sums_along(int64_t axis) const noexcept {
    const auto rank = static_cast<int64_t>(shape.size());
    const int64_t normalised = axis < 0 ? axis + rank : axis;
    for (const auto& c : channel_sums) {
      if (c.axis == normalised) return &c;
    }
    return nullptr;
  }
};

/// @brief All records of one saved global step (every worker), in (worker, tensor) order.
struct step_statistics {
  int64_t step = 0;
  trialstat::mode mode = trialstat::mode::global;
  int64_t mode_step = 0;
  std::span<const statistics_record> records;
};

}  // namespace trialstat::stats
