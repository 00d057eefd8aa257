// SPDX-License-Identifier: Apache-2.0
// UnchangedTensor (spec/RULES.md §3.6).
#include <gtest/gtest.h>

#include <limits>

#include "tests/rules/rule_harness.hpp"

namespace trialstat::rule_testing {
namespace {

using trialstat::mode;

/// "w" saved at 0, 1, 2 (identical), "once" saved only at 0, "moving" changes every step.
trial_folder three_saves(const std::string& label) {
  trial_folder t(label);
  t.step(0, mode::train, 0, {{"w"}, {"once"}, {"moving"}});
  t.step(1, mode::train, 1, {{"w"}, {"moving"}});
  t.step(2, mode::train, 2, {{"w"}, {"moving"}});
  return t;
}

std::optional<tensor_value> constant_values(std::string_view name, int64_t step, std::string_view) {
  if (name == "moving") return filled(3, 0.5 + static_cast<double>(step));
  return tensor_value{{3}, {1.0, -2.0, 3.0}};
}

TEST(UnchangedTensor, NeedsASelection) {
  auto catalog = three_saves("ut_none").open();
  auto rule = make("UnchangedTensor");
  const auto out = run_rule(*rule, catalog, constant_values);
  EXPECT_EQ(out.prepared.code(), error_code::invalid_argument);
  EXPECT_NE(out.prepared.message().find("Insufficient information to invoke rule UnchangedTensor"),
            std::string::npos);
}

TEST(UnchangedTensor, ThreeIdenticalSavesFireAtTheThird) {
  auto catalog = three_saves("ut").open();
  for (const bool tell_plan : {true, false}) {
    auto rule = make("UnchangedTensor", {{"tensor_regex", ".*"}});
    run_options options;
    options.tell_plan = tell_plan;
    const auto out = run_rule(*rule, catalog, constant_values, options);
    ASSERT_TRUE(out.prepared.ok());
    // Not at 0 or 1 (fewer than num_steps saves); "once" never; "moving" never.
    ASSERT_EQ(where(out.findings), (decltype(where(out.findings)){{2, "w"}})) << tell_plan;
    EXPECT_EQ(out.findings[0].value, 0.0);
    EXPECT_NE(out.findings[0].message.find("last 3 saved steps (global steps 0..2)"),
              std::string::npos)
        << out.findings[0].message;
    EXPECT_EQ(out.plan.find(*catalog.find_tensor("w"))->history_depth, 2);
  }

  auto two = make("UnchangedTensor", {{"tensor_regex", "^w$"}, {"num_steps", "2"}});
  EXPECT_EQ(where(run_rule(*two, catalog, constant_values).findings),
            (std::vector<std::pair<int64_t, std::string>>{{1, "w"}, {2, "w"}}));
}

TEST(UnchangedTensor, SavesNeedNotBeConsecutive) {
  trial_folder t("ut_sparse");
  for (int s = 0; s <= 10; ++s) {
    std::vector<saved_tensor> saved{{"other"}};
    if (s % 5 == 0) saved.push_back({"w"});
    t.step(s, mode::train, s, saved);
  }
  auto catalog = t.open();
  auto rule = make("UnchangedTensor", {{"tensor_regex", "^w$"}});
  EXPECT_EQ(where(run_rule(*rule, catalog, constant_values).findings),
            (std::vector<std::pair<int64_t, std::string>>{{10, "w"}}));
}

TEST(UnchangedTensor, ToleranceParameters) {
  auto catalog = three_saves("ut_tol").open();
  // w drifts by 1e-9 relative per step: close with the defaults (rtol 1e-5), not with rtol 1e-12.
  const auto drifting = [](std::string_view name, int64_t step, std::string_view) {
    if (name != "w") return std::optional(filled(3, 0.0));
    tensor_value v{{3}, {1.0, -2.0, 3.0}};
    for (double& x : v.data) x *= 1.0 + 1e-9 * static_cast<double>(step);
    return std::optional(v);
  };
  auto loose = make("UnchangedTensor", {{"tensor_regex", "^w$"}});
  const auto out = run_rule(*loose, catalog, drifting);
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_NEAR(out.findings[0].value, 6e-9, 1e-15);  // max |w₂ − w₀| = 3·2e-9
  auto tight = make("UnchangedTensor", {{"tensor_regex", "^w$"}, {"rtol", "1e-12"}, {"atol", "0"}});
  EXPECT_TRUE(run_rule(*tight, catalog, drifting).findings.empty());
}

TEST(UnchangedTensor, EqualNan) {
  auto catalog = three_saves("ut_nan").open();
  const auto with_nan = [](std::string_view, int64_t, std::string_view) {
    return std::optional(tensor_value{{2}, {std::numeric_limits<double>::quiet_NaN(), 1.0}});
  };
  auto plain = make("UnchangedTensor", {{"tensor_regex", "^w$"}});
  EXPECT_TRUE(run_rule(*plain, catalog, with_nan).findings.empty());
  auto equal_nan = make("UnchangedTensor", {{"tensor_regex", "^w$"}, {"equal_nan", "True"}});
  EXPECT_EQ(run_rule(*equal_nan, catalog, with_nan).findings.size(), 1u);
}

TEST(UnchangedTensor, FindsItsOwnParameterSetAmongOtherRules) {
  auto catalog = three_saves("ut_merged").open();
  // Another rule asked for a looser set on "w": the merged plan lists two sets, and only our
  // strict one must decide. w drifts by 1e-3 relative: close for rtol 0.1, not for 1e-5.
  const auto drifting = [](std::string_view, int64_t step, std::string_view) {
    tensor_value v{{3}, {1.0, -2.0, 3.0}};
    for (double& x : v.data) x *= 1.0 + 1e-3 * static_cast<double>(step);
    return std::optional(v);
  };
  stats::statistics_request loose;
  loose.history_depth = 2;
  loose.allclose = {{0.1, 0.0, false}};
  run_options options;
  options.others = {{"w", loose}};
  auto strict = make("UnchangedTensor", {{"tensor_regex", "^w$"}});
  EXPECT_TRUE(run_rule(*strict, catalog, drifting, options).findings.empty());
  // Not told the merged plan, the rule cannot tell the two sets apart and does not guess.
  options.tell_plan = false;
  auto untold = make("UnchangedTensor", {{"tensor_regex", "^w$"}});
  EXPECT_TRUE(run_rule(*untold, catalog, drifting, options).findings.empty());
  // The loose rule itself fires.
  options.tell_plan = true;
  options.others = {{"w", [] {
                       stats::statistics_request strict_request;
                       strict_request.history_depth = 2;
                       strict_request.allclose = {{1e-5, 1e-8, false}};
                       return strict_request;
                     }()}};
  auto loose_rule = make("UnchangedTensor", {{"tensor_regex", "^w$"}, {"rtol", "0.1"}, {"atol", "0"}});
  EXPECT_EQ(run_rule(*loose_rule, catalog, drifting, options).findings.size(), 1u);
}

}  // namespace
}  // namespace trialstat::rule_testing
