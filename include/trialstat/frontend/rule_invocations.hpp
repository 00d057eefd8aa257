// SPDX-License-Identifier: Apache-2.0
/// @file rule_invocations.hpp
/// @brief Rules from names and parameters, as the CLI (`--rule/--param`, `--config`), the C API
/// (`trialstat_rule_spec`, a rule-config document) and Python (`evaluate(rules=...)`) give them,
/// and the default rule list — one definition for all three front ends.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/rules/rule_config.hpp"

namespace trialstat::frontend {

/// @brief The rules run when a user names none (`trialstat rules|watch|report` without
/// --rule/--config, C API none, Python `default_rules()`): every built-in rule that needs no
/// parameter, in this order: VanishingGradient, ExplodingTensor, WeightUpdateRatio,
/// LossNotDecreasing, DeadRelu. (The others need a tensor selection or a second trial.)
[[nodiscard]] std::span<const std::string> default_rule_names() noexcept;

/// @brief default_rule_names() as rule-config entries: configuration name = rule name, no
/// parameters (smdebug's defaults), no actions.
[[nodiscard]] std::vector<rules::rule_config_entry> default_rule_configs();

/// @brief Build one rule by name (rules::make_rule, which also accepts the SDK alias).
/// Never fails: a rule that cannot be built (unknown name, bad parameter) keeps its error in
/// `rule_invocation::error`, so its status becomes Error without stopping the other rules.
/// @param configuration_name SageMaker `RuleConfigurationName`; empty: the rule name
/// @param rule_name          `rule_to_invoke`
/// @param parameters         `RuleParameters` without `rule_to_invoke`, as strings
[[nodiscard]] pipeline::rule_invocation make_rule_invocation(std::string_view configuration_name,
                                                             std::string_view rule_name,
                                                             const rules::rule_parameters& parameters);

/// @brief make_rule_invocation of each entry, in order (its `actions` are not part of an
/// invocation: the live watcher keeps them beside it).
[[nodiscard]] std::vector<pipeline::rule_invocation> make_rule_invocations(
    std::span<const rules::rule_config_entry> entries);

}  // namespace trialstat::frontend
