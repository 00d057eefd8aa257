// SPDX-License-Identifier: Apache-2.0
/// @file rule_runner.hpp
/// @brief Evaluate several rules over one trial with a single pass over its event files: the
/// rules' needs are merged into one read plan, and every rule sees every step's records.
/// Status mapping: spec/RULES.md §1 [prop].
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::pipeline {

/// @brief One rule to evaluate, with the name its configuration gave it.
struct rule_invocation {
  std::string configuration_name;       ///< SageMaker `RuleConfigurationName` (or the rule name)
  std::unique_ptr<rules::rule> rule;    ///< null when the rule could not be built (see `error`)
  status error;                         ///< why it could not be built (status Error)
};

/// @brief Outcome of one rule over the trial.
struct rule_result {
  std::string configuration_name;
  std::string rule_name;
  rules::rule_status status = rules::rule_status::no_issues_found;
  std::string status_details;           ///< the error message for Error
  std::vector<rules::finding> findings;
};

/// @brief Evaluate every rule: prepare (a failing prepare → Error for that rule only), merge the
/// plans, run the statistics pipeline once, feed each step to every prepared rule, finish.
/// Status: IssuesFound when a rule produced findings, else NoIssuesFound; Error when it could
/// not be built or prepared. Errors returned: only failures of the whole run.
[[nodiscard]] result<std::vector<rule_result>> evaluate_rules(const trial::catalog& trial,
                                                              std::vector<rule_invocation>& rules,
                                                              const pipeline_options& options);

}  // namespace trialstat::pipeline
