// SPDX-License-Identifier: Apache-2.0
// SaturatedActivation — spec/RULES.md §3.17.
#include <algorithm>
#include <cctype>
#include <string>

#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "SaturatedActivation";

enum class activation { none, tanh, sigmoid };

activation kind_of(std::string_view tensor_name) {
  std::string lower(tensor_name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.find("tanh") != std::string::npos) return activation::tanh;
  if (lower.find("sigmoid") != std::string::npos) return activation::sigmoid;
  return activation::none;
}

class saturated_activation final : public rule {
 public:
  explicit saturated_activation(const saturated_activation_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    auto ids = detail::select_tensors(rule_name, trial, params_.collection_names,
                                      params_.tensor_regex, false);
    if (!ids) return ids.error_status();
    std::vector<trial::tensor_id> judged;
    predicates_.clear();
    for (const auto t : *ids) {
      const activation kind = kind_of(trial.tensor_names()[t]);
      if (kind == activation::none) continue;
      const stats::axis0_predicate p = predicate_for(kind);
      stats::statistics_request request;
      request.moments = false;
      request.axis0 = {p};
      plan.request(t, request);
      judged.push_back(t);
    }
    selected_.assign(std::move(judged));
    for (const auto t : selected_.ids()) predicates_.push_back(predicate_for(kind_of(trial.tensor_names()[t])));
    axis0_index_.assign(selected_.size(), -1);
    return status::success();
  }

  void plan_ready(const plan::read_plan& merged) override {
    for (std::size_t i = 0; i < selected_.size(); ++i) {
      axis0_index_[i] = detail::find_axis0_index(merged, selected_.ids()[i], predicates_[i]);
    }
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      const std::size_t rank = selected_.rank(record->tensor);
      // Without plan_ready: ours is the only interval predicate the record can hold unless
      // another rule asked for one too, so take the last interval entry.
      int index = axis0_index_[rank];
      if (index < 0) index = static_cast<int>(record->axis0.size()) - 1;
      if (index < 0 || static_cast<std::size_t>(index) >= record->axis0.size()) continue;
      const stats::axis0_counts& counts = record->axis0[static_cast<std::size_t>(index)];
      if (counts.batch <= 0 || counts.per_node.empty()) continue;
      int64_t saturated = 0;
      for (const int64_t in_range : counts.per_node) {
        const double activity =
            100.0 * static_cast<double>(in_range) / static_cast<double>(counts.batch);
        if (activity < params_.threshold_inactivity) ++saturated;
      }
      const auto nodes = static_cast<int64_t>(counts.per_node.size());
      const double percent = 100.0 * static_cast<double>(saturated) / static_cast<double>(nodes);
      if (percent > params_.threshold_layer) {
        const stats::axis0_predicate& p = predicates_[rank];
        findings.push_back(detail::make_finding(
            rule_name, trial, *record, percent,
            fmt::format("saturated nodes = {}% ({} of {}, inside ({}, {}) in < {}% of batch {}) "
                        "> threshold_layer {}%",
                        detail::format_number(percent), saturated, nodes,
                        detail::format_number(p.lo), detail::format_number(p.hi),
                        detail::format_number(params_.threshold_inactivity), counts.batch,
                        detail::format_number(params_.threshold_layer))));
      }
    }
  }

 private:
  stats::axis0_predicate predicate_for(activation kind) const {
    const bool tanh = kind == activation::tanh;
    return {stats::axis0_predicate::kind::open_interval,
            tanh ? params_.threshold_tanh_min : params_.threshold_sigmoid_min,
            tanh ? params_.threshold_tanh_max : params_.threshold_sigmoid_max};
  }

  saturated_activation_params params_;
  detail::tensor_set selected_;
  std::vector<stats::axis0_predicate> predicates_;  // by rank in selected_
  std::vector<int> axis0_index_;                    // by rank in selected_
  std::vector<const stats::statistics_record*> picked_;
};

/// The older tuple form "(lo, hi)" (brackets optional) of threshold_tanh / threshold_sigmoid.
void read_bounds(parameter_reader& reader, std::string_view key, double& lo, double& hi) {
  std::optional<std::string> text;
  reader.read(key, text);
  if (!text) return;
  std::string inner = *text;
  const auto first = inner.find_first_not_of(" \t([");
  const auto last = inner.find_last_not_of(" \t)]");
  inner = first == std::string::npos ? std::string() : inner.substr(first, last - first + 1);
  const auto items = parse_list_parameter(inner);
  std::optional<double> a, b;
  if (items.size() == 2) {
    a = parse_float_parameter(items[0]);
    b = parse_float_parameter(items[1]);
  }
  reader.require(a && b && *a < *b, key,
                 fmt::format("expects \"(min, max)\" with min < max, got '{}'", *text));
  if (a && b) {
    lo = *a;
    hi = *b;
  }
}

}  // namespace

std::unique_ptr<rule> make_saturated_activation(const saturated_activation_params& p) {
  return std::make_unique<saturated_activation>(p);
}

result<saturated_activation_params> parse_saturated_activation_params(
    const rule_parameters& params) {
  saturated_activation_params p;
  parameter_reader reader(rule_name, params);
  reader.read("collection_names", p.collection_names);
  reader.read("tensor_regex", p.tensor_regex);
  reader.read("threshold_tanh_min", p.threshold_tanh_min);
  reader.read("threshold_tanh_max", p.threshold_tanh_max);
  reader.read("threshold_sigmoid_min", p.threshold_sigmoid_min);
  reader.read("threshold_sigmoid_max", p.threshold_sigmoid_max);
  read_bounds(reader, "threshold_tanh", p.threshold_tanh_min, p.threshold_tanh_max);
  read_bounds(reader, "threshold_sigmoid", p.threshold_sigmoid_min, p.threshold_sigmoid_max);
  reader.read("threshold_inactivity", p.threshold_inactivity);
  reader.read("threshold_layer", p.threshold_layer);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
