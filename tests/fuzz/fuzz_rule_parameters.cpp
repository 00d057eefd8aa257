// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: rule parameter values (`--param key=value`, `RuleParameters`;
// host/rules/parameters.cpp and every built-in rule's checks through `make_rule`).
// The input picks a rule and key/value pairs. Properties of the value parsers: an integer
// read back from its decimal text is the same integer; a finite float read back from its
// shortest text is the same float; a list's elements are non-empty, trimmed and comma-free; a
// boolean is one of the four spellings. Building the rule gives a rule or invalid_argument
// naming the rule.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "tests/fuzz/fuzz_check.hpp"
#include "trialstat/rules/parameters.hpp"
#include "trialstat/rules/rule.hpp"

using namespace trialstat;

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

void check_value_parsers(const std::string& text) {
  if (const auto i = rules::parse_integer_parameter(text)) {
    FUZZ_CHECK(rules::parse_integer_parameter(std::to_string(*i)) == *i, "integer does not read back: " + text);
  }
  if (const auto f = rules::parse_float_parameter(text); f && std::isfinite(*f)) {
    const auto back = rules::parse_float_parameter(fmt::format("{}", *f));
    FUZZ_CHECK(back && *back == *f, "float does not read back: " + text);
  }
  if (const auto b = rules::parse_bool_parameter(text)) {
    FUZZ_CHECK(rules::parse_bool_parameter(*b ? "True" : "False") == *b, "bool does not read back: " + text);
  }
  for (const std::string& item : rules::parse_list_parameter(text)) {
    FUZZ_CHECK(!item.empty() && !is_blank(item.front()) && !is_blank(item.back()) &&
                   item.find(',') == std::string::npos,
               "list item not trimmed: " + text);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static const std::vector<std::string> names = rules::builtin_rule_names();
  FuzzedDataProvider in(data, size);
  const std::string rule = names[in.ConsumeIntegralInRange<std::size_t>(0, names.size() - 1)];
  rules::rule_parameters params;
  const int pairs = in.ConsumeIntegralInRange(0, 6);
  for (int p = 0; p < pairs && in.remaining_bytes() > 0; ++p) {
    std::string key = in.ConsumeRandomLengthString(64);
    std::string value = in.ConsumeRandomLengthString(256);
    check_value_parsers(value);
    params[std::move(key)] = std::move(value);
  }
  check_value_parsers(in.ConsumeRemainingBytesAsString());
  const auto made = rules::make_rule(rule, params);
  if (!made.has_value()) {
    const status s = made.error_status();
    FUZZ_CHECK(s.code() == error_code::invalid_argument, s.to_string());
    FUZZ_CHECK(!s.message().empty(), "an error without a message");
  }
  return 0;
}
