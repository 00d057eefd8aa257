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

TEST(Confusion, MissingTensorsAreSkippedAndUnequalLengthsAreAnError) {
  trial_folder t("cf_missing");
  t.step(0, mode::eval, 0, {{"labels"}});                    // no predictions: skipped
  t.step(1, mode::eval, 1, {{"labels"}, {"predictions"}});   // lengths differ: Error
  auto catalog = t.open();
  auto rule = make("Confusion");
  const auto out = run_rule(*rule, catalog, [](std::string_view n, int64_t, std::string_view) {
    return n == "labels" ? vec({0, 1, 2}) : vec({2, 1});
  });
  EXPECT_TRUE(out.prepared.ok());
  EXPECT_TRUE(out.findings.empty());
  EXPECT_EQ(rule->evaluation_status().code(), error_code::invalid_argument);
  EXPECT_EQ(rule->evaluation_status().message(),
            "labels 'labels' [3] and predictions 'predictions' [2] do not pair at step 1: 2 "
            "prediction values for 3 labels; expected one class or probability per label, or "
            "scores [3, C] (argmax over C)");
}

TEST(Confusion, ScoresPerClassTakeTheArgmaxWithAWarning) {
  trial_folder t("cf_scores");
  for (int s = 0; s < 2; ++s) t.step(s, mode::eval, s, {{"labels"}, {"predictions"}});
  auto catalog = t.open();
  // multi:softprob: predictions [4, 3] beside labels [4]; argmax rows 0, 1, 2, 2 — label 1 of
  // row 3 predicted 2: column 2 holds 1 of 2 on its diagonal → fires with the defaults.
  const auto values = [](std::string_view n, int64_t, std::string_view) -> std::optional<tensor_value> {
    if (n == "labels") return vec({0, 1, 2, 1});
    return tensor_value{{4, 3}, {0.8, 0.1, 0.1, 0.2, 0.7, 0.1, 0.1, 0.1, 0.8, 0.3, 0.3, 0.4}};
  };
  auto rule = make("Confusion");
  const auto out = run_rule(*rule, catalog, values);
  EXPECT_TRUE(rule->evaluation_status().ok()) << rule->evaluation_status().to_string();
  ASSERT_EQ(where(out.findings), (std::vector<step_tensor>{{0, "labels"}, {1, "labels"}}));
  EXPECT_EQ(out.findings[0].message,
            "prediction 2: C[2][2] / column sum = 1 / 2 = 0.5 < min_diag 0.9 (3 classes, 4 "
            "samples)");
  // One warning for the whole run, taken once.
  EXPECT_EQ(rule->take_warnings(),
            (std::vector<std::string>{"predictions 'predictions' [4, 3] with labels 'labels' [4]: "
                                      "took the argmax over the last axis (3 classes) as the "
                                      "predicted class (from step 0)"}));
  EXPECT_TRUE(rule->take_warnings().empty());
}

TEST(Confusion, ProbabilitiesCastToIntWarnAndPredictionThresholdReadsThem) {
  trial_folder t("cf_probabilities");
  t.step(0, mode::eval, 0, {{"labels"}, {"predictions"}});
  auto catalog = t.open();
  // binary:logistic: probabilities. Cast to int every one is class 0 (column 0: 2 of 4 right →
  // fires); with prediction_threshold 0.5 they read 0, 0, 1, 1: the identity, quiet.
  const auto values = [](std::string_view n, int64_t, std::string_view) -> std::optional<tensor_value> {
    if (n == "labels") return vec({0, 0, 1, 1});
    return vec({0.1, 0.4, 0.6, 0.9});
  };
  auto cast = make("Confusion");
  const auto out = run_rule(*cast, catalog, values);
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].value, 0.5);
  const auto warnings = cast->take_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "predictions 'predictions' [4] look like probabilities (floating values within [0, 1], "
            "not all whole numbers) and are cast to int, so every value below 1 is class 0 (from "
            "step 0); set prediction_threshold (e.g. 0.5) to read them as binary probabilities");
  auto threshold = make("Confusion", {{"prediction_threshold", "0.5"}});
  EXPECT_TRUE(run_rule(*threshold, catalog, values).findings.empty());
  EXPECT_TRUE(threshold->take_warnings().empty());
  // Whole numbers in [0, 1] (multi:softmax classes as float) are classes, not probabilities.
  auto classes = make("Confusion");
  run_rule(*classes, catalog, [](std::string_view n, int64_t, std::string_view) {
    return std::optional(vec(n == "labels" ? std::vector<double>{0, 0, 1, 1}
                                           : std::vector<double>{0, 0, 1, 1}));
  });
  EXPECT_TRUE(classes->take_warnings().empty());
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
            "class 1 mispredicted in 1 of its 2 samples (rate 0.5) > threshold_misprediction 0.4 "
            "(4 samples so far)");
  EXPECT_TRUE(rule->take_warnings().empty());
  // Without argmax the scores [4, 3] beside labels [4] take the argmax anyway, with a warning.
  auto plain = make("ClassImbalance", {{"samples", "1"}, {"threshold_misprediction", "0.4"}});
  const auto implicit = run_rule(*plain, catalog, values);
  ASSERT_EQ(implicit.findings.size(), 1u);
  EXPECT_EQ(implicit.findings[0].message, out.findings[0].message);
  EXPECT_EQ(plain->take_warnings().size(), 1u);
}

TEST(ClassImbalance, ShapesThatDoNotPairAreAnError) {
  trial_folder t("ci_unpaired");
  t.step(0, mode::train, 0, {{"labels"}, {"predictions"}});
  auto catalog = t.open();
  // argmax=True over predictions [30] (binary output, one value per label) reduces them to one
  // class for 30 labels.
  const auto values = [](std::string_view, int64_t, std::string_view) {
    return std::optional(filled(30, 1.0));
  };
  auto rule = make("ClassImbalance", {{"argmax", "True"}, {"samples", "1"}});
  const auto out = run_rule(*rule, catalog, values);
  EXPECT_TRUE(out.findings.empty());
  EXPECT_EQ(rule->evaluation_status().message(),
            "labels 'labels' [30] and predictions 'predictions' [30] do not pair at step 0: the "
            "argmax over the last axis (30) gives 1 predicted classes for 30 labels");
  // Labels [6] with predictions [4, 3]: neither one per label nor [6, C].
  auto plain = make("ClassImbalance", {{"samples", "1"}});
  run_rule(*plain, catalog, [](std::string_view n, int64_t, std::string_view) {
    return std::optional(n == "labels" ? filled(6, 1.0) : tensor_value{{4, 3}, std::vector<double>(12, 0.5)});
  });
  EXPECT_EQ(plain->evaluation_status().message(),
            "labels 'labels' [6] and predictions 'predictions' [4, 3] do not pair at step 0: 12 "
            "prediction values for 6 labels; expected one class or probability per label, or "
            "scores [6, C] (argmax over C)");
}

TEST(ClassImbalance, PredictionThresholdCountsBinaryProbabilities) {
  trial_folder t("ci_threshold");
  t.step(0, mode::train, 0, {{"labels"}, {"predictions"}});
  auto catalog = t.open();
  // 95/5: 95 negatives predicted 0.2; 5 positives, 3 of them with p > 0.5.
  const auto values = [](std::string_view n, int64_t, std::string_view) {
    std::vector<double> labels(95, 0.0), p(95, 0.2);
    labels.insert(labels.end(), 5, 1.0);
    p.insert(p.end(), {0.9, 0.7, 0.6, 0.3, 0.1});
    return std::optional(vec(n == "labels" ? labels : p));
  };
  // Cast to int: class 1 is 100% mispredicted, with a warning.
  auto cast = make("ClassImbalance", {{"samples", "1"}, {"threshold_imbalance", "100"}});
  const auto out = run_rule(*cast, catalog, values);
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].message,
            "class 1 mispredicted in 5 of its 5 samples (rate 1) > threshold_misprediction 0.7 "
            "(100 samples so far)");
  EXPECT_EQ(cast->take_warnings().size(), 1u);
  // Threshold 0.5: 2 of 5 missed (rate 0.4) — quiet; no warning.
  auto threshold = make("ClassImbalance", {{"samples", "1"}, {"threshold_imbalance", "100"},
                                           {"prediction_threshold", "0.5"}});
  EXPECT_TRUE(run_rule(*threshold, catalog, values).findings.empty());
  EXPECT_TRUE(threshold->take_warnings().empty());
  // prediction_threshold with argmax=True is a parameter error.
  const auto both = trialstat::rules::make_rule(
      "ClassImbalance", {{"argmax", "True"}, {"prediction_threshold", "0.5"}});
  ASSERT_FALSE(both.has_value());
  EXPECT_NE(both.error_status().message().find("prediction_threshold"), std::string::npos);
}

}  // namespace
}  // namespace trialstat::rule_testing
