// SPDX-License-Identifier: Apache-2.0
// ExplodingTensor (spec/RULES.md §3.5).
#include <gtest/gtest.h>

#include <limits>

#include "tests/rules/rule_harness.hpp"

namespace trialstat::rule_testing {
namespace {

using trialstat::mode;
constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_value = std::numeric_limits<double>::infinity();

trial_folder exploding_trial(const std::string& label) {
  trial_folder t(label);
  t.collection("weights", {"fc.weight"});
  for (int s = 0; s < 4; ++s) t.step(s, mode::global, s, {{"fc.weight"}, {"loss"}});
  return t;
}

// [test] fc.weight has NaN at steps 0 and 2; loss is +Inf at step 1.
std::optional<tensor_value> values(std::string_view name, int64_t step, std::string_view) {
  if (name == "fc.weight") {
    tensor_value v{{3}, {1.0, -2.0, 0.5}};
    if (step == 0 || step == 2) v.data[1] = nan_value;
    return v;
  }
  return tensor_value{{}, {step == 1 ? inf_value : 0.25}};
}

TEST(ExplodingTensor, NanAtStepsZeroAndTwo) {
  auto catalog = exploding_trial("et").open();
  auto rule = make("ExplodingTensor", {{"tensor_regex", "weight"}});
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_TRUE(out.prepared.ok());
  EXPECT_EQ(where(out.findings), (decltype(where(out.findings)){{0, "fc.weight"}, {2, "fc.weight"}}));
  EXPECT_EQ(out.findings[0].value, 1.0);
  EXPECT_EQ(out.findings[0].message, "1 non-finite of 3 elements (1 NaN, 0 +Inf, 0 -Inf)");

  // Started at step 1 (invoke_rule start_step = 1): the first finding is at step 2.
  auto later = make("ExplodingTensor", {{"tensor_regex", "weight"}});
  run_options from_one;
  from_one.step_begin = 1;
  const auto out_later = run_rule(*later, catalog, values, from_one);
  EXPECT_EQ(where(out_later.findings), (decltype(where(out_later.findings)){{2, "fc.weight"}}));
}

TEST(ExplodingTensor, DefaultSelectionIsEveryTensorAndOnlyNanIgnoresInfinity) {
  auto catalog = exploding_trial("et_all").open();
  auto rule = make("ExplodingTensor");
  const auto out = run_rule(*rule, catalog, values);
  EXPECT_EQ(where(out.findings),
            (decltype(where(out.findings)){{0, "fc.weight"}, {1, "loss"}, {2, "fc.weight"}}));

  auto nan_only = make("ExplodingTensor", {{"only_nan", "True"}});
  const auto out_nan = run_rule(*nan_only, catalog, values);
  EXPECT_EQ(where(out_nan.findings),
            (decltype(where(out_nan.findings)){{0, "fc.weight"}, {2, "fc.weight"}}));
  EXPECT_EQ(out_nan.findings[0].message, "1 NaN of 3 elements");

  auto by_collection = make("ExplodingTensor", {{"collection_names", "weights"}});
  const auto out_collection = run_rule(*by_collection, catalog, values);
  EXPECT_EQ(out_collection.findings.size(), 2u);
}

TEST(ExplodingTensor, NonFiniteSavedReductionWhenOnlyReductionsExist) {
  trial_folder t("et_reductions");
  for (int s = 0; s < 3; ++s) t.step(s, mode::train, s, {{"w", false, {"max", "mean"}}});
  auto catalog = t.open();
  const auto reduction_values = [](std::string_view, int64_t step, std::string_view) {
    tensor_value v{{2}, {1.0, 2.0}};
    if (step == 1) v.data[0] = inf_value;  // max = inf, mean = inf
    if (step == 2) v.data[0] = nan_value;  // max = nan, mean = nan
    return std::optional(v);
  };
  auto rule = make("ExplodingTensor");
  const auto out = run_rule(*rule, catalog, reduction_values);
  ASSERT_EQ(where(out.findings), (decltype(where(out.findings)){{1, "w"}, {2, "w"}}));
  EXPECT_EQ(out.findings[0].value, inf_value);
  EXPECT_EQ(out.findings[0].message, "saved reduction max = inf (raw tensor not available)");

  auto nan_only = make("ExplodingTensor", {{"only_nan", "true"}});
  const auto out_nan = run_rule(*nan_only, catalog, reduction_values);
  EXPECT_EQ(where(out_nan.findings), (decltype(where(out_nan.findings)){{2, "w"}}));
}

TEST(ExplodingTensor, BadRegexIsAPrepareError) {
  auto catalog = exploding_trial("et_regex").open();
  auto rule = make("ExplodingTensor", {{"tensor_regex", "(unclosed"}});
  plan::read_plan plan;
  const status s = rule->prepare(catalog, plan);
  EXPECT_EQ(s.code(), error_code::invalid_argument);
  EXPECT_NE(s.message().find("ExplodingTensor"), std::string::npos) << s.message();
}

TEST(ExplodingTensor, UnusableRecordIsSkippedAlone) {
  auto catalog = exploding_trial("et_skip").open();
  auto rule = make("ExplodingTensor");
  const auto out = run_rule(*rule, catalog, [](std::string_view name, int64_t step, std::string_view w)
                                                -> std::optional<tensor_value> {
    if (name == "fc.weight" && step == 0) return std::nullopt;  // corrupt record
    return values(name, step, w);
  });
  EXPECT_EQ(where(out.findings), (decltype(where(out.findings)){{1, "loss"}, {2, "fc.weight"}}));
}

}  // namespace
}  // namespace trialstat::rule_testing
