// SPDX-License-Identifier: Apache-2.0
/// @file rule_config.hpp
/// @brief Rule configurations in the SageMaker shape (`DebugRuleConfigurations` of
/// CreateTrainingJob): a JSON list of
/// `{"RuleConfigurationName": "...", "RuleParameters": {"rule_to_invoke": "VanishingGradient",
///   "threshold": "1e-6", ...}}`.
/// Also accepted: a single such object, and `{"DebugRuleConfigurations": [...]}`. Other keys of
/// an entry (RuleEvaluatorImage, InstanceType, ...) are ignored.
/// Source: spec/RULES.md §1 ("SageMaker invocation").
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/rules/rule.hpp"
#include "trialstat/status.hpp"

namespace trialstat::rules {

/// @brief One configured rule.
struct rule_config_entry {
  std::string configuration_name;  ///< `RuleConfigurationName`; the rule name when absent
  std::string rule_name;           ///< `RuleParameters.rule_to_invoke`
  rule_parameters parameters;      ///< every other `RuleParameters` key, as strings
};

/// @brief Parse a rule configuration document.
/// Parameter values should be strings (SageMaker's type); numbers are converted to their JSON
/// text ("1e-06", "10"), booleans to "True"/"False", null to "None", and a list of strings to a
/// comma list.
/// @param json_text   the document
/// @param source_name names the document in messages (e.g. the file path)
/// @return the entries in document order; errors: data_loss for malformed JSON (naming the
///   source and the byte offset); invalid_argument for a wrong shape — naming the entry index:
///   an entry that is not an object, no `RuleParameters` object, no string `rule_to_invoke`, a
///   parameter value that is an object or a list of non-strings.
[[nodiscard]] result<std::vector<rule_config_entry>> parse_rule_config(
    std::string_view json_text, std::string_view source_name = "<rule config>");

/// @brief Read and parse a rule configuration file. Errors: io_error / not_found when the file
/// cannot be read, otherwise as `parse_rule_config` (messages name the file).
[[nodiscard]] result<std::vector<rule_config_entry>> load_rule_config(
    const std::filesystem::path& file);

}  // namespace trialstat::rules
