// SPDX-License-Identifier: Apache-2.0
// Internal helpers shared by the built-in rules: tensor selection, default-worker record
// picking, saved-reduction lookup, numpy-like statistics from a moments record, findings.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trialstat/plan/read_plan.hpp"
#include "trialstat/stats/statistics_record.hpp"
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
  /// `assign(ids)`, and ask `plan` for `request` on each of them (a rule's usual `prepare`).
  void request(std::vector<trial::tensor_id> ids, const stats::statistics_request& request,
               plan::read_plan& plan);
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
void pick_records(const trial::catalog& trial, const stats::step_statistics& step,
                  const tensor_set& selected, bool all_workers,
                  std::vector<const stats::statistics_record*>& out);

/// Records grouped by worker, for rules that combine several tensors of one step: with
/// `all_workers` one group per worker (in `picked` order, i.e. worker name order within each
/// tensor), else one group holding every record of `picked`. `groups` is cleared first.
void group_by_worker(std::span<const stats::statistics_record* const> picked, bool all_workers,
                     std::vector<std::vector<const stats::statistics_record*>>& groups);

/// The label and prediction tensors of a classification rule (Confusion, ClassImbalance) and
/// each step's records of them, paired by worker.
class label_prediction_pairs {
 public:
  using record_list = std::vector<const stats::statistics_record*>;
  using sides = std::map<trial::worker_id, std::pair<record_list, record_list>>;

  /// Keep both tensor sets (sorted by name) and request in `plan` what the rules read: the raw
  /// values (`keep_values`) and the moments (the largest class seen).
  void request(std::vector<trial::tensor_id> labels, std::vector<trial::tensor_id> predictions,
               plan::read_plan& plan);

  /// This step's records as (labels, predictions) per worker: one entry per worker with
  /// `all_workers`, else one entry (worker 0) with smdebug's default worker's records
  /// (`pick_records`). With `labels_win`, a tensor on both sides is a label tensor only. Valid
  /// until the next call.
  const sides& pair(const trial::catalog& trial, const stats::step_statistics& step,
                    bool all_workers, bool labels_win);

 private:
  tensor_set labels_;
  tensor_set predictions_;
  record_list label_records_;
  record_list prediction_records_;
  sides sides_;
};

/// Key of per-(tensor, worker) state; the worker part is 0 unless `per_worker`.
[[nodiscard]] inline uint64_t state_key(trial::tensor_id tensor, trial::worker_id worker,
                                        bool per_worker) noexcept {
  return (static_cast<uint64_t>(tensor) << 32) | (per_worker ? worker : 0u);
}

/// Loss tensors of the loss rules without a loss selection of their own: `regexes` when given;
/// else the `losses` collection when it exists and has tensors; else every tensor (sorted by
/// name). A bad regex → invalid_argument naming the rule.
[[nodiscard]] result<std::vector<trial::tensor_id>> select_loss_tensors(
    std::string_view rule, const trial::catalog& trial, std::span<const std::string> regexes);

/// The record's values as float64, appended to `out` (false when the record has none or they
/// cannot be converted).
bool append_values(const stats::statistics_record& record, std::vector<double>& out);

/// The values of `records`, concatenated in order, as float64 in `out` (cleared first); false
/// when a record has no usable values.
bool concat_values(std::span<const stats::statistics_record* const> records,
                   std::vector<double>& out);

/// Largest finite element over the records' moments (nullopt when none has a finite element).
[[nodiscard]] std::optional<double> finite_max(
    std::span<const stats::statistics_record* const> records) noexcept;

/// A saved reduction's value in the record, if it was read.
[[nodiscard]] std::optional<double> saved_reduction(const stats::statistics_record& record,
                                                    trial::reduction_op op, bool abs) noexcept;

/// numpy mean(|x|) from a moments record: NaN when any element is NaN or the tensor is empty,
/// +Inf when any element is ±Inf, else Σ|x| / count.
[[nodiscard]] double numpy_mean_abs(const stats::moments& m) noexcept;

/// Compact number formatting for messages ("3.1e-09", "0.25", "inf", "nan").
[[nodiscard]] std::string format_number(double value);

/// A finding for `record` (tensor and worker named from the catalog).
[[nodiscard]] finding make_finding(std::string_view rule, const trial::catalog& trial,
                                   const stats::statistics_record& record, double value,
                                   std::string message);

/// Index of `params` in the merged request of `tensor` (−1 when absent).
[[nodiscard]] int find_allclose_index(const plan::read_plan& merged, trial::tensor_id tensor,
                                      const stats::allclose_params& params);
/// Index of a predicate of kind `what` (and bounds, for intervals) in the merged request.
[[nodiscard]] int find_axis0_index(const plan::read_plan& merged, trial::tensor_id tensor,
                                   const stats::axis0_predicate& predicate);

}  // namespace trialstat::rules::detail
