// SPDX-License-Identifier: Apache-2.0
// One built-in rule over a trial folder end to end (catalog, one statistics pass, the rule), for
// tests that write trials with the trial writer. Header-only: the including test program links
// trialstat_pipeline.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::testing {

/// `rules::make_rule(rule, params)` evaluated by `pipeline::evaluate_rules` with default options
/// over the trial at `root`: its result (status Error with the reason when the rule cannot be
/// built; test failures, and a default result with status Error, when the trial cannot be
/// opened or the run fails).
inline pipeline::rule_result evaluate_rule(const std::filesystem::path& root,
                                           const std::string& rule,
                                           const rules::rule_parameters& params = {}) {
  pipeline::rule_result failed;
  failed.status = rules::rule_status::error;
  auto catalog = trial::catalog::open(root);
  EXPECT_TRUE(catalog.has_value()) << catalog.error_status().to_string();
  if (!catalog) return failed;
  std::vector<pipeline::rule_invocation> invocations(1);
  invocations[0].configuration_name = rule;
  auto made = rules::make_rule(rule, params);
  if (made) {
    invocations[0].rule = std::move(*made);
  } else {
    invocations[0].error = made.error_status();
  }
  auto results = pipeline::evaluate_rules(*catalog, invocations, pipeline::pipeline_options{});
  EXPECT_TRUE(results.has_value()) << results.error_status().to_string();
  if (!results || results->empty()) return failed;
  return std::move((*results)[0]);
}

}  // namespace trialstat::testing
