// SPDX-License-Identifier: Apache-2.0
/// @file parameters.hpp
/// @brief Parsing SageMaker `RuleParameters` (a map of strings) into typed rule parameters.
///
/// Every value arrives as a string (spec/RULES.md §1 "SageMaker invocation", parsing [prop]):
///  - float: Python `float()` syntax — decimal or exponent form, optional sign, surrounding
///    whitespace, `inf`/`nan` (any case); nothing else (no hex, no trailing text);
///  - integer: decimal digits with an optional sign (Python `int()`; "10.0" is rejected);
///  - boolean: exactly `True`, `true`, `False` or `false` (after trimming whitespace);
///  - list of strings: comma-separated, whitespace around each element stripped, empty elements
///    dropped;
///  - mode: TRAIN, EVAL, PREDICT or GLOBAL, any case;
///  - an empty (or all-blank) value or `None` means "unset": the parameter keeps its default.
/// Source: spec/RULES.md §1.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/mode.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/status.hpp"

namespace trialstat::rules {

/// @brief True for "", all-blank text and "None" (after trimming): the value is unset.
[[nodiscard]] bool is_unset_parameter(std::string_view text) noexcept;

/// @brief Parse a float (see file comment). nullopt when the text is not one.
[[nodiscard]] std::optional<double> parse_float_parameter(std::string_view text) noexcept;
/// @brief Parse an integer (see file comment). nullopt when the text is not one.
[[nodiscard]] std::optional<int64_t> parse_integer_parameter(std::string_view text) noexcept;
/// @brief Parse `True`/`true`/`False`/`false`. nullopt otherwise.
[[nodiscard]] std::optional<bool> parse_bool_parameter(std::string_view text) noexcept;
/// @brief Split a comma list, trimming each element and dropping empty ones.
[[nodiscard]] std::vector<std::string> parse_list_parameter(std::string_view text);

/// @brief Reads one rule's parameters: each `read` call declares a parameter (its name, type and
/// the default already held by the output variable) and overwrites the output when the
/// parameter is present and set. `finish` then reports the first problem: an unparsable value,
/// a failed `require`, or a parameter nobody declared.
///
/// Example:
/// @code
///   parameter_reader reader("VanishingGradient", params);
///   double threshold = 1e-7;
///   reader.read("threshold", threshold);
///   TRIALSTAT_RETURN_IF_ERROR(reader.finish());
/// @endcode
///
/// `rule_to_invoke` is always accepted and ignored. Error messages name the rule, the parameter,
/// the expected type and the text received (invalid_argument).
class parameter_reader {
 public:
  parameter_reader(std::string_view rule_name, const rule_parameters& params);

  void read(std::string_view key, double& value);
  void read(std::string_view key, std::optional<double>& value);
  void read(std::string_view key, int64_t& value);
  void read(std::string_view key, std::optional<int64_t>& value);
  void read(std::string_view key, bool& value);
  void read(std::string_view key, std::string& value);
  void read(std::string_view key, std::optional<std::string>& value);
  void read(std::string_view key, std::vector<std::string>& value);
  void read(std::string_view key, std::optional<trialstat::mode>& value);

  /// @brief Record an error "<rule>: parameter '<key>' <message>" unless `condition` holds.
  void require(bool condition, std::string_view key, std::string_view message);

  /// @return ok; or invalid_argument for the first problem met.
  [[nodiscard]] status finish() const;

 private:
  /// The raw text of `key` when present and set; marks `key` as declared.
  const std::string* lookup(std::string_view key);
  void fail(std::string_view key, std::string_view expected, const std::string& text);

  std::string rule_name_;
  const rule_parameters& params_;
  std::set<std::string, std::less<>> declared_;
  status first_error_;
};

}  // namespace trialstat::rules
