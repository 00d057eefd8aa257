// SPDX-License-Identifier: Apache-2.0
// WeightUpdateRatio (spec/RULES.md §3.3).
#include <gtest/gtest.h>

#include "tests/rules/rule_harness.hpp"

namespace trialstat::rule_testing {
namespace {

using trialstat::mode;

const std::vector<double> base{1.0, -2.0, 3.0, 0.5};
const std::vector<double> direction{0.1, 0.2, -0.3, 0.4};

/// SGD-like weights after k updates of size lr along `direction`.
tensor_value weights_after(int64_t k, double lr) {
  tensor_value v{{2, 2}, base};
  for (std::size_t i = 0; i < v.data.size(); ++i) v.data[i] += static_cast<double>(k) * lr * direction[i];
  return v;
}

/// TRAIN global 0,1,2 (mode 0..2), EVAL global 3, TRAIN 4,5 (mode 3,4), EVAL 6, TRAIN 7 (mode 5);
/// weights saved at every step; EVAL saves hold the last TRAIN step's weights.
trial_folder train_eval_trial(const std::string& label) {
  trial_folder t(label);
  t.collection("weights", {}, {"^(?!gradient).*weight"});
  const std::vector<saved_tensor> saved{{"fc.weight"}, {"gradient/fc.weight"}};
  t.step(0, mode::train, 0, saved).step(1, mode::train, 1, saved).step(2, mode::train, 2, saved);
  t.step(3, mode::eval, 0, saved);
  t.step(4, mode::train, 3, saved).step(5, mode::train, 4, saved);
  t.step(6, mode::eval, 1, saved);
  t.step(7, mode::train, 5, saved);
  return t;
}

int64_t train_step_of(int64_t global) {
  static const std::map<int64_t, int64_t> k{{0, 0}, {1, 1}, {2, 2}, {3, 2}, {4, 3}, {5, 4}, {6, 4}, {7, 5}};
  return k.at(global);
}

/// ‖b − a‖₂ / (‖a‖₂ + 1e-9) from the double values, in long double.
double exact_ratio(const tensor_value& a, const tensor_value& b) {
  long double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    const long double d = static_cast<long double>(b.data[i]) - a.data[i];
    diff += d * d;
    norm += static_cast<long double>(a.data[i]) * a.data[i];
  }
  return static_cast<double>(std::sqrt(diff) / (std::sqrt(norm) + 1e-9L));
}

value_source sgd(double lr) {
  return [lr](std::string_view, int64_t step, std::string_view) {
    return std::optional(weights_after(train_step_of(step), lr));
  };
}

TEST(WeightUpdateRatio, TinyLearningRateFiresNormalDoesNot) {
  auto catalog = train_eval_trial("wur").open();
  for (const double lr : {1e-10, 1e-13}) {
    auto rule = make("WeightUpdateRatio");
    const auto out = run_rule(*rule, catalog, sgd(lr));
    ASSERT_TRUE(out.prepared.ok());
    // Every TRAIN step with a previous TRAIN save; EVAL steps are not evaluated.
    EXPECT_EQ(where(out.findings),
              (decltype(where(out.findings)){{1, "fc.weight"}, {2, "fc.weight"}, {4, "fc.weight"},
                                             {5, "fc.weight"}, {7, "fc.weight"}}))
        << "lr " << lr;
    ASSERT_EQ(out.findings.size(), 5u);
    // r = lr·‖direction‖ / ‖base‖ (the update over the TRAIN pair 2 → 3, across EVAL step 3).
    const double expected = exact_ratio(weights_after(2, lr), weights_after(3, lr));
    EXPECT_NEAR(expected, lr * std::sqrt(0.30) / std::sqrt(14.25), lr * 0.05);
    EXPECT_NEAR(out.findings[2].value, expected, expected * 1e-9);
    EXPECT_EQ(out.findings[2].mode, mode::train);
    EXPECT_EQ(out.findings[2].mode_step, 3);
    EXPECT_NE(out.findings[2].message.find("< small_threshold 1e-08 (TRAIN step 2 -> 3)"),
              std::string::npos)
        << out.findings[2].message;
    // The pair 2 → 3 sits two saves back (an EVAL save between): the rule asked for depth 2.
    EXPECT_EQ(out.plan.find(*catalog.find_tensor("fc.weight"))->history_depth, 2);
  }
  for (const double lr : {1e-3, 1e-4}) {
    auto rule = make("WeightUpdateRatio");
    EXPECT_TRUE(run_rule(*rule, catalog, sgd(lr)).findings.empty()) << "lr " << lr;
  }
}

TEST(WeightUpdateRatio, LargeUpdateFires) {
  auto catalog = train_eval_trial("wur_large").open();
  auto rule = make("WeightUpdateRatio");
  const auto out = run_rule(*rule, catalog, [](std::string_view, int64_t step, std::string_view) {
    tensor_value v = weights_after(train_step_of(step), 1e-3);
    if (step == 4) {
      for (double& x : v.data) x *= 30.0;  // ‖W₄ − W₂‖ ≈ 29‖W₂‖
    }
    return std::optional(v);
  });
  ASSERT_EQ(where(out.findings), (decltype(where(out.findings)){{4, "fc.weight"}}));
  EXPECT_NEAR(out.findings[0].value, 29.0, 0.05);
  EXPECT_NE(out.findings[0].message.find("> large_threshold 10"), std::string::npos);
}

TEST(WeightUpdateRatio, NumStepsPairsWithTheEarliestSaveInTheWindow) {
  trial_folder t("wur_num_steps");
  t.collection("weights", {"w"});
  for (int s = 0; s <= 6; ++s) t.step(s, mode::global, s, {{"w"}});  // no TRAIN steps: GLOBAL
  auto catalog = t.open();
  auto rule = make("WeightUpdateRatio", {{"num_steps", "3"}});
  const auto out = run_rule(*rule, catalog, [](std::string_view, int64_t step, std::string_view) {
    return std::optional(weights_after(step, 1e-12));
  });
  ASSERT_EQ(out.findings.size(), 6u);
  const std::vector<std::string> pairs{"0 -> 1", "0 -> 2", "0 -> 3", "1 -> 4", "2 -> 5", "3 -> 6"};
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_NE(out.findings[i].message.find("(GLOBAL step " + pairs[i] + ")"), std::string::npos)
        << out.findings[i].message;
  }
  // (3, 6) is three updates apart.
  const double expected = exact_ratio(weights_after(3, 1e-12), weights_after(6, 1e-12));
  EXPECT_NEAR(expected, 3e-12 * std::sqrt(0.30) / std::sqrt(14.25), 3e-12 * 0.01);
  EXPECT_NEAR(out.findings[5].value, expected, expected * 1e-9);
  EXPECT_EQ(out.plan.find(*catalog.find_tensor("w"))->history_depth, 3);
}

TEST(WeightUpdateRatio, ShapeChangeSkipsThePair) {
  trial_folder t("wur_shape");
  t.collection("weights", {"w"});
  for (int s = 0; s <= 4; ++s) t.step(s, mode::train, s, {{"w"}});
  auto catalog = t.open();
  auto rule = make("WeightUpdateRatio");
  const auto out = run_rule(*rule, catalog, [](std::string_view, int64_t step, std::string_view) {
    tensor_value v = weights_after(step, 1e-12);
    if (step == 2) v.shape = {4};  // same elements, another shape
    return std::optional(v);
  });
  EXPECT_EQ(where(out.findings), (decltype(where(out.findings)){{1, "w"}, {4, "w"}}));
}

}  // namespace
}  // namespace trialstat::rule_testing
