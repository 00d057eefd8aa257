// SPDX-License-Identifier: Apache-2.0
// SageMaker RuleParameters (string map) → typed values; spec/RULES.md §1 parsing [prop].
#include "trialstat/rules/parameters.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

#include <fmt/format.h>

namespace trialstat::rules {
namespace {

std::string_view trim(std::string_view text) noexcept {
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

/// Python accepts one leading '+'; std::from_chars does not.
std::string_view strip_plus(std::string_view text) noexcept {
  if (text.size() > 1 && text.front() == '+' && text[1] != '-' && text[1] != '+') {
    text.remove_prefix(1);
  }
  return text;
}

}  // namespace

bool is_unset_parameter(std::string_view text) noexcept {
  const auto t = trim(text);
  return t.empty() || t == "None";
}

std::optional<double> parse_float_parameter(std::string_view text) noexcept {
  const auto t = strip_plus(trim(text));
  if (t.empty()) return std::nullopt;
  double value = 0.0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value,
                                         std::chars_format::general);
  // Out-of-range literals ("1e999") are floats in Python (inf); from_chars reports them.
  if (ec == std::errc::result_out_of_range && end == t.data() + t.size()) {
    return t.front() == '-' ? -std::numeric_limits<double>::infinity()
                            : std::numeric_limits<double>::infinity();
  }
  if (ec != std::errc{} || end != t.data() + t.size()) return std::nullopt;
  return value;
}

std::optional<int64_t> parse_integer_parameter(std::string_view text) noexcept {
  const auto t = strip_plus(trim(text));
  if (t.empty()) return std::nullopt;
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value, 10);
  if (ec != std::errc{} || end != t.data() + t.size()) return std::nullopt;
  return value;
}

std::optional<bool> parse_bool_parameter(std::string_view text) noexcept {
  const auto t = trim(text);
  if (t == "True" || t == "true") return true;
  if (t == "False" || t == "false") return false;
  return std::nullopt;
}

std::vector<std::string> parse_list_parameter(std::string_view text) {
  std::vector<std::string> out;
  while (true) {
    const auto comma = text.find(',');
    const auto element = trim(text.substr(0, comma));
    if (!element.empty()) out.emplace_back(element);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

parameter_reader::parameter_reader(std::string_view rule_name, const rule_parameters& params)
    : rule_name_(rule_name), params_(params) {
  declared_.emplace("rule_to_invoke");
}

const std::string* parameter_reader::lookup(std::string_view key) {
  declared_.emplace(key);
  const auto it = params_.find(std::string(key));
  if (it == params_.end() || is_unset_parameter(it->second)) return nullptr;
  return &it->second;
}

void parameter_reader::fail(std::string_view key, std::string_view expected,
                            const std::string& text) {
  if (!first_error_.ok()) return;
  first_error_ = status(error_code::invalid_argument,
                        fmt::format("{}: parameter '{}' expects {}, got '{}'", rule_name_, key,
                                    expected, text));
}

void parameter_reader::require(bool condition, std::string_view key, std::string_view message) {
  if (condition || !first_error_.ok()) return;
  first_error_ = status(error_code::invalid_argument,
                        fmt::format("{}: parameter '{}' {}", rule_name_, key, message));
}

void parameter_reader::read(std::string_view key, double& value) {
  std::optional<double> v = value;
  read(key, v);
  value = *v;
}

void parameter_reader::read(std::string_view key, std::optional<double>& value) {
  const std::string* text = lookup(key);
  if (text == nullptr) return;
  if (auto v = parse_float_parameter(*text)) {
    // NaN compares false with everything: a rule given one could never fire (issue 12).
    if (std::isnan(*v)) {
      fail(key, "a float that is a number (NaN makes every comparison false)", *text);
      return;
    }
    value = *v;
  } else {
    fail(key, "a float (e.g. 1e-07)", *text);
  }
}

void parameter_reader::read(std::string_view key, int64_t& value) {
  std::optional<int64_t> v = value;
  read(key, v);
  value = *v;
}

void parameter_reader::read(std::string_view key, std::optional<int64_t>& value) {
  const std::string* text = lookup(key);
  if (text == nullptr) return;
  if (auto v = parse_integer_parameter(*text)) {
    value = *v;
  } else {
    fail(key, "an integer (e.g. 10)", *text);
  }
}

void parameter_reader::read(std::string_view key, bool& value) {
  const std::string* text = lookup(key);
  if (text == nullptr) return;
  if (auto v = parse_bool_parameter(*text)) {
    value = *v;
  } else {
    fail(key, "a boolean (True, true, False or false)", *text);
  }
}

void parameter_reader::read(std::string_view key, std::string& value) {
  if (const std::string* text = lookup(key)) value = std::string(trim(*text));
}

void parameter_reader::read(std::string_view key, std::optional<std::string>& value) {
  if (const std::string* text = lookup(key)) value = std::string(trim(*text));
}

void parameter_reader::read(std::string_view key, std::vector<std::string>& value) {
  if (const std::string* text = lookup(key)) value = parse_list_parameter(*text);
}

void parameter_reader::read(std::string_view key, std::optional<trialstat::mode>& value) {
  const std::string* text = lookup(key);
  if (text == nullptr) return;
  if (auto m = parse_mode_name(trim(*text))) {
    value = *m;
  } else {
    fail(key, "a mode (TRAIN, EVAL, PREDICT or GLOBAL)", *text);
  }
}

status parameter_reader::finish() const {
  if (!first_error_.ok()) return first_error_;
  for (const auto& [key, text] : params_) {
    if (declared_.contains(key)) continue;
    std::string known;
    for (const auto& name : declared_) {
      if (name == "rule_to_invoke") continue;
      if (!known.empty()) known += ", ";
      known += name;
    }
    return status(error_code::invalid_argument,
                  fmt::format("{}: unknown parameter '{}' (known parameters: {})", rule_name_, key,
                              known));
  }
  return status::success();
}

}  // namespace trialstat::rules
