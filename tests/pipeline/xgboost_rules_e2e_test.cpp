// SPDX-License-Identifier: Apache-2.0
// XGBoost-shaped trials end to end (issue 16): TreeDepth's exact depth from the string link
// tensors trees/ID, Yes, No (and the node-id fallback when they were not saved), and
// Confusion / ClassImbalance on labels and predictions that do not pair — the rule ends with
// status Error naming both shapes — or pair only through an argmax (a warning in the result).
// Trials are written by trialstat's own trial writer and evaluated by pipeline::evaluate_rules.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/reference/reference_stats.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/trial/catalog.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat {
namespace {

using strings = std::vector<std::string>;

void add(writer::trial_writer& w, const std::string& name, dtype type, std::vector<int64_t> shape,
         const std::vector<double>& values) {
  const auto bytes = reference::encode_values(type, values);
  const tensor_view view{bytes.data(), type, shape, static_cast<int64_t>(values.size()),
                         memory_kind::host};
  const status added = w.add_tensor(name, view);
  ASSERT_TRUE(added.ok()) << added.to_string();
}

void add_strings(writer::trial_writer& w, const std::string& name, const strings& values) {
  const status added = w.add_strings(name, values);
  ASSERT_TRUE(added.ok()) << added.to_string();
}

pipeline::rule_result evaluate(const std::filesystem::path& root, const std::string& rule,
                               const rules::rule_parameters& params = {}) {
  auto catalog = trial::catalog::open(root);
  EXPECT_TRUE(catalog.has_value()) << catalog.error_status().to_string();
  if (!catalog) return {};
  std::vector<pipeline::rule_invocation> invocations(1);
  auto made = rules::make_rule(rule, params);
  EXPECT_TRUE(made.has_value()) << made.error_status().to_string();
  if (!made) return {};
  invocations[0].rule = std::move(*made);
  auto results = pipeline::evaluate_rules(*catalog, invocations, pipeline::pipeline_options{});
  EXPECT_TRUE(results.has_value()) << results.error_status().to_string();
  if (!results || results->empty()) return {};
  return (*results)[0];
}

TEST(XgboostRulesEndToEnd, TreeDepthFromLinksThenNodeIdFallback) {
  const auto root = testing::make_scratch_dir("e2e_tree_depth");
  auto w = writer::trial_writer::create(root, "worker_0");
  ASSERT_TRUE(w.has_value()) << w.error_status().to_string();
  // Step 0: a tree grown in creation order — the chain 0 → 2 → 4 → 6 — depth 4, though
  // floor(log2(max id 8 + 1)) = 3. Step 1: only trees/Node saved (ids 0..8 again): the formula.
  const std::vector<double> node_ids{0, 1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE(w->begin_step(0, mode::train, 0).ok());
  add(*w, "trees/Node", dtype::int64, {9}, node_ids);
  add_strings(*w, "trees/ID", {"0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "0-6", "0-7", "0-8"});
  add_strings(*w, "trees/Yes", {"0-2", "nan", "0-4", "nan", "0-6", "nan", "0-7", "nan", "nan"});
  add_strings(*w, "trees/No", {"0-1", "nan", "0-3", "nan", "0-5", "nan", "0-8", "nan", "nan"});
  ASSERT_TRUE(w->end_step().ok());
  ASSERT_TRUE(w->begin_step(1, mode::train, 1).ok());
  add(*w, "trees/Node", dtype::int64, {9}, node_ids);
  ASSERT_TRUE(w->end_step().ok());
  ASSERT_TRUE(w->close(true).ok());

  const auto r = evaluate(root, "TreeDepth", {{"depth", "3"}});
  EXPECT_EQ(r.status, rules::rule_status::issues_found) << r.status_details;
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].step, 0);
  EXPECT_EQ(r.findings[0].tensor, "trees/Node");
  EXPECT_EQ(r.findings[0].value, 4.0);
  EXPECT_EQ(r.findings[0].message,
            "tree depth 4 (from the trees/ID, trees/Yes and trees/No links) > depth 3");
  EXPECT_EQ(r.warnings,
            (strings{"depth from the node-id formula floor(log2(max trees/Node + 1)), which "
                     "underestimates trees not numbered breadth-first, from step 1: trees/ID not "
                     "saved"}));
  // depth 2: the fallback step fires too, saying which depth it used.
  const auto low = evaluate(root, "TreeDepth", {{"depth", "2"}});
  ASSERT_EQ(low.findings.size(), 2u);
  EXPECT_EQ(low.findings[1].message,
            "tree depth floor(log2(max node id 8 + 1)) = 3 > depth 2 (node-id formula, exact only "
            "for breadth-first numbered trees: trees/ID not saved)");
}

std::filesystem::path labels_and_predictions(const std::string& label,
                                             std::vector<int64_t> prediction_shape,
                                             const std::vector<double>& predictions) {
  const auto root = testing::make_scratch_dir(label);
  auto w = writer::trial_writer::create(root, "worker_0");
  EXPECT_TRUE(w.has_value());
  for (int64_t s = 0; s < 2; ++s) {
    EXPECT_TRUE(w->begin_step(s, mode::eval, s).ok());
    add(*w, "labels", dtype::float32, {4}, {0, 1, 2, 1});
    add(*w, "predictions", dtype::float32, prediction_shape, predictions);
    EXPECT_TRUE(w->end_step().ok());
  }
  EXPECT_TRUE(w->close(true).ok());
  return root;
}

TEST(XgboostRulesEndToEnd, LabelsAndPredictionsThatDoNotPairAreAnError) {
  const auto root = labels_and_predictions("e2e_unpaired", {3}, {0, 1, 2});
  for (const std::string rule : {"Confusion", "ClassImbalance"}) {
    const auto r = evaluate(root, rule);
    EXPECT_EQ(r.status, rules::rule_status::error) << rule;
    EXPECT_TRUE(r.findings.empty());
    EXPECT_NE(r.status_details.find("labels 'labels' [4] and predictions 'predictions' [3] do not "
                                    "pair at step 0"),
              std::string::npos)
        << r.status_details;
  }
}

TEST(XgboostRulesEndToEnd, ScoresPairThroughTheArgmaxWithAWarning) {
  // softprob rows: argmax 0, 1, 2, 1 — every label right.
  const auto root = labels_and_predictions(
      "e2e_softprob", {4, 3}, {0.8, 0.1, 0.1, 0.2, 0.7, 0.1, 0.1, 0.1, 0.8, 0.3, 0.4, 0.3});
  const auto r = evaluate(root, "Confusion");
  EXPECT_EQ(r.status, rules::rule_status::no_issues_found) << r.status_details;
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.warnings, (strings{"predictions 'predictions' [4, 3] with labels 'labels' [4]: took "
                                 "the argmax over the last axis (3 classes) as the predicted "
                                 "class (from step 0)"}));
}

}  // namespace
}  // namespace trialstat
