// SPDX-License-Identifier: Apache-2.0
// Confusion (spec/RULES.md §3.10) and ClassImbalance (§3.12) over hand-built records.
#include <gtest/gtest.h>

#include "tests/rules/rule_harness.hpp"

namespace trialstat::rule_testing {
namespace {

using trialstat::mode;
using step_tensor = std::pair<int64_t, std::string>;

tensor_value vec(std::vector<double> v) { return {{static_cast<int64_t>(v.size())}, std::move(v)}; }

/// Labels 0..9; predictions equal except, from `wrong_from`, label 3 predicted as 5.
std::optional<tensor_value> digits(std::string_view name, int64_t step, int64_t wrong_from) {
  std::vector<double> v{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  if (name == "predictions" && step >= wrong_from) v[3] = 5;
  return vec(v);
}

trial_folder digit_trial(const std::string& label, int steps) {
  trial_folder t(label);
  for (int s = 0; s < steps; ++s) t.step(s, mode::eval, s, {{"labels"}, {"predictions"}, {"loss"}});
  return t;
}

TEST(Confusion, IdentityIsQuietAndOneMistakeFires) {
  auto catalog = digit_trial("cf", 3).open();
  // [test] identity → no fire; 1 of 10 mispredicted → fires (column 5: 1/2 on the diagonal).
  auto rule = make("Confusion");
  const auto out = run_rule(*rule, catalog, [](std::string_view n, int64_t s, std::string_view) {
    return digits(n, s, 2);
  });
  ASSERT_TRUE(out.prepared.ok()) << out.prepared.to_string();
  ASSERT_EQ(where(out.findings), (std::vector<step_tensor>{{2, "labels"}}));
  EXPECT_EQ(out.findings[0].value, 0.5);
  EXPECT_EQ(out.findings[0].message,
            "prediction 5: C[5][5] / column sum = 1 / 2 = 0.5 < min_diag 0.9 (10 classes, 10 "
            "samples)");
  // Only labels and predictions were requested, with their values kept.
  ASSERT_EQ(out.plan.requests().size(), 2u);
  for (const auto& [t, r] : out.plan.requests()) EXPECT_TRUE(r.keep_values);
  // [test] with min_diag 0 and max_off_diag 0.01 the off-diagonal 1/2 fires.
  auto off = make("Confusion", {{"min_diag", "0"}, {"max_off_diag", "0.01"}});
  const auto out2 = run_rule(*off, catalog, [](std::string_view n, int64_t s, std::string_view) {
    return digits(n, s, 2);
  });
  ASSERT_EQ(where(out2.findings), (std::vector<step_tensor>{{2, "labels"}}));
  EXPECT_EQ(out2.findings[0].value, 0.5);
  EXPECT_NE(out2.findings[0].message.find("label 3 in C[3][5]"), std::string::npos)
      << out2.findings[0].message;
}

TEST(Confusion, CollectionsConcatenateInNameOrderAndCategoryNoBoundsClasses) {
  trial_folder t("cf_collections");
  t.collection("labels", {"y_b", "y_a"});
  t.collection("predictions", {"p_a", "p_b"});
  t.step(0, mode::eval, 0, {{"y_a"}, {"y_b"}, {"p_a"}, {"p_b"}, {"labels"}});
  auto catalog = t.open();
  // Concatenated: labels y_a ++ y_b = [0 0 0 1 1 | 1 2], predictions p_a ++ p_b = [0 0 | 0 1 1 1 2]
  // (different split points). The tensor named "labels" is ignored: the collection wins.
  const auto values = [](std::string_view n, int64_t, std::string_view) -> std::optional<tensor_value> {
    if (n == "y_a") return vec({0, 0, 0, 1, 1});
    if (n == "y_b") return vec({1, 2});
    if (n == "p_a") return vec({0, 0});
    if (n == "p_b") return vec({0, 1, 1, 1, 2});
    return vec({9, 9, 9, 9, 9, 9, 9});
  };
  auto rule = make("Confusion");
  EXPECT_TRUE(run_rule(*rule, catalog, values).findings.empty());
  // category_no 2: class 2 is outside and dropped; still an identity → quiet.
  auto two = make("Confusion", {{"category_no", "2"}});
  EXPECT_TRUE(run_rule(*two, catalog, values).findings.empty());
}

TEST(Confusion, MissingTensorsOrUnequalLengthsAreSkipped) {
  trial_folder t("cf_missing");
  t.step(0, mode::eval, 0, {{"labels"}});                    // no predictions
  t.step(1, mode::eval, 1, {{"labels"}, {"predictions"}});   // lengths differ
  auto catalog = t.open();
  auto rule = make("Confusion");
  const auto out = run_rule(*rule, catalog, [](std::string_view n, int64_t, std::string_view) {
    return n == "labels" ? vec({0, 1, 2}) : vec({2, 1});
  });
  EXPECT_TRUE(out.prepared.ok());
  EXPECT_TRUE(out.findings.empty());
}

trial_folder imbalance_trial(const std::string& label, int steps) {
  trial_folder t(label);
  for (int s = 0; s < steps; ++s) {
    t.step(s, mode::train, s, {{"outputs/labels"}, {"outputs/predictions"}, {"loss"}});
  }
  return t;
}

TEST(ClassImbalance, TestCase990ZerosAnd10OnesFiresAtStep3) {
  // [test] 1000 labels at step 3 — 990 zeros and 10 ones — fire at step 3 (steps 0–2 saved only
  // the loss).
  trial_folder t("ci");
  for (int s = 0; s < 3; ++s) t.step(s, mode::train, s, {{"loss"}});
  t.step(3, mode::train, 3, {{"outputs/labels"}, {"outputs/predictions"}, {"loss"}});
  auto catalog = t.open();
  const auto values = [](std::string_view name, int64_t, std::string_view) {
    if (name == "loss") return std::optional(vec({0.5}));
    std::vector<double> v(990, 0.0);
    v.insert(v.end(), 10, 1.0);
    return std::optional(vec(v));  // predictions = labels (always right)
  };
  auto rule = make("ClassImbalance");
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_TRUE(out.prepared.ok()) << out.prepared.to_string();
  ASSERT_EQ(where(out.findings), (std::vector<step_tensor>{{3, "outputs/labels"}}));
  EXPECT_EQ(out.findings[0].value, 99.0);
  EXPECT_EQ(out.findings[0].message,
            "class 0 has 990 samples, class 1 has 10: ratio 99 > threshold_imbalance 10 (1000 "
            "samples so far)");
  // Fewer samples than `samples`: not judged yet.
  auto later = make("ClassImbalance", {{"samples", "1001"}});
  EXPECT_TRUE(run_rule(*later, catalog, values).findings.empty());
}

TEST(ClassImbalance, HealthyTrialIsQuietAndMispredictionFires) {
  auto catalog = imbalance_trial("ci_healthy", 4).open();
  // 200 balanced labels per step; samples reach 500 at step 2.
  const auto balanced = [](int64_t step, bool miss) {
    std::vector<double> v;
    for (int i = 0; i < 200; ++i) v.push_back(i % 2);
    if (miss && step >= 1) {
      for (int i = 1; i < 200; i += 2) v[static_cast<std::size_t>(i)] = (i % 10 == 1) ? 1 : 0;
    }
    return vec(v);
  };
  auto healthy = make("ClassImbalance");
  EXPECT_TRUE(run_rule(*healthy, catalog, [&](std::string_view, int64_t s, std::string_view) {
                return std::optional(balanced(s, false));
              }).findings.empty());
  // Class 1 predicted right in 1 of 5 from step 1 on: after step 2, class 1 has 300 labels and
  // 100 + 2·20 = 140 hits → misprediction 1 − 140/300 = 0.533 < 0.7; after step 3 (400 labels,
  // 160 hits) 0.6; nothing fires with the default. With 0.5 it fires at steps 2 and 3.
  const auto mispredicting = [&](std::string_view n, int64_t s, std::string_view) {
    return std::optional(balanced(s, n == "outputs/predictions"));
  };
  auto rule = make("ClassImbalance");
  EXPECT_TRUE(run_rule(*rule, catalog, mispredicting).findings.empty());
  auto strict = make("ClassImbalance", {{"threshold_misprediction", "0.5"}});
  const auto out = run_rule(*strict, catalog, mispredicting);
  ASSERT_EQ(where(out.findings),
            (std::vector<step_tensor>{{2, "outputs/labels"}, {3, "outputs/labels"}}));
  EXPECT_NEAR(out.findings[0].value, 1.0 - 140.0 / 300.0, 1e-15);
  EXPECT_NEAR(out.findings[1].value, 1.0 - 160.0 / 400.0, 1e-15);
}

TEST(ClassImbalance, ArgmaxOverScores) {
  trial_folder t("ci_argmax");
  t.step(0, mode::train, 0, {{"labels"}, {"predictions"}});
  auto catalog = t.open();
  // 4 labels of 3 classes; score rows → argmax 0, 1, 0, 2: class 1 right in 1 of its 2.
  const auto values = [](std::string_view n, int64_t, std::string_view) -> std::optional<tensor_value> {
    if (n == "labels") return vec({0, 1, 1, 2});
    return tensor_value{{4, 3}, {0.9, 0.05, 0.05, 0.1, 0.8, 0.1, 0.7, 0.2, 0.1, 0.1, 0.1, 0.8}};
  };
  // Misprediction of class 1 is 0.5 > 0.4; imbalance 2/1 is below 10. samples 4 ≥ 1.
  auto rule = make("ClassImbalance", {{"argmax", "True"}, {"samples", "1"},
                                      {"threshold_misprediction", "0.4"}});
  auto out = run_rule(*rule, catalog, values);
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].value, 0.5);
  EXPECT_EQ(out.findings[0].message,
            "class 1 mispredicted in 0.5 of its 2 samples > threshold_misprediction 0.4 (4 "
            "samples so far)");
  // Without argmax the scores tensor has 12 elements for 4 labels: the step is skipped.
  auto plain = make("ClassImbalance", {{"samples", "1"}});
  EXPECT_TRUE(run_rule(*plain, catalog, values).findings.empty());
}

}  // namespace
}  // namespace trialstat::rule_testing
