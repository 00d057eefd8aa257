// SPDX-License-Identifier: Apache-2.0
// TreeDepth — spec/RULES.md §3.11.
#include <cmath>

#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "TreeDepth";
constexpr std::string_view node_tensor = "trees/Node";

class tree_depth final : public rule {
 public:
  explicit tree_depth(const tree_depth_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    std::vector<trial::tensor_id> ids;
    if (const auto t = trial.find_tensor(node_tensor)) ids.push_back(*t);
    plan::tensor_request request;
    request.moments = true;  // max of the node ids
    for (const auto t : ids) plan.request(t, request);
    selected_.assign(std::move(ids));
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const plan::step_statistics& step,
                     std::vector<finding>& findings) override {
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const plan::statistics_record* record : picked_) {
      if (!record->moments || !record->moments->has_finite()) continue;
      const double max_id = record->moments->max;
      // floor(log2(max id + 1)): a full tree of depth d numbered breadth-first has ids 0..2^(d+1)−2.
      const double depth = std::floor(std::log2(max_id + 1.0));
      if (depth > params_.depth) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *record, depth,
            fmt::format("tree depth floor(log2(max node id {} + 1)) = {} > depth {}",
                        detail::format_number(max_id), detail::format_number(depth),
                        detail::format_number(params_.depth))));
      }
    }
  }

 private:
  tree_depth_params params_;
  detail::tensor_set selected_;
  std::vector<const plan::statistics_record*> picked_;
};

}  // namespace

std::unique_ptr<rule> make_tree_depth(const tree_depth_params& p) {
  return std::make_unique<tree_depth>(p);
}

result<tree_depth_params> parse_tree_depth_params(const rule_parameters& params) {
  tree_depth_params p;
  parameter_reader reader(rule_name, params);
  reader.read("depth", p.depth);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
