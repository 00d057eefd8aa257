// SPDX-License-Identifier: Apache-2.0
// TreeDepth (spec/RULES.md §3.11) and FeatureImportanceOverweight (§3.20) over hand-built
// records shaped like the XGBoost hook's tensors.
#include <gtest/gtest.h>

#include "host/rules/tree_links.hpp"
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
  // No trees/ID, Yes, No saved: the node-id formula, said in the message and a warning.
  EXPECT_EQ(out.findings[0].message,
            "tree depth floor(log2(max node id 62 + 1)) = 5 > depth 4 (node-id formula, exact "
            "only for breadth-first numbered trees: trees/ID not saved)");
  EXPECT_EQ(rule->take_warnings(),
            (std::vector<std::string>{"depth from the node-id formula floor(log2(max trees/Node + "
                                      "1)), which underestimates trees not numbered "
                                      "breadth-first, from step 0: trees/ID not saved"}));
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

using names = std::vector<std::string>;

TEST(TreeDepthLinks, ExactDepthFollowsTheLinksNotTheNodeIds) {
  // xgboost numbers nodes in creation order: a chain 0 → 2 → 4 → 6 (yes side) with leaves
  // 1, 3, 5, 7, 8: depth 4, while floor(log2(max id 8 + 1)) = 3.
  const names ids{"0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "0-6", "0-7", "0-8"};
  const names yes{"0-2", "nan", "0-4", "nan", "0-6", "nan", "0-7", "nan", "nan"};
  const names no{"0-1", "nan", "0-3", "nan", "0-5", "nan", "0-8", "nan", "nan"};
  const auto depth = trialstat::rules::detail::tree_depth_from_links(ids, yes, no);
  ASSERT_TRUE(depth.has_value()) << depth.error_status().to_string();
  EXPECT_EQ(*depth, 4);
  // A lone leaf: depth 0. Two trees: the deeper one counts.
  EXPECT_EQ(*trialstat::rules::detail::tree_depth_from_links(names{"3-0"}, names{"nan"}, names{""}), 0);
  const names two_ids{"0-0", "0-1", "0-2", "1-0"};
  const names two_yes{"0-1", "nan", "nan", "nan"};
  const names two_no{"0-2", "nan", "nan", "nan"};
  EXPECT_EQ(*trialstat::rules::detail::tree_depth_from_links(two_ids, two_yes, two_no), 1);
}

TEST(TreeDepthLinks, BrokenTablesAreErrors) {
  using trialstat::rules::detail::tree_depth_from_links;
  const auto message = [](const names& ids, const names& yes, const names& no) {
    const auto d = tree_depth_from_links(ids, yes, no);
    return d.has_value() ? std::string("ok") : d.error_status().message();
  };
  EXPECT_EQ(message({"0-0"}, {"nan"}, {}), "the link columns differ in length: 1 ids, 1 yes, 0 no");
  EXPECT_EQ(message({}, {}, {}), "no nodes");
  EXPECT_EQ(message({"0-0", "0-0"}, {"nan", "nan"}, {"nan", "nan"}), "node id '0-0' repeats");
  EXPECT_EQ(message({"0-0"}, {"0-9"}, {"nan"}), "node '0-0' links to '0-9', which is not a node");
  EXPECT_EQ(message({"0-0", "0-1"}, {"0-1", "nan"}, {"0-1", "nan"}), "node '0-1' has two parents");
  EXPECT_EQ(message({"0-0", "0-1"}, {"0-1", "0-0"}, {"nan", "nan"}),
            "the links form a cycle (0 of 2 nodes reachable from a root)");
}

TEST(FeatureImportanceOverweight, AllFeaturesHoldExactlyOne) {
  // 64 importances normalised by their sum (as the hook writes them), in an order whose
  // name-order sum differs from the sorted-order sum in the last bit: nfeatures ≥ 64 must give
  // exactly 1, so threshold 1.0 never fires.
  trial_folder t("fi_all");
  std::vector<saved_tensor> tensors;
  for (int f = 0; f < 64; ++f) tensors.push_back({"feature_importance/weight/f" + std::to_string(f)});
  t.step(0, mode::train, 0, tensors);
  auto catalog = t.open();
  std::vector<double> raw;
  double sum = 0;
  for (int f = 0; f < 64; ++f) {
    raw.push_back(1.0 / (3.0 + f * 0.7) + (f % 7) * 0.013);
    sum += raw.back();
  }
  const auto values = [&](std::string_view name, int64_t, std::string_view) {
    const int f = std::stoi(std::string(name.substr(name.rfind('f') + 1)));
    return std::optional(tensor_value{{}, {raw[static_cast<std::size_t>(f)] / sum}});
  };
  for (const char* k : {"64", "100"}) {
    auto rule = make("FeatureImportanceOverweight", {{"nfeatures", k}, {"threshold", "1.0"}});
    EXPECT_TRUE(run_rule(*rule, catalog, values).findings.empty()) << k;
    auto below = make("FeatureImportanceOverweight", {{"nfeatures", k}, {"threshold", "0.999999"}});
    const auto out = run_rule(*below, catalog, values);
    ASSERT_EQ(out.findings.size(), 1u);
    EXPECT_EQ(out.findings[0].value, 1.0);
  }
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
