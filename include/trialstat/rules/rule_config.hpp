// SPDX-License-Identifier: Apache-2.0
/// @file rule_config.hpp
/// @brief Rule configurations in the SageMaker shape (`DebugRuleConfigurations` of
/// CreateTrainingJob): a JSON list of
/// `{"RuleConfigurationName": "...", "RuleParameters": {"rule_to_invoke": "VanishingGradient",
///   "threshold": "1e-6", ...}}`.
/// Also accepted: a single such object, and `{"DebugRuleConfigurations": [...]}`. Other keys of
/// an entry (RuleEvaluatorImage, InstanceType, ...) are ignored.
///
/// Our addition (issue 4, used by `trialstat watch`): an optional per-entry `"Actions"` object,
/// what to do when that rule fires:
/// `"Actions": {"stop_signal_file": "stop_signal", "command": ["notify.sh", "--flag"],
///              "exit_status": 3}` — every key optional; `command` may also be one string, which
/// is then run with `/bin/sh -c` (a list runs without a shell).
/// Source: spec/RULES.md §1 ("SageMaker invocation").
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/rules/rule.hpp"
#include "trialstat/status.hpp"

namespace trialstat::rules {

/// @brief What to do when a rule fires (an entry's `"Actions"`; our addition, issue 4). Carried
/// out by `trialstat watch` (include/trialstat/actions/actions.hpp); `trialstat rules` ignores it.
struct rule_actions {
  /// `stop_signal_file`: write the current epoch seconds into this file (spec/RULES.md §1);
  /// relative paths are relative to the trial folder. "" = none.
  std::string stop_signal_file;
  /// `command` given as a JSON list: the program and its arguments, run without a shell (PATH is
  /// searched for the program). Empty = none.
  std::vector<std::string> command;
  /// `command` given as a JSON string: run with `/bin/sh -c`. "" = none.
  std::string shell_command;
  /// `exit_status`: stop watching and exit with this status, in [0, 255]. JSON integer or a
  /// string holding one (SageMaker's string style).
  std::optional<int> exit_status;

  [[nodiscard]] bool empty() const noexcept {
    return stop_signal_file.empty() && command.empty() && shell_command.empty() && !exit_status;
  }
};

/// @brief One configured rule.
struct rule_config_entry {
  std::string configuration_name;  ///< `RuleConfigurationName`; the rule name when absent
  std::string rule_name;           ///< `RuleParameters.rule_to_invoke`
  rule_parameters parameters;      ///< every other `RuleParameters` key, as strings
  rule_actions actions;            ///< `Actions` (additive, issue 4); empty when absent or null
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
///   parameter value that is an object or a list of non-strings; `Actions` that is not an object,
///   has an unknown key (named), an empty or non-string `stop_signal_file`, an empty `command` or
///   one with non-string elements, an `exit_status` that is not an integer in [0, 255].
[[nodiscard]] result<std::vector<rule_config_entry>> parse_rule_config(
    std::string_view json_text, std::string_view source_name = "<rule config>");

/// @brief Read and parse a rule configuration file. Errors: io_error / not_found when the file
/// cannot be read, otherwise as `parse_rule_config` (messages name the file).
[[nodiscard]] result<std::vector<rule_config_entry>> load_rule_config(
    const std::filesystem::path& file);

}  // namespace trialstat::rules
