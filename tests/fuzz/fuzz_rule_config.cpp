// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: SageMaker rule configurations (`--config`, host/rules/rule_config.cpp) and,
// through `make_rule`, the parameter readers of every built-in rule (host/rules/parameters.cpp
// and each rule's parameter checks). The input is one config document. It parses to entries or
// fails with data_loss / invalid_argument naming the source; every parsed entry names its rule,
// and building it gives a rule or not_found / invalid_argument with a message.
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_check.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/rules/rule_config.hpp"

using namespace trialstat;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string source = "fuzz_config.json";
  const auto entries = rules::parse_rule_config(fuzz::as_text(data, size), source);
  if (!entries.has_value()) {
    const status s = entries.error_status();
    FUZZ_CHECK(s.code() == error_code::data_loss || s.code() == error_code::invalid_argument, s.to_string());
    FUZZ_CHECK(s.message().find(source) != std::string::npos, "the error does not name the source: " + s.message());
    return 0;
  }
  for (const rules::rule_config_entry& e : *entries) {
    FUZZ_CHECK(!e.rule_name.empty() && !e.configuration_name.empty(), "an entry without a name");
    if (e.actions.exit_status) {
      FUZZ_CHECK(*e.actions.exit_status >= 0 && *e.actions.exit_status <= 255, "exit_status out of range");
    }
    const auto made = rules::make_rule(e.rule_name, e.parameters);
    if (!made.has_value()) {
      const status s = made.error_status();
      FUZZ_CHECK(s.code() == error_code::not_found || s.code() == error_code::invalid_argument, s.to_string());
      FUZZ_CHECK(!s.message().empty(), "an error without a message");
    } else {
      FUZZ_CHECK(made->get() != nullptr, "make_rule gave no rule");
    }
  }
  return 0;
}
