// SPDX-License-Identifier: Apache-2.0
/// @file read_plan.hpp
/// @brief What the statistics stage must compute, as the union of every rule's needs
/// (DESIGN.md stage 3). Each rule adds requests; requests for the same tensor merge.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/stats/pairwise.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::plan {

/// @brief Statistics wanted for one tensor at every saved step (and every worker).
struct tensor_request {
  bool moments = true;                 ///< the fused moments record (raw tensor needed)
  int histogram_bins = 0;              ///< > 0: a histogram with this many bins
  /// The fixed log-scale histogram (stats/log_histogram.hpp: the same 1548 bins for every
  /// tensor and step, NaN/±Inf/out-of-range counted beside the bins). Record:
  /// `statistics_record::log_histogram`. `trialstat stats --log-hist`.
  bool log_histogram = false;
  /// > 0: pairwise statistics against each of the last `history_depth` saved steps of the same
  /// tensor and worker (the pipeline keeps that many previous copies).
  int history_depth = 0;
  std::vector<stats::allclose_params> allclose;   ///< parameter sets for pairwise violations
  std::vector<stats::axis0_predicate> axis0;      ///< per-node counts wanted
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

  /// @brief Union with another request (OR of flags, max of sizes, set union of lists).
  void merge(const tensor_request& other);

  /// @brief Whether anything requested needs the raw tensor decoded (moments, histogram,
  /// log-scale histogram, history, axis-0 counts, percentiles, equality counts, channel sums or
  /// kept values).
  [[nodiscard]] bool needs_raw() const noexcept {
    return moments || histogram_bins > 0 || log_histogram || history_depth > 0 || !axis0.empty() ||
           !percentiles.empty() || !equal_values.empty() || !channel_axes.empty() || keep_values;
  }
};

/// @brief The merged needs of all rules (or of `trialstat stats`).
class read_plan {
 public:
  /// @brief Add a request for one tensor (merged with earlier ones).
  void request(trial::tensor_id tensor, const tensor_request& what);
  /// @brief The merged request for a tensor, or nullptr if nobody asked for it.
  [[nodiscard]] const tensor_request* find(trial::tensor_id tensor) const;
  [[nodiscard]] const std::map<trial::tensor_id, tensor_request>& requests() const noexcept {
    return requests_;
  }
  /// @brief Largest history depth over all requests.
  [[nodiscard]] int max_history_depth() const noexcept;

  /// Global step range [begin, end) to evaluate; unset = unbounded.
  std::optional<int64_t> step_begin;
  std::optional<int64_t> step_end;
  /// Workers whose files are read, sorted ascending (an MPI rank's share of the trial,
  /// host/distributed); empty = every worker. Records of other workers are not produced.
  std::vector<trial::worker_id> workers;

  /// @brief Whether `worker`'s records are produced (`workers` empty or listing it).
  [[nodiscard]] bool reads_worker(trial::worker_id worker) const noexcept;

 private:
  std::map<trial::tensor_id, tensor_request> requests_;
};

}  // namespace trialstat::plan
