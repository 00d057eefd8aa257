// SPDX-License-Identifier: Apache-2.0
// VanishingGradient (spec/RULES.md §3.1).
#include <gtest/gtest.h>

#include "tests/rules/rule_harness.hpp"

namespace trialstat::rule_testing {
namespace {

using trialstat::mode;

trial_folder gradient_trial(const std::string& label) {
  trial_folder t(label);
  t.collection("gradients", {}, {"^gradient"}).collection("weights", {}, {"^(?!gradient).*weight"});
  for (int s = 0; s < 4; ++s) {
    t.step(s, mode::train, s, {{"gradient/fc.weight"}, {"gradient/fc.bias"}, {"fc.weight"}});
  }
  return t;
}

// mean |g| of {+3e-9, -1e-9, 2e-9, -6e-9} = 3e-9.
const tensor_value tiny{{2, 2}, {3e-9, -1e-9, 2e-9, -6e-9}};
const tensor_value healthy{{2, 2}, {1e-3, -2e-3, 5e-4, -1e-3}};

std::optional<tensor_value> values(std::string_view name, int64_t step, std::string_view) {
  if (name == "fc.weight") return tiny;  // not a gradient: never judged
  if (name == "gradient/fc.weight" && step == 2) return tiny;
  return healthy;
}

TEST(VanishingGradient, FiresOnTheVanishingTensorOnly) {
  auto catalog = gradient_trial("vg").open();
  auto rule = make("VanishingGradient");
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_TRUE(out.prepared.ok()) << out.prepared.to_string();
  ASSERT_EQ(out.findings.size(), 1u);
  const auto& f = out.findings[0];
  EXPECT_EQ(f.rule, "VanishingGradient");
  EXPECT_EQ(f.step, 2);
  EXPECT_EQ(f.mode, mode::train);
  EXPECT_EQ(f.mode_step, 2);
  EXPECT_EQ(f.tensor, "gradient/fc.weight");
  EXPECT_EQ(f.worker, "worker_0");
  EXPECT_NEAR(f.value, 3e-9, 1e-22);
  EXPECT_EQ(f.message, "mean |g| = 3e-09 < threshold 1e-07");
  // Only the gradients were requested.
  EXPECT_EQ(out.plan.requests().size(), 2u);
}

TEST(VanishingGradient, ThresholdParameterAndEveryStepReported) {
  auto catalog = gradient_trial("vg_threshold").open();
  auto rule = make("VanishingGradient", {{"threshold", "0.01"}});
  const auto out = run_rule(*rule, catalog, values);
  // Every (step, gradient) is below 1e-2: all eight are reported, in (step, name) order.
  ASSERT_EQ(out.findings.size(), 8u);
  EXPECT_EQ(out.findings[0].tensor, "gradient/fc.bias");
  EXPECT_EQ(out.findings[1].tensor, "gradient/fc.weight");
  EXPECT_EQ(out.findings[7].step, 3);
}

TEST(VanishingGradient, NanMeansNoFinding) {
  auto catalog = gradient_trial("vg_nan").open();
  auto rule = make("VanishingGradient");
  const auto out = run_rule(*rule, catalog, [](std::string_view name, int64_t step, std::string_view) {
    tensor_value v = *values(name, step, "");
    if (name == "gradient/fc.weight" && step == 2) v.data[0] = std::nan("");  // numpy mean → NaN
    return std::optional(v);
  });
  EXPECT_TRUE(out.findings.empty());
}

TEST(VanishingGradient, UsesTheSavedAbsMeanWhenTheRawGradientIsNotSaved) {
  trial_folder t("vg_reductions");
  t.collection("gradients", {}, {"^gradient"});
  t.step(0, mode::train, 0, {{"gradient/w", false, {"abs_mean", "max"}}});
  t.step(1, mode::train, 1, {{"gradient/w", false, {"abs_mean", "max"}}});
  auto catalog = t.open();
  auto rule = make("VanishingGradient");
  const auto out = run_rule(*rule, catalog, [](std::string_view, int64_t step, std::string_view) {
    return std::optional(step == 1 ? tiny : healthy);
  });
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].step, 1);
  EXPECT_NEAR(out.findings[0].value, 3e-9, 1e-22);
  EXPECT_NE(out.findings[0].message.find("saved abs_mean"), std::string::npos);
}

TEST(VanishingGradient, TrialWithoutGradientsHasNoFindings) {
  trial_folder t("vg_none");
  t.collection("weights", {}, {"weight"});
  t.step(0, mode::train, 0, {{"fc.weight"}});
  auto catalog = t.open();
  auto rule = make("VanishingGradient");
  const auto out = run_rule(*rule, catalog, values);
  EXPECT_TRUE(out.prepared.ok());
  EXPECT_TRUE(out.findings.empty());
  EXPECT_TRUE(out.plan.requests().empty());
}

}  // namespace
}  // namespace trialstat::rule_testing
