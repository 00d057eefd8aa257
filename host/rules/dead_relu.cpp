// SPDX-License-Identifier: Apache-2.0
// DeadRelu — spec/RULES.md §3.9.
#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "DeadRelu";

class dead_relu final : public rule {
 public:
  explicit dead_relu(const dead_relu_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    auto ids = detail::select_tensors(rule_name, trial, {}, params_.tensor_regex, false);
    if (!ids) return ids.error_status();
    stats::statistics_request request;
    request.moments = false;
    request.axis0 = {positive_};
    selected_.request(std::move(*ids), request, plan);
    axis0_index_.assign(selected_.size(), -1);
    return status::success();
  }

  void plan_ready(const plan::read_plan& merged) override {
    for (std::size_t i = 0; i < selected_.size(); ++i) {
      axis0_index_[i] = detail::find_axis0_index(merged, selected_.ids()[i], positive_);
    }
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      // Without plan_ready: the read plan sorts positive-count predicates first (read_plan.cpp),
      // so ours is at index 0.
      const int bound = axis0_index_[selected_.rank(record->tensor)];
      const std::size_t index = bound >= 0 ? static_cast<std::size_t>(bound) : 0;
      if (index >= record->axis0.size()) continue;
      const stats::axis0_counts& counts = record->axis0[index];
      if (counts.batch <= 0 || counts.per_node.empty()) continue;
      int64_t dead = 0;
      for (const int64_t active : counts.per_node) {
        const double activity =
            100.0 * static_cast<double>(active) / static_cast<double>(counts.batch);
        if (activity < params_.threshold_inactivity) ++dead;
      }
      const auto nodes = static_cast<int64_t>(counts.per_node.size());
      const double percent = 100.0 * static_cast<double>(dead) / static_cast<double>(nodes);
      if (percent > params_.threshold_layer) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *record, percent,
            fmt::format("dead nodes = {}% ({} of {}, active in < {}% of batch {}) > "
                        "threshold_layer {}%",
                        detail::format_number(percent), dead, nodes,
                        detail::format_number(params_.threshold_inactivity), counts.batch,
                        detail::format_number(params_.threshold_layer))));
      }
    }
  }

 private:
  static constexpr stats::axis0_predicate positive_{stats::axis0_predicate::kind::positive, 0.0,
                                                     0.0};
  dead_relu_params params_;
  detail::tensor_set selected_;
  std::vector<int> axis0_index_;  // by rank in selected_
  std::vector<const stats::statistics_record*> picked_;
};

}  // namespace

std::unique_ptr<rule> make_dead_relu(const dead_relu_params& p) {
  return std::make_unique<dead_relu>(p);
}

result<dead_relu_params> parse_dead_relu_params(const rule_parameters& params) {
  dead_relu_params p;
  parameter_reader reader(rule_name, params);
  reader.read("tensor_regex", p.tensor_regex);
  reader.read("threshold_inactivity", p.threshold_inactivity);
  reader.read("threshold_layer", p.threshold_layer);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
