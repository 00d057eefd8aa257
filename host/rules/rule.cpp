// SPDX-License-Identifier: Apache-2.0
// Rule statuses and the registry of built-in rules (spec/RULES.md §1, §3).
#include "trialstat/rules/rule.hpp"

#include <array>
#include <functional>

#include <fmt/format.h>

#include "trialstat/rules/builtin_rules.hpp"

namespace trialstat::rules {
namespace {

using factory = result<std::unique_ptr<rule>> (*)(const rule_parameters&);

template <typename Params, result<Params> (*Parse)(const rule_parameters&),
          std::unique_ptr<rule> (*Make)(const Params&)>
result<std::unique_ptr<rule>> build(const rule_parameters& params) {
  auto parsed = Parse(params);
  if (!parsed) return parsed.error_status();
  return Make(*parsed);
}

struct builtin {
  std::string_view name;        ///< smdebug class name (`rule_to_invoke`)
  std::string_view alias;       ///< the SageMaker SDK function name
  factory make;                 ///< null: in spec/RULES.md but not implemented
};

// spec/RULES.md §3 order (rulesconfig list order).
constexpr std::array<builtin, 20> builtins = {{
    {"VanishingGradient", "vanishing_gradient",
     &build<vanishing_gradient_params, parse_vanishing_gradient_params, make_vanishing_gradient>},
    {"SimilarAcrossRuns", "similar_across_runs", nullptr},
    {"WeightUpdateRatio", "weight_update_ratio",
     &build<weight_update_ratio_params, parse_weight_update_ratio_params,
            make_weight_update_ratio>},
    {"AllZero", "all_zero", &build<all_zero_params, parse_all_zero_params, make_all_zero>},
    {"ExplodingTensor", "exploding_tensor",
     &build<exploding_tensor_params, parse_exploding_tensor_params, make_exploding_tensor>},
    {"UnchangedTensor", "unchanged_tensor",
     &build<unchanged_tensor_params, parse_unchanged_tensor_params, make_unchanged_tensor>},
    {"LossNotDecreasing", "loss_not_decreasing",
     &build<loss_not_decreasing_params, parse_loss_not_decreasing_params,
            make_loss_not_decreasing>},
    {"CheckInputImages", "check_input_images", nullptr},
    {"DeadRelu", "dead_relu", &build<dead_relu_params, parse_dead_relu_params, make_dead_relu>},
    {"Confusion", "confusion", nullptr},
    {"TreeDepth", "tree_depth", nullptr},
    {"ClassImbalance", "class_imbalance", nullptr},
    {"Overfit", "overfit", nullptr},
    {"TensorVariance", "tensor_variance",
     &build<tensor_variance_params, parse_tensor_variance_params, make_tensor_variance>},
    {"Overtraining", "overtraining", nullptr},
    {"PoorWeightInitialization", "poor_weight_initialization", nullptr},
    {"SaturatedActivation", "saturated_activation", nullptr},
    {"NLPSequenceRatio", "nlp_sequence_ratio", nullptr},
    {"StalledTrainingRule", "stalled_training_rule", nullptr},
    {"FeatureImportanceOverweight", "feature_importance_overweight", nullptr},
}};

std::string implemented_list() {
  std::string out;
  for (const auto& b : builtins) {
    if (b.make == nullptr) continue;
    if (!out.empty()) out += ", ";
    out += b.name;
  }
  return out;
}

}  // namespace

std::string_view rule_status_name(rule_status s) noexcept {
  switch (s) {
    case rule_status::in_progress: return "InProgress";
    case rule_status::no_issues_found: return "NoIssuesFound";
    case rule_status::issues_found: return "IssuesFound";
    case rule_status::error: return "Error";
  }
  return "Error";
}

result<std::unique_ptr<rule>> make_rule(std::string_view name, const rule_parameters& params) {
  for (const auto& b : builtins) {
    if (name != b.name && name != b.alias) continue;
    if (b.make == nullptr) {
      return status(error_code::not_found,
                    fmt::format("built-in rule '{}' is not implemented by trialstat (implemented: "
                                "{})",
                                b.name, implemented_list()));
    }
    return b.make(params);
  }
  return status(error_code::not_found, fmt::format("unknown rule '{}' (built-in rules: {})", name,
                                                   implemented_list()));
}

std::vector<std::string> builtin_rule_names() {
  std::vector<std::string> names;
  for (const auto& b : builtins) {
    if (b.make != nullptr) names.emplace_back(b.name);
  }
  return names;
}

}  // namespace trialstat::rules
