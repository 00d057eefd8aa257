// SPDX-License-Identifier: Apache-2.0
// TreeDepth (spec/RULES.md §3.11) and FeatureImportanceOverweight (§3.20) over hand-built
// records shaped like the XGBoost hook's tensors.
#include <gtest/gtest.h>

#include "tests/rules/rule_harness.hpp"

namespace trialstat::rule_testing {
namespace {

using trialstat::mode;
using step_tensor = std::pair<int64_t, std::string>;

/// Node ids 0..max_id of the model's trees (one tree per round, ids restart per tree).
tensor_value nodes(int rounds, int max_id) {
  tensor_value v{{}, {}};
  for (int r = 0; r < rounds; ++r) {
    for (int id = 0; id <= max_id; ++id) v.data.push_back(id);
  }
  v.shape = {static_cast<int64_t>(v.data.size())};
  return v;
}

TEST(TreeDepth, FiresWhenTheDeepestTreeExceedsDepth) {
  trial_folder t("td");
  for (int s = 0; s < 3; ++s) t.step(s, mode::train, s, {{"trees/Node"}, {"trees/Gain"}});
  auto catalog = t.open();
  // Full trees of depth 3 (ids 0..14), 4 (0..30: not > 4), then 5 (0..62).
  const auto values = [](std::string_view name, int64_t step, std::string_view) {
    if (name == "trees/Gain") return std::optional(filled(3, 1000.0));
    const int max_id[] = {14, 30, 62};
    return std::optional(nodes(static_cast<int>(step) + 1, max_id[step]));
  };
  auto rule = make("TreeDepth");
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_TRUE(out.prepared.ok());
  ASSERT_EQ(where(out.findings), (std::vector<step_tensor>{{2, "trees/Node"}}));
  EXPECT_EQ(out.findings[0].value, 5.0);
  EXPECT_EQ(out.findings[0].message, "tree depth floor(log2(max node id 62 + 1)) = 5 > depth 4");
  auto shallow = make("TreeDepth", {{"depth", "2.5"}});
  EXPECT_EQ(run_rule(*shallow, catalog, values).findings.size(), 3u);
  ASSERT_EQ(out.plan.requests().size(), 1u);  // only trees/Node
}

TEST(TreeDepth, NoTreesNoFindings) {
  trial_folder t("td_none");
  t.step(0, mode::train, 0, {{"loss"}});
  auto catalog = t.open();
  auto rule = make("TreeDepth");
  const auto out = run_rule(*rule, catalog, [](auto...) { return std::optional(filled(1, 1.0)); });
  EXPECT_TRUE(out.prepared.ok());
  EXPECT_TRUE(out.findings.empty());
}

TEST(FeatureImportanceOverweight, FiresWhenFewFeaturesCarryTheModel) {
  trial_folder t("fi");
  std::vector<saved_tensor> tensors;
  for (int f = 0; f < 6; ++f) {
    tensors.push_back({"feature_importance/weight/f" + std::to_string(f)});
    tensors.push_back({"feature_importance/gain/f" + std::to_string(f)});
  }
  for (int s = 0; s < 2; ++s) t.step(s, mode::train, s, tensors);
  auto catalog = t.open();
  // Step 0: even weights (top 3 = 0.5) — healthy. Step 1: 0.05, 0.5, 0.3, 0.1, 0.03, 0.02 →
  // top 3 = 0.9 > 0.8. The gain type is skewed at both steps but is not selected.
  const auto values = [](std::string_view name, int64_t step, std::string_view) {
    const int f = name.back() - '0';
    const double skewed[] = {0.05, 0.5, 0.3, 0.1, 0.03, 0.02};
    const bool gain = name.find("/gain/") != std::string_view::npos;
    const double v = (gain || step == 1) ? skewed[f] : 1.0 / 6.0;
    return std::optional(tensor_value{{}, {v}});
  };
  auto rule = make("FeatureImportanceOverweight");
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_TRUE(out.prepared.ok());
  ASSERT_EQ(where(out.findings), (std::vector<step_tensor>{{1, "feature_importance/weight/f1"}}));
  EXPECT_NEAR(out.findings[0].value, 0.9, 1e-15);
  EXPECT_EQ(out.findings[0].message,
            "the 3 most important of 6 features hold 0.9 of the total importance 1 > threshold 0.8");
  // nfeatures 1: 0.5 is not > 0.8; regex on gain + threshold 0.45: both steps.
  auto one = make("FeatureImportanceOverweight", {{"nfeatures", "1"}});
  EXPECT_TRUE(run_rule(*one, catalog, values).findings.empty());
  auto gain = make("FeatureImportanceOverweight",
                   {{"tensor_regex", ".*feature_importance/gain"}, {"nfeatures", "1"},
                    {"threshold", "0.45"}});
  EXPECT_EQ(where(run_rule(*gain, catalog, values).findings),
            (std::vector<step_tensor>{{0, "feature_importance/gain/f1"},
                                      {1, "feature_importance/gain/f1"}}));
}

}  // namespace
}  // namespace trialstat::rule_testing
