// SPDX-License-Identifier: Apache-2.0
#include "trialstat/frontend/rule_invocations.hpp"

#include <array>

namespace trialstat::frontend {

std::span<const std::string> default_rule_names() noexcept {
  static const std::array<std::string, 5> names = {"VanishingGradient", "ExplodingTensor",
                                                   "WeightUpdateRatio", "LossNotDecreasing",
                                                   "DeadRelu"};
  return names;
}

std::vector<rules::rule_config_entry> default_rule_configs() {
  std::vector<rules::rule_config_entry> entries;
  for (const std::string& name : default_rule_names()) {
    rules::rule_config_entry entry;
    entry.configuration_name = name;
    entry.rule_name = name;
    entries.push_back(std::move(entry));
  }
  return entries;
}

pipeline::rule_invocation make_rule_invocation(std::string_view configuration_name,
                                               std::string_view rule_name,
                                               const rules::rule_parameters& parameters) {
  pipeline::rule_invocation invocation;
  invocation.configuration_name = configuration_name.empty() ? rule_name : configuration_name;
  auto made = rules::make_rule(rule_name, parameters);
  if (made) {
    invocation.rule = std::move(*made);
  } else {
    invocation.error = made.error_status();
  }
  return invocation;
}

std::vector<pipeline::rule_invocation> make_rule_invocations(
    std::span<const rules::rule_config_entry> entries) {
  std::vector<pipeline::rule_invocation> invocations;
  invocations.reserve(entries.size());
  for (const auto& e : entries) {
    invocations.push_back(make_rule_invocation(e.configuration_name, e.rule_name, e.parameters));
  }
  return invocations;
}

}  // namespace trialstat::frontend
