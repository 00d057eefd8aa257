// SPDX-License-Identifier: Apache-2.0
/// @file result_comparison.hpp
/// @brief Field-by-field comparison of two implementations' statistics, at the tolerances each
/// statistic's header promises: the one definition `trialstat selftest` (selftest.hpp) and the
/// verified batches of a CUDA run (issue 25; statistics_pipeline.hpp, `verify_device`) share.
///
/// Tolerances:
///  - integers (counts, histogram cells, per-node counts, equality counts) exactly;
///  - floats a statistic promises exactly on every backend — min, max and histogram edges bit
///    for bit (signed zeros included, `exact`), max|x|, max|a−b|, percentiles and one-element
///    scalars by value (−0.0 == +0.0, `value`);
///  - every other float within `device_relative_tolerance` of its scale (`near`): 2 × the 1e-12
///    each header states against a long-double reference (moments.hpp: Σx, Σ|x| and the mean
///    relative to Σ|x|, Σx² to itself, the variance to max(variance, mean²); pairwise.hpp;
///    channel_sums.hpp: each channel's Σ|x|). A non-finite value must be the same non-finite
///    value; NaN equals NaN whatever its payload.
/// With `exact_floats` (two CPU SIMD levels, which are bit-identical by construction) every
/// float is compared bit for bit.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/stats/channel_sums.hpp"
#include "trialstat/stats/histogram.hpp"
#include "trialstat/stats/log_histogram.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/pairwise.hpp"
#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/status.hpp"

namespace trialstat::stats {

/// @brief Relative tolerance of the floats that are not exact: twice the 1e-12 each public
/// header promises against a long-double reference (both implementations within it, so within
/// 2e-12 of each other).
inline constexpr double device_relative_tolerance = 2e-12;

/// @brief What one comparison found.
struct comparison_outcome {
  bool passed = true;
  /// Largest |compared − reference| over the integer outputs (0 when they agree).
  int64_t max_count_difference = 0;
  /// Largest |compared − reference| / scale over the float outputs: the tolerance's scale for
  /// toleranced floats, max(|a|, |b|) for exact ones; +Inf for NaN against a number or two
  /// different infinities; 0 when bit-identical.
  double max_relative_difference = 0.0;
  /// The first difference beyond its tolerance ("<where>: <field>: <compared name> <value> vs
  /// <reference name> <value> (relative difference r)"), or the error a side returned; empty
  /// when passed.
  std::string mismatch;
};

/// @brief The name of a compared field, formatted only when it is reported: `name`,
/// `name[index]` (index >= 0), `name number` (a percentile's q, a counted value) or
/// `name suffix`.
struct field_name {
  std::string_view name;
  int64_t index = -1;
  std::optional<double> number;
  std::string_view suffix;
  field_name(const char* n) : name(n) {}  // NOLINT(google-explicit-constructor): a plain name
  field_name(std::string_view n) : name(n) {}  // NOLINT(google-explicit-constructor)
  field_name(std::string_view n, std::size_t i) : name(n), index(static_cast<int64_t>(i)) {}
  field_name(std::string_view n, double v) : name(n), number(v) {}
  field_name(std::string_view n, std::string_view s) : name(n), suffix(s) {}
  [[nodiscard]] std::string text() const;
};

/// @brief Accumulates comparisons into a `comparison_outcome` (kept by reference). Cheap when
/// the sides agree: nothing is formatted until a difference is reported.
class result_comparer {
 public:
  /// @param reference_name, compared_name  how the two sides are named in `mismatch`
  ///   (e.g. "cpu", "cuda")
  /// @param exact_floats  compare every float bit for bit
  result_comparer(comparison_outcome& outcome, std::string reference_name, std::string compared_name,
                  bool exact_floats = false);

  /// @brief Names what the next comparisons are about (the mismatch message's "<where>").
  void at(std::string where);
  [[nodiscard]] const std::string& where() const noexcept { return where_; }
  /// @brief Names the statistic the next comparisons are about ("<where>, <section>: field");
  /// a string with static storage (a literal). Empty: none.
  void section(std::string_view name) noexcept { section_ = name; }
  /// @brief Integers: equal.
  void count(const field_name& field, int64_t reference, int64_t compared);
  /// @brief Bit for bit (signed zeros included), or both NaN.
  void exact(const field_name& field, double reference, double compared);
  /// @brief Equal as values (−0.0 == +0.0) or both NaN; bit for bit with `exact_floats`.
  void value(const field_name& field, double reference, double compared);
  /// @brief Within device_relative_tolerance × |scale| (non-finite: the same value); bit for bit
  /// with `exact_floats`.
  void near(const field_name& field, double reference, double compared, double scale);
  /// @brief A side returned `failure`: the comparison fails with it ("<side>: <status>").
  void error(std::string_view side, const status& failure);

  [[nodiscard]] const comparison_outcome& outcome() const noexcept { return outcome_; }

 private:
  void note_float(const field_name& field, double reference, double compared, double scale, bool ok);
  void fail(const field_name& field, const std::string& values);

  comparison_outcome& outcome_;
  std::string reference_name_;
  std::string compared_name_;
  bool exact_floats_;
  std::string where_;
  std::string_view section_;
};

/// @brief One statistic of two implementations, field by field, at the tolerances above (the
/// file comment): counts exactly; moments' min/max bit for bit, max|x| by value, sums, mean and
/// variance within device_relative_tolerance of their scale (moments.hpp); histogram edges bit
/// for bit and cells exactly; log-histogram bins and side counts exactly; pairwise counts
/// exactly, max|a−b| by value, the sums of squares near (pairwise.hpp); axis-0 counts exactly.
/// Differences go into `c`'s outcome; nothing is returned or thrown.
void compare(result_comparer& c, const moments& reference, const moments& compared);
void compare(result_comparer& c, const histogram& reference, const histogram& compared);
void compare(result_comparer& c, const log_histogram& reference, const log_histogram& compared);
void compare(result_comparer& c, const pairwise& reference, const pairwise& compared);
void compare(result_comparer& c, const axis0_counts& reference, const axis0_counts& compared);
/// @param abs_sums  each channel's Σ|x| over its finite elements (the tolerance's scale); a
///   missing entry compares that channel's sum by value.
void compare(result_comparer& c, const channel_sums& reference, const channel_sums& compared,
             std::span<const double> abs_sums);
/// @brief Two lists of counts: the same length and the same entries ("<what>[i]").
void compare_counts(result_comparer& c, std::string_view what, std::span<const int64_t> reference,
                    std::span<const int64_t> compared);

/// @brief How `compare_records` treats what one side may lack.
struct record_comparison_options {
  /// The reference may have seen fewer earlier steps than the compared side (a reference
  /// executor started mid-run): compare only the `previous` entries whose `previous_step` the
  /// reference has too; otherwise the lists must match entry for entry.
  bool reference_history_may_be_shorter = false;
  /// Each channel's Σ|x| for the channel sums of `reference` (selftest computes them from the
  /// values); empty function: the tensor's Σ|x| (`moments.sum_abs`, a looser scale) when the
  /// record has moments, else the sums are compared by value.
  std::function<std::vector<double>(const channel_sums&)> channel_abs_sums;
};

/// @brief Everything two executors computed for the same (tensor, step, worker): which
/// statistics are present, moments, histograms, the one-element scalar, per-node counts,
/// pairwise comparisons with earlier steps, percentiles, equality counts and channel sums.
/// Identity fields, decoded fields (shape, saved reductions, strings, wall time) and `raw_status`
/// are compared too, as counts, since both sides read the same bytes.
void compare_records(result_comparer& c, const statistics_record& reference, const statistics_record& compared,
                     const record_comparison_options& options = {});

}  // namespace trialstat::stats
