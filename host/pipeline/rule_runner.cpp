// SPDX-License-Identifier: Apache-2.0
// Several rules, one pass: merge every rule's needs into one read plan, run the statistics
// pipeline once, and feed each step to every rule that prepared successfully.
#include "trialstat/pipeline/rule_runner.hpp"

#include <string>

namespace trialstat::pipeline {

result<std::vector<rule_result>> evaluate_rules(const trial::catalog& trial,
                                                std::vector<rule_invocation>& invocations,
                                                const pipeline_options& options) {
  std::vector<rule_result> results(invocations.size());
  std::vector<rules::rule*> active;
  std::vector<std::size_t> active_index;
  plan::read_plan merged;
  for (std::size_t i = 0; i < invocations.size(); ++i) {
    rule_invocation& invocation = invocations[i];
    rule_result& out = results[i];
    out.configuration_name = invocation.configuration_name;
    if (!invocation.rule) {
      out.rule_name = invocation.configuration_name;
      out.status = rules::rule_status::error;
      out.status_details = invocation.error.to_string();
      continue;
    }
    out.rule_name = std::string(invocation.rule->name());
    if (out.configuration_name.empty()) out.configuration_name = out.rule_name;
    // Prepare into a private plan first, so a rule that fails halfway adds nothing.
    plan::read_plan own;
    status prepared = invocation.rule->prepare(trial, own);
    if (!prepared.ok()) {
      out.status = rules::rule_status::error;
      out.status_details = prepared.to_string();
      continue;
    }
    for (const auto& [tensor, request] : own.requests()) merged.request(tensor, request);
    active.push_back(invocation.rule.get());
    active_index.push_back(i);
  }

  if (!active.empty()) {
    for (rules::rule* rule : active) rule->plan_ready(merged);
    auto run = run_statistics(trial, merged, options, [&](const plan::step_statistics& step) {
      for (std::size_t r = 0; r < active.size(); ++r) {
        active[r]->evaluate_step(trial, step, results[active_index[r]].findings);
      }
    });
    if (!run) return run.error_status();
    for (std::size_t r = 0; r < active.size(); ++r) {
      active[r]->finish(trial, results[active_index[r]].findings);
    }
  }
  for (std::size_t r = 0; r < active.size(); ++r) {
    rule_result& out = results[active_index[r]];
    out.status = out.findings.empty() ? rules::rule_status::no_issues_found
                                      : rules::rule_status::issues_found;
  }
  return results;
}

}  // namespace trialstat::pipeline
