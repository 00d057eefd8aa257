// SPDX-License-Identifier: Apache-2.0
// AllZero (spec/RULES.md §3.4) and TensorVariance (§3.14).
#include <gtest/gtest.h>

#include <limits>

#include "tests/rules/rule_harness.hpp"

namespace trialstat::rule_testing {
namespace {

using trialstat::mode;
constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

trial_folder small_trial(const std::string& label) {
  trial_folder t(label);
  t.collection("relu", {}, {"relu"});
  for (int s = 0; s < 3; ++s) t.step(s, mode::global, s, {{"a_relu_output"}, {"b"}});
  return t;
}

TEST(AllZero, NeedsASelection) {
  auto catalog = small_trial("az_none").open();
  auto rule = make("AllZero");
  const auto out = run_rule(*rule, catalog, [](auto...) { return std::optional(filled(2, 0.0)); });
  EXPECT_EQ(out.prepared.code(), error_code::invalid_argument);
  EXPECT_EQ(out.prepared.message(),
            "Insufficient information to invoke rule AllZero: collection_names or tensor_regex is "
            "required");
  EXPECT_TRUE(out.findings.empty());
}

TEST(AllZero, FiresWhenTheZeroShareReachesTheThreshold) {
  auto catalog = small_trial("az").open();
  // step 0: 3 of 4 zero (−0.0 counts); step 1: all zero; step 2: a zero and a NaN (50%).
  const auto values = [](std::string_view, int64_t step, std::string_view) {
    switch (step) {
      case 0: return std::optional(tensor_value{{4}, {0.0, -0.0, 0.0, 1.5}});
      case 1: return std::optional(tensor_value{{2, 2}, {0.0, 0.0, -0.0, 0.0}});
      default: return std::optional(tensor_value{{2}, {0.0, nan_value}});
    }
  };
  auto by_regex = make("AllZero", {{"tensor_regex", "relu"}});
  const auto out = run_rule(*by_regex, catalog, values);
  ASSERT_TRUE(out.prepared.ok());
  ASSERT_EQ(where(out.findings), (decltype(where(out.findings)){{1, "a_relu_output"}}));
  EXPECT_EQ(out.findings[0].value, 100.0);
  EXPECT_EQ(out.findings[0].message, "zeros = 100% of 4 elements >= threshold 100%");

  auto at_75 = make("AllZero", {{"collection_names", "relu"}, {"threshold", "75"}});
  const auto out75 = run_rule(*at_75, catalog, values);
  EXPECT_EQ(where(out75.findings),
            (decltype(where(out75.findings)){{0, "a_relu_output"}, {1, "a_relu_output"}}));
  EXPECT_EQ(out75.findings[0].value, 75.0);

  auto at_50 = make("AllZero", {{"tensor_regex", "relu, ^b$"}, {"threshold", "50"}});
  const auto out50 = run_rule(*at_50, catalog, values);
  EXPECT_EQ(out50.findings.size(), 6u);  // both tensors, every step (NaN is not a zero: 50%)
}

TEST(TensorVariance, NeedsASelectionAndAThreshold) {
  auto catalog = small_trial("tv_none").open();
  const auto values = [](auto...) { return std::optional(filled(2, 1.0)); };
  auto no_selection = make("TensorVariance", {{"max_threshold", "1"}});
  EXPECT_EQ(run_rule(*no_selection, catalog, values).prepared.code(), error_code::invalid_argument);
  auto no_threshold = make("TensorVariance", {{"tensor_regex", "b"}});
  const auto out = run_rule(*no_threshold, catalog, values);
  EXPECT_EQ(out.prepared.code(), error_code::invalid_argument);
  EXPECT_NE(out.prepared.message().find("Insufficient information to invoke rule TensorVariance"),
            std::string::npos);
}

TEST(TensorVariance, PopulationVarianceAgainstBothThresholds) {
  auto catalog = small_trial("tv").open();
  // Population variance of {1, 2, 3, 4} is 1.25 (numpy.var); step 2 adds a NaN, which is
  // ignored (finite-value variance, documented).
  const auto values = [](std::string_view, int64_t step, std::string_view) {
    tensor_value v{{4}, {1.0, 2.0, 3.0, 4.0}};
    if (step == 1) v = filled(4, 7.0);
    if (step == 2) v.data.push_back(nan_value), v.shape = {5};
    return std::optional(v);
  };
  auto rule = make("TensorVariance",
                   {{"tensor_regex", "^b$"}, {"max_threshold", "1.2"}, {"min_threshold", "1e-3"}});
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_EQ(where(out.findings), (decltype(where(out.findings)){{0, "b"}, {1, "b"}, {2, "b"}}));
  EXPECT_DOUBLE_EQ(out.findings[0].value, 1.25);
  EXPECT_EQ(out.findings[0].message, "variance = 1.25 > max_threshold 1.2");
  EXPECT_EQ(out.findings[1].value, 0.0);
  EXPECT_EQ(out.findings[1].message, "variance = 0 < min_threshold 0.001");
  EXPECT_DOUBLE_EQ(out.findings[2].value, 1.25);

  auto strict = make("TensorVariance", {{"tensor_regex", "^b$"}, {"max_threshold", "1.25"}});
  EXPECT_TRUE(run_rule(*strict, catalog, values).findings.empty());  // var > max, not >=
}

TEST(TensorVariance, SavedVarianceWhenTheRawTensorIsMissing) {
  trial_folder t("tv_saved");
  t.step(0, mode::train, 0, {{"w", false, {"variance"}}});
  t.step(1, mode::train, 1, {{"w", false, {"std"}}});
  auto catalog = t.open();
  auto rule = make("TensorVariance", {{"tensor_regex", "w"}, {"max_threshold", "1"}});
  const auto out = run_rule(*rule, catalog, [](auto...) {
    return std::optional(tensor_value{{4}, {0.0, 4.0, 0.0, 4.0}});  // variance 4, std 2
  });
  ASSERT_EQ(out.findings.size(), 2u);
  EXPECT_DOUBLE_EQ(out.findings[0].value, 4.0);
  EXPECT_NE(out.findings[0].message.find("saved variance"), std::string::npos);
  EXPECT_DOUBLE_EQ(out.findings[1].value, 4.0);
  EXPECT_NE(out.findings[1].message.find("saved std squared"), std::string::npos);
}

}  // namespace
}  // namespace trialstat::rule_testing
