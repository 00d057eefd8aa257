// SPDX-License-Identifier: Apache-2.0
/// @file statistics_request.hpp
/// @brief What the statistics stage computes for one tensor (DESIGN.md stage 5): the union of
/// every rule's needs for that tensor. The read plan (plan/read_plan.hpp) maps tensors to
/// requests; the executors (stats/statistics_executor.hpp) fulfil them into statistics records
/// (stats/statistics_record.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/stats/pairwise.hpp"

namespace trialstat::stats {

/// @brief Statistics wanted for one tensor at every saved step (and every worker).
struct statistics_request {
  bool moments = true;                 ///< the fused moments record (raw tensor needed)
  int histogram_bins = 0;              ///< > 0: a histogram with this many bins
  /// The fixed log-scale histogram (stats/log_histogram.hpp: the same 1548 bins for every
  /// tensor and step, NaN/±Inf/out-of-range counted beside the bins). Record:
  /// `statistics_record::log_histogram`. `trialstat stats --log-hist`.
  bool log_histogram = false;
  /// > 0: pairwise statistics against each of the last `history_depth` saved steps of the same
  /// tensor and worker (the pipeline keeps that many previous copies).
  int history_depth = 0;
  std::vector<allclose_params> allclose;   ///< parameter sets for pairwise violations
  std::vector<axis0_predicate> axis0;      ///< per-node counts wanted
  bool saved_reductions = false;       ///< read the saved reduction records too
  /// Percentiles wanted, in percent (numpy 'linear', stats/order_statistics.hpp): sorted,
  /// unique; NaN entries are dropped. Record: `statistics_record::percentiles`.
  std::vector<double> percentiles;
  /// count(x == v) wanted for each v (stats/value_counts.hpp): sorted, unique, NaN dropped; at
  /// most stats::max_counted_values per tensor. Record: `statistics_record::equal_counts`.
  std::vector<double> equal_values;
  /// Per-channel sums wanted along each axis (Python-style, −1 = last; stats/channel_sums.hpp):
  /// sorted, unique as given (−1 and rank − 1 are distinct entries; both give the same record).
  /// Record: `statistics_record::channel_sums`, for the axes valid for the tensor's rank.
  std::vector<int64_t> channel_axes;
  /// Hand the decoded element bytes to the rules (`statistics_record::values()`, valid during
  /// the step callback only), for rules that combine the raw values of several tensors at one
  /// step (Confusion, ClassImbalance) or compare them with another trial (SimilarAcrossRuns).
  bool keep_values = false;
  /// Hand the decoded string values of a string tensor (FORMAT §4: DT_STRING, or dtype 0 with
  /// string_val) to the rules, as `statistics_record::strings` (owned copies, kept with the
  /// record), for rules that read string tensors (TreeDepth: trees/ID, trees/Yes, trees/No).
  /// The raw record is decoded; a string tensor still gets no numeric statistics (its
  /// `raw_status` says unsupported_dtype). Numeric tensors get no strings.
  bool keep_strings = false;
  /// Deliver `statistics_record::wall_time` (Event.wall_time) even when nothing else needs the
  /// record decoded: the raw tensor's record, or, when only reductions were saved, the first saved
  /// reduction's record is read and decoded for its wall time alone (no statistics), for rules
  /// that time the steps (StalledTrainingRule). Records that are decoded anyway always carry it.
  bool wall_time = false;

  /// @brief Sort and deduplicate the lists in place (a single rule may repeat an entry), as
  /// `merge` keeps them; NaN percentiles and values are dropped.
  void normalise();

  /// @brief Union with another request (OR of flags, max of sizes, set union of lists).
  void merge(const statistics_request& other);

  /// @brief Whether anything requested needs the raw tensor decoded (moments, histogram,
  /// log-scale histogram, history, axis-0 counts, percentiles, equality counts, channel sums,
  /// kept values or kept strings).
  [[nodiscard]] bool needs_raw() const noexcept {
    return moments || histogram_bins > 0 || log_histogram || history_depth > 0 || !axis0.empty() ||
           !percentiles.empty() || !equal_values.empty() || !channel_axes.empty() || keep_values ||
           keep_strings;
  }
};

}  // namespace trialstat::stats
