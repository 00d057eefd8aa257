// SPDX-License-Identifier: Apache-2.0
// FeatureImportanceOverweight — spec/RULES.md §3.20.
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"
#include "trialstat/stats/order_statistics.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "FeatureImportanceOverweight";

class feature_importance_overweight final : public rule {
 public:
  explicit feature_importance_overweight(const feature_importance_overweight_params& p)
      : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    const std::string regexes[] = {params_.tensor_regex};
    auto ids = detail::select_tensors(rule_name, trial, {}, regexes, false);
    if (!ids) return ids.error_status();
    stats::statistics_request request;
    request.moments = true;  // the record's `scalar`
    selected_.request(std::move(*ids), request, plan);
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    detail::group_by_worker(picked_, params_.evaluate_all_workers, groups_);
    for (const auto& group : groups_) {
      scores_.clear();
      const stats::statistics_record* top = nullptr;
      for (const stats::statistics_record* record : group) {
        if (!record->scalar) continue;
        scores_.push_back(*record->scalar);
        if (top == nullptr || *record->scalar > *top->scalar) top = record;
      }
      if (top == nullptr) continue;
      const std::vector<int64_t> shape{static_cast<int64_t>(scores_.size())};
      const tensor_view view{reinterpret_cast<const std::byte*>(scores_.data()), dtype::float64,
                             shape, shape[0], memory_kind::host};
      const auto sums = stats::compute_top_k_sum(view, params_.nfeatures);
      if (!sums) continue;
      // share = top / (top + rest), rest = Σ of the other n − k scores (the top-(n − k) sum of
      // the negated scores): k ≥ n gives exactly 1, and the share never exceeds 1 by rounding
      // (issue 16: the total summed in another order gave 1.0000000000000004).
      const auto rest = rest_sum(view.num_elements - sums->k);
      if (!rest) continue;
      const double total = sums->top_sum + *rest;
      const double ratio = sums->top_sum / total;
      if (ratio > params_.threshold) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *top, ratio,
            fmt::format("the {} most important of {} features hold {} of the total importance "
                        "{} > threshold {}",
                        sums->k, scores_.size(), detail::format_number(ratio),
                        detail::format_number(total),
                        detail::format_number(params_.threshold))));
      }
    }
  }

 private:
  /// Σ of the `count` smallest scores.
  std::optional<double> rest_sum(int64_t count) {
    if (count <= 0) return 0.0;
    negated_.resize(scores_.size());
    for (std::size_t i = 0; i < scores_.size(); ++i) negated_[i] = -scores_[i];
    const std::vector<int64_t> shape{static_cast<int64_t>(negated_.size())};
    const tensor_view view{reinterpret_cast<const std::byte*>(negated_.data()), dtype::float64,
                           shape, shape[0], memory_kind::host};
    const auto sums = stats::compute_top_k_sum(view, count);
    if (!sums) return std::nullopt;
    return -sums->top_sum;
  }

  feature_importance_overweight_params params_;
  detail::tensor_set selected_;
  std::vector<const stats::statistics_record*> picked_;
  std::vector<std::vector<const stats::statistics_record*>> groups_;
  std::vector<double> scores_;
  std::vector<double> negated_;
};

}  // namespace

std::unique_ptr<rule> make_feature_importance_overweight(
    const feature_importance_overweight_params& p) {
  return std::make_unique<feature_importance_overweight>(p);
}

result<feature_importance_overweight_params> parse_feature_importance_overweight_params(
    const rule_parameters& params) {
  feature_importance_overweight_params p;
  parameter_reader reader(rule_name, params);
  reader.read("threshold", p.threshold);
  reader.read("nfeatures", p.nfeatures);
  reader.read("tensor_regex", p.tensor_regex);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  reader.require(p.nfeatures >= 1, "nfeatures",
                 fmt::format("must be at least 1, got {}", p.nfeatures));
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
