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
  /// > 0: pairwise statistics against each of the last `history_depth` saved steps of the same
  /// tensor and worker (the pipeline keeps that many previous copies).
  int history_depth = 0;
  std::vector<stats::allclose_params> allclose;   ///< parameter sets for pairwise violations
  std::vector<stats::axis0_predicate> axis0;      ///< per-node counts wanted
  bool saved_reductions = false;       ///< read the saved reduction records too

  /// @brief Union with another request (OR of flags, max of sizes, set union of lists).
  void merge(const tensor_request& other);
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

 private:
  std::map<trial::tensor_id, tensor_request> requests_;
};

}  // namespace trialstat::plan
