// SPDX-License-Identifier: Apache-2.0
// Internal helpers shared by the built-in rules: tensor selection, default-worker record
// picking, saved-reduction lookup, numpy-like statistics from a moments record, findings.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/plan/read_plan.hpp"
#include "trialstat/plan/statistics_record.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::rules::detail {

/// invalid_argument with smdebug's InsufficientInformationForRuleInvocation text:
/// "Insufficient information to invoke rule <rule>: <message>".
[[nodiscard]] status insufficient_information(std::string_view rule, std::string_view message);

/// The selected tensors of a rule, with each tensor's rank in name order (for stable output).
class tensor_set {
 public:
  /// `ids` sorted by name (as catalog::select returns them).
  void assign(std::vector<trial::tensor_id> ids);
  [[nodiscard]] bool contains(trial::tensor_id t) const noexcept {
    return t < rank_.size() && rank_[t] >= 0;
  }
  /// Position in name order; only for contained tensors.
  [[nodiscard]] std::size_t rank(trial::tensor_id t) const noexcept {
    return static_cast<std::size_t>(rank_[t]);
  }
  [[nodiscard]] std::span<const trial::tensor_id> ids() const noexcept { return ids_; }
  [[nodiscard]] std::size_t size() const noexcept { return ids_.size(); }

 private:
  std::vector<trial::tensor_id> ids_;
  std::vector<int64_t> rank_;  // by tensor id; −1 = not selected
};

/// Resolve collection_names ∪ tensor_regex against the catalog (sorted by name). With both
/// lists empty: every tensor when `all_when_empty`, else none. A bad regex → invalid_argument
/// naming the rule.
[[nodiscard]] result<std::vector<trial::tensor_id>> select_tensors(
    std::string_view rule, const trial::catalog& trial, std::span<const std::string> collections,
    std::span<const std::string> regexes, bool all_when_empty);

/// The records of `step` to evaluate, in (tensor name, worker name) order: for each selected
/// tensor, the record of the lexicographically smallest worker that has one (smdebug's default
/// worker), or every worker's record when `all_workers`. `out` is cleared first.
void pick_records(const trial::catalog& trial, const plan::step_statistics& step,
                  const tensor_set& selected, bool all_workers,
                  std::vector<const plan::statistics_record*>& out);

/// A saved reduction's value in the record, if it was read.
[[nodiscard]] std::optional<double> saved_reduction(const plan::statistics_record& record,
                                                    trial::reduction_op op, bool abs) noexcept;

/// numpy mean(|x|) from a moments record: NaN when any element is NaN or the tensor is empty,
/// +Inf when any element is ±Inf, else Σ|x| / count.
[[nodiscard]] double numpy_mean_abs(const stats::moments& m) noexcept;

/// Compact number formatting for messages ("3.1e-09", "0.25", "inf", "nan").
[[nodiscard]] std::string format_number(double value);

/// A finding for `record` (tensor and worker named from the catalog).
[[nodiscard]] finding make_finding(std::string_view rule, const trial::catalog& trial,
                                   const plan::statistics_record& record, double value,
                                   std::string message);

/// Index of `params` in the merged request of `tensor` (−1 when absent).
[[nodiscard]] int find_allclose_index(const plan::read_plan& merged, trial::tensor_id tensor,
                                      const stats::allclose_params& params);
/// Index of a predicate of kind `what` (and bounds, for intervals) in the merged request.
[[nodiscard]] int find_axis0_index(const plan::read_plan& merged, trial::tensor_id tensor,
                                   const stats::axis0_predicate& predicate);

}  // namespace trialstat::rules::detail
