// SPDX-License-Identifier: Apache-2.0
// PoorWeightInitialization — spec/RULES.md §3.16.
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "PoorWeightInitialization";
constexpr double p_low = 5.0;
constexpr double p_high = 95.0;

/// Consecutive non-decreasing saves of one loss (per mode).
struct loss_trend {
  std::optional<double> previous;
  int64_t not_decreasing = 0;
};

class poor_weight_initialization final : public rule {
 public:
  explicit poor_weight_initialization(const poor_weight_initialization_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    auto activations = detail::select_tensors(rule_name, trial, {},
                                              params_.activation_inputs_regex, false);
    if (!activations) return activations.error_status();
    std::vector<trial::tensor_id> gradients;
    if (trial.find_collection("gradients") != nullptr) {
      const std::string names[] = {"gradients"};
      auto ids = detail::select_tensors(rule_name, trial, names, {}, false);
      if (!ids) return ids.error_status();
      gradients = std::move(*ids);
    }
    std::vector<trial::tensor_id> losses;
    if (trial.find_collection("losses") != nullptr) {
      const std::string names[] = {"losses"};
      auto ids = detail::select_tensors(rule_name, trial, names, {}, false);
      if (!ids) return ids.error_status();
      losses = std::move(*ids);
    }
    stats::statistics_request variance;  // moments give the variance and a loss's scalar
    for (const auto t : *activations) plan.request(t, variance);
    for (const auto t : losses) plan.request(t, variance);
    stats::statistics_request spread;  // with moments (see nlp_sequence_ratio.cpp)
    spread.percentiles = {p_low, p_high};
    for (const auto t : gradients) plan.request(t, spread);
    activations_.assign(std::move(*activations));
    gradients_.assign(std::move(gradients));
    losses_.assign(std::move(losses));
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    if (steps_seen_ >= params_.steps) return;
    ++steps_seen_;
    check_variance_ratio(trial, step, findings);
    check_gradient_spread(trial, step, findings);
    check_loss(trial, step, findings);
  }

 private:
  /// (a) max/min variance of the activation inputs at the step.
  void check_variance_ratio(const trial::catalog& trial, const stats::step_statistics& step,
                            std::vector<finding>& findings) {
    detail::pick_records(trial, step, activations_, params_.evaluate_all_workers, picked_);
    detail::group_by_worker(picked_, params_.evaluate_all_workers, groups_);
    for (const auto& group : groups_) {
      const stats::statistics_record* largest = nullptr;
      const stats::statistics_record* smallest = nullptr;
      int64_t judged = 0;
      for (const stats::statistics_record* r : group) {
        if (!r->moments || !r->moments->has_finite()) continue;
        ++judged;
        if (largest == nullptr || r->moments->variance() > largest->moments->variance()) largest = r;
        if (smallest == nullptr || r->moments->variance() < smallest->moments->variance()) smallest = r;
      }
      if (judged < 2) continue;
      const double hi = largest->moments->variance();
      const double lo = smallest->moments->variance();
      if (hi == 0.0) continue;  // every layer constant: no ratio
      const double ratio = lo == 0.0 ? std::numeric_limits<double>::infinity() : hi / lo;
      if (ratio > params_.threshold) {
        const auto names = trial.tensor_names();
        findings.push_back(detail::make_finding(
            rule_name, trial, *largest, ratio,
            fmt::format("activation-input variance ratio {} (largest {} / smallest {} of {}) > "
                        "threshold {}",
                        detail::format_number(ratio), detail::format_number(hi),
                        detail::format_number(lo), names[smallest->tensor],
                        detail::format_number(params_.threshold))));
      }
    }
  }

  /// (b) the narrowest 5th–95th percentile spread of the gradients.
  void check_gradient_spread(const trial::catalog& trial, const stats::step_statistics& step,
                             std::vector<finding>& findings) {
    detail::pick_records(trial, step, gradients_, params_.evaluate_all_workers, picked_);
    detail::group_by_worker(picked_, params_.evaluate_all_workers, groups_);
    for (const auto& group : groups_) {
      const stats::statistics_record* narrowest = nullptr;
      double best = 0.0;
      for (const stats::statistics_record* r : group) {
        const auto lo = r->percentile(p_low);
        const auto hi = r->percentile(p_high);
        if (!lo || !hi) continue;
        const double range = *hi - *lo;
        if (std::isnan(range)) continue;
        if (narrowest == nullptr || range < best) {
          narrowest = r;
          best = range;
        }
      }
      if (narrowest != nullptr && best < params_.distribution_range) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *narrowest, best,
            fmt::format("gradient 95th - 5th percentile = {} < distribution_range {}",
                        detail::format_number(best),
                        detail::format_number(params_.distribution_range))));
      }
    }
  }

  /// (c) a loss that did not decrease for `patience` consecutive saved steps.
  void check_loss(const trial::catalog& trial, const stats::step_statistics& step,
                  std::vector<finding>& findings) {
    detail::pick_records(trial, step, losses_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* r : picked_) {
      if (!r->scalar) continue;
      const uint64_t key = detail::state_key(r->tensor, r->worker, params_.evaluate_all_workers);
      loss_trend& trend = trends_[{key, r->mode}];
      if (trend.previous) {
        trend.not_decreasing = *r->scalar >= *trend.previous ? trend.not_decreasing + 1 : 0;
      }
      trend.previous = *r->scalar;
      if (trend.not_decreasing >= params_.patience) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *r, static_cast<double>(trend.not_decreasing),
            fmt::format("loss did not decrease for {} consecutive saved steps (patience {})",
                        trend.not_decreasing, params_.patience)));
      }
    }
  }

  poor_weight_initialization_params params_;
  detail::tensor_set activations_;
  detail::tensor_set gradients_;
  detail::tensor_set losses_;
  int64_t steps_seen_ = 0;
  std::map<std::pair<uint64_t, trialstat::mode>, loss_trend> trends_;
  std::vector<const stats::statistics_record*> picked_;
  std::vector<std::vector<const stats::statistics_record*>> groups_;
};

}  // namespace

std::unique_ptr<rule> make_poor_weight_initialization(const poor_weight_initialization_params& p) {
  return std::make_unique<poor_weight_initialization>(p);
}

result<poor_weight_initialization_params> parse_poor_weight_initialization_params(
    const rule_parameters& params) {
  poor_weight_initialization_params p;
  parameter_reader reader(rule_name, params);
  reader.read("activation_inputs_regex", p.activation_inputs_regex);
  reader.read("threshold", p.threshold);
  reader.read("distribution_range", p.distribution_range);
  reader.read("patience", p.patience);
  reader.read("steps", p.steps);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  reader.require(p.patience >= 1, "patience", fmt::format("must be at least 1, got {}", p.patience));
  reader.require(p.steps >= 0, "steps", fmt::format("must not be negative, got {}", p.steps));
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
