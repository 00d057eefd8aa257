// SPDX-License-Identifier: Apache-2.0
// C++ API consumer: load a trial's catalog and evaluate ExplodingTensor on it.
//   consumer_cpp TRIAL   (prints "tensors N steps M ExplodingTensor <status>"; exit 0 when it ran)
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <trialstat/config.hpp>
#include <trialstat/pipeline/rule_session.hpp>
#include <trialstat/rules/rule.hpp>
#include <trialstat/trial/catalog.hpp>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer_cpp TRIAL\n");
    return 2;
  }
  auto trial = trialstat::trial::catalog::open(argv[1]);
  if (!trial) {
    std::fprintf(stderr, "%s\n", trial.error_status().to_string().c_str());
    return 1;
  }
  auto rule = trialstat::rules::make_rule("ExplodingTensor", {});
  if (!rule) {
    std::fprintf(stderr, "%s\n", rule.error_status().to_string().c_str());
    return 1;
  }
  std::vector<trialstat::pipeline::rule_invocation> rules;
  rules.push_back({.configuration_name = "ExplodingTensor", .rule = std::move(*rule), .error = {}});
  auto results = trialstat::pipeline::evaluate_rules(*trial, rules, {});
  if (!results || results->size() != 1) {
    std::fprintf(stderr, "%s\n", results.error_status().to_string().c_str());
    return 1;
  }
  std::printf("trialstat %s: tensors %zu steps %zu ExplodingTensor %s\n", TRIALSTAT_VERSION,
              trial->tensor_names().size(), trial->steps().size(),
              std::string(trialstat::rules::rule_status_name(results->front().status)).c_str());
  return 0;
}
