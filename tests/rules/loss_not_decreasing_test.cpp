// SPDX-License-Identifier: Apache-2.0
// LossNotDecreasing (spec/RULES.md §3.7).
#include <gtest/gtest.h>

#include <map>

#include "tests/rules/rule_harness.hpp"

namespace trialstat::rule_testing {
namespace {

using trialstat::mode;
using steps_and_tensors = std::vector<std::pair<int64_t, std::string>>;

const std::string loss_name = "CrossEntropyLoss_output_0";

/// The loss (scalar) saved at `steps` (GLOBAL mode), in the `losses` collection.
trial_folder loss_trial(const std::string& label, const std::vector<int64_t>& steps,
                        mode m = mode::global) {
  trial_folder t(label);
  t.collection("losses", {}, {"[Ll]oss_(?!input).*output"});
  for (const int64_t s : steps) t.step(s, m, s, {{loss_name}});
  return t;
}

value_source scalar_table(std::map<int64_t, double> table) {
  return [table](std::string_view, int64_t step, std::string_view) {
    return std::optional(tensor_value{{}, {table.at(step)}});
  };
}

TEST(LossNotDecreasing, LegacyTestFiresAtTwelveWithDiffZero) {
  // [test] 2019: 0.3, 0.33, 0.31, 0.30, 0.28 at steps 0, 4, 8, 12, 16.
  auto catalog = loss_trial("lnd_legacy", {0, 4, 8, 12, 16}).open();
  const auto values = scalar_table({{0, 0.3}, {4, 0.33}, {8, 0.31}, {12, 0.30}, {16, 0.28}});
  auto rule = make("LossNotDecreasing", {{"diff_percent", "0"}, {"use_legacy_semantics", "True"}});
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_TRUE(out.prepared.ok()) << out.prepared.to_string();
  ASSERT_EQ(where(out.findings), (steps_and_tensors{{12, loss_name}}));
  EXPECT_EQ(out.findings[0].value, 0.0);  // (0.30 − 0.3) / 0.3
  EXPECT_EQ(out.findings[0].message,
            "loss changed by 0% >= diff_percent 0% (legacy semantics) from 0.3 at GLOBAL step 0 "
            "to 0.3 at step 12");

  // The 2023 semantics: c ≤ b and a 0% decrease is not < diff_percent 0 → quiet.
  auto current = make("LossNotDecreasing", {{"diff_percent", "0"}});
  EXPECT_TRUE(run_rule(*current, catalog, values).findings.empty());
}

TEST(LossNotDecreasing, LegacyTestWithDiffTwentyFiresFirstAtTwentyFour) {
  auto catalog = loss_trial("lnd_legacy20", {0, 4, 8, 12, 16, 20, 24}).open();
  const auto values = scalar_table(
      {{0, 0.3}, {4, 0.33}, {8, 0.31}, {12, 0.30}, {16, 0.28}, {20, 0.2}, {24, 0.42}});
  auto rule = make("LossNotDecreasing", {{"diff_percent", "20"}, {"use_legacy_semantics", "true"}});
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_FALSE(out.findings.empty());
  EXPECT_EQ(out.findings[0].step, 24);  // 0.42 vs 0.30 at step 12: +40%
  EXPECT_NEAR(out.findings[0].value, 40.0, 1e-9);
}

TEST(LossNotDecreasing, DocsScheduleSavedEveryThree) {
  // Saved every 3 steps from 9, num_steps 10: step 21 is compared with step 9, the next
  // evaluation is at 33 (31 and 32 are not saved), then 45. A constant loss fires each time.
  std::vector<int64_t> steps;
  for (int64_t s = 9; s <= 47; s += 3) steps.push_back(s);
  auto catalog = loss_trial("lnd_docs", steps).open();
  const auto constant = [](std::string_view, int64_t, std::string_view) {
    return std::optional(tensor_value{{1}, {1.5}});
  };
  auto rule = make("LossNotDecreasing");
  const auto out = run_rule(*rule, catalog, constant);
  ASSERT_EQ(where(out.findings),
            (steps_and_tensors{{21, loss_name}, {33, loss_name}, {45, loss_name}}));
  EXPECT_NE(out.findings[0].message.find("at GLOBAL step 9 to 1.5 at step 21"), std::string::npos)
      << out.findings[0].message;
  EXPECT_NE(out.findings[1].message.find("at GLOBAL step 21 to 1.5 at step 33"), std::string::npos)
      << out.findings[1].message;
  EXPECT_EQ(out.findings[0].message,
            "loss decreased by 0% < diff_percent 0.1% from 1.5 at GLOBAL step 9 to 1.5 at step 21");

  // Saved every 3 from 0: the first step with a save ≤ s − 10 is 12 (vs 0), then 24, 36.
  std::vector<int64_t> from_zero;
  for (int64_t s = 0; s <= 38; s += 3) from_zero.push_back(s);
  auto catalog0 = loss_trial("lnd_docs0", from_zero).open();
  auto rule0 = make("LossNotDecreasing");
  EXPECT_EQ(where(run_rule(*rule0, catalog0, constant).findings),
            (steps_and_tensors{{12, loss_name}, {24, loss_name}, {36, loss_name}}));
}

TEST(LossNotDecreasing, DecreaseAndIncreaseThresholds) {
  std::vector<int64_t> steps;
  for (int64_t s = 0; s <= 40; s += 10) steps.push_back(s);
  auto catalog = loss_trial("lnd_current", steps).open();
  // 0 → 10: −10% (healthy); 10 → 20: −0.05% (< 0.1%: fires); 20 → 30: +4% (≤ 5%: quiet);
  // 30 → 40: +10% (> 5%: fires).
  const double l0 = 2.0, l1 = 1.8, l2 = l1 * (1 - 0.0005), l3 = l2 * 1.04, l4 = l3 * 1.10;
  const auto values = scalar_table({{0, l0}, {10, l1}, {20, l2}, {30, l3}, {40, l4}});
  auto rule = make("LossNotDecreasing");
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_EQ(where(out.findings), (steps_and_tensors{{20, loss_name}, {40, loss_name}}));
  EXPECT_NEAR(out.findings[0].value, 0.05, 1e-9);
  EXPECT_NE(out.findings[0].message.find("decreased by 0.05% < diff_percent 0.1%"), std::string::npos);
  EXPECT_NEAR(out.findings[1].value, 10.0, 1e-9);
  EXPECT_NE(out.findings[1].message.find("increased by 10% > increase_threshold_percent 5%"),
            std::string::npos);

  auto relaxed = make("LossNotDecreasing", {{"diff_percent", "0.01"}, {"increase_threshold_percent", "3"}});
  EXPECT_EQ(where(run_rule(*relaxed, catalog, values).findings),
            (steps_and_tensors{{30, loss_name}, {40, loss_name}}));
}

TEST(LossNotDecreasing, ModeChoiceAndModeSteps) {
  // TRAIN global 0..29 (mode steps 0..29) then EVAL global 30..59 (mode steps 0..29); the loss is
  // constant in EVAL and falling fast in TRAIN. Default mode: EVAL (first of EVAL, TRAIN,
  // GLOBAL with steps); its schedule runs on EVAL mode steps.
  trial_folder t("lnd_modes");
  t.collection("losses", {}, {"[Ll]oss_(?!input).*output"});
  for (int64_t s = 0; s < 30; s += 5) t.step(s, mode::train, s, {{loss_name}});
  for (int64_t s = 30; s < 60; s += 5) t.step(s, mode::eval, s - 30, {{loss_name}});
  auto catalog = t.open();
  const auto values = [](std::string_view, int64_t step, std::string_view) {
    return std::optional(tensor_value{{}, {step < 30 ? 100.0 / static_cast<double>(step + 1) : 0.7}});
  };
  auto rule = make("LossNotDecreasing");
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_EQ(where(out.findings), (steps_and_tensors{{40, loss_name}, {50, loss_name}}));
  EXPECT_EQ(out.findings[0].mode, mode::eval);
  EXPECT_EQ(out.findings[0].mode_step, 10);

  auto train = make("LossNotDecreasing", {{"mode", "TRAIN"}});
  EXPECT_TRUE(run_rule(*train, catalog, values).findings.empty());
  auto global = make("LossNotDecreasing", {{"mode", "GLOBAL"}});
  // GLOBAL: steps 0..55 every 5; evaluations at 10, 20, ... ; EVAL part (≥ 40 vs ≥ 30) is flat.
  EXPECT_EQ(where(run_rule(*global, catalog, values).findings),
            (steps_and_tensors{{40, loss_name}, {50, loss_name}}));
}

TEST(LossNotDecreasing, OnlyScalarTensorsAndFallbackSelection) {
  trial_folder t("lnd_select");
  for (int64_t s = 0; s <= 20; s += 10) t.step(s, mode::global, s, {{"my_metric"}, {"vector"}});
  auto catalog = t.open();  // no `losses` collection, no selection: every scalar tensor
  const auto values = [](std::string_view name, int64_t, std::string_view) {
    if (name == "vector") return std::optional(filled(2, 1.0));
    return std::optional(tensor_value{{}, {3.0}});
  };
  auto rule = make("LossNotDecreasing");
  const auto out = run_rule(*rule, catalog, values);
  EXPECT_EQ(where(out.findings), (steps_and_tensors{{10, "my_metric"}, {20, "my_metric"}}));

  auto by_regex = make("LossNotDecreasing", {{"tensor_regex", "vector"}});
  EXPECT_TRUE(run_rule(*by_regex, catalog, values).findings.empty());
}

}  // namespace
}  // namespace trialstat::rule_testing
