// SPDX-License-Identifier: Apache-2.0
// Rule statuses and the registry of built-in rules (spec/RULES.md §1, §3).
#include "trialstat/rules/rule.hpp"

#include <algorithm>
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

// spec/RULES.md §3 order (rulesconfig list order), then trialstat's own rules.
constexpr std::array<builtin, 21> builtins = {{
    {"VanishingGradient", "vanishing_gradient",
     &build<vanishing_gradient_params, parse_vanishing_gradient_params, make_vanishing_gradient>},
    {"SimilarAcrossRuns", "similar_across_runs",
     &build<similar_across_runs_params, parse_similar_across_runs_params,
            make_similar_across_runs>},
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
    {"CheckInputImages", "check_input_images",
     &build<check_input_images_params, parse_check_input_images_params,
            make_check_input_images>},
    {"DeadRelu", "dead_relu", &build<dead_relu_params, parse_dead_relu_params, make_dead_relu>},
    {"Confusion", "confusion", &build<confusion_params, parse_confusion_params, make_confusion>},
    {"TreeDepth", "tree_depth", &build<tree_depth_params, parse_tree_depth_params, make_tree_depth>},
    {"ClassImbalance", "class_imbalance",
     &build<class_imbalance_params, parse_class_imbalance_params, make_class_imbalance>},
    {"Overfit", "overfit", &build<overfit_params, parse_overfit_params, make_overfit>},
    {"TensorVariance", "tensor_variance",
     &build<tensor_variance_params, parse_tensor_variance_params, make_tensor_variance>},
    {"Overtraining", "overtraining",
     &build<overtraining_params, parse_overtraining_params, make_overtraining>},
    {"PoorWeightInitialization", "poor_weight_initialization",
     &build<poor_weight_initialization_params, parse_poor_weight_initialization_params,
            make_poor_weight_initialization>},
    {"SaturatedActivation", "saturated_activation",
     &build<saturated_activation_params, parse_saturated_activation_params,
            make_saturated_activation>},
    {"NLPSequenceRatio", "nlp_sequence_ratio",
     &build<nlp_sequence_ratio_params, parse_nlp_sequence_ratio_params, make_nlp_sequence_ratio>},
    {"StalledTrainingRule", "stalled_training_rule",
     &build<stalled_training_rule_params, parse_stalled_training_rule_params,
            make_stalled_training_rule>},
    {"FeatureImportanceOverweight", "feature_importance_overweight",
     &build<feature_importance_overweight_params, parse_feature_importance_overweight_params,
            make_feature_importance_overweight>},
    {"ReplicaConsistency", "replica_consistency",
     &build<replica_consistency_params, parse_replica_consistency_params,
            make_replica_consistency>},
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

namespace {
thread_local std::vector<std::string> prepare_warnings;  // see take_prepare_warnings
}  // namespace

void note_prepare_warning(std::string message) {
  if (std::find(prepare_warnings.begin(), prepare_warnings.end(), message) == prepare_warnings.end()) {
    prepare_warnings.push_back(std::move(message));
  }
}

std::vector<std::string> take_prepare_warnings() {
  std::vector<std::string> out;
  out.swap(prepare_warnings);
  return out;
}

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
