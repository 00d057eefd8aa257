// SPDX-License-Identifier: Apache-2.0
// Overfit (spec/RULES.md §3.13) and Overtraining (§3.15) over hand-built loss records.
#include <gtest/gtest.h>

#include <map>

#include "tests/rules/rule_harness.hpp"

namespace trialstat::rule_testing {
namespace {

using trialstat::mode;
using step_tensor = std::pair<int64_t, std::string>;

/// Global steps with their mode and the loss value saved there.
struct loss_point {
  int64_t step;
  mode m;
  double loss;
};


trial::catalog make_loss_trial(const std::string& label, const std::vector<loss_point>& points,
                               std::map<int64_t, double>& losses, bool with_collection = true) {
  trial_folder t(label);
  if (with_collection) t.collection("losses", {"loss"});
  std::map<mode, int64_t> mode_steps;
  for (const auto& p : points) {
    t.step(p.step, p.m, mode_steps[p.m]++, {{"loss"}, {"weight"}});
    losses[p.step] = p.loss;
  }
  return t.open();
}

value_source loss_values(const std::map<int64_t, double>& losses) {
  return [&losses](std::string_view name, int64_t step, std::string_view) -> std::optional<tensor_value> {
    if (name == "weight") return filled(4, 0.5);  // not a one-element tensor: never judged
    return tensor_value{{}, {losses.at(step)}};
  };
}

TEST(Overfit, FiresWhenValidationLossExceedsTrainingLoss) {
  // TRAIN 0–4 at 1.0, EVAL 5–6 at 1.05 (+5 %), TRAIN 7–9 at 0.5, EVAL 10–11 at 0.8 and 0.9:
  // at 10 v = 0.8, t = 0.5 → 0.6; at 11 v = 0.85 → 0.7.
  std::vector<loss_point> points;
  for (int s = 0; s < 5; ++s) points.push_back({s, mode::train, 1.0});
  points.push_back({5, mode::eval, 1.05});
  points.push_back({6, mode::eval, 1.05});
  for (int s = 7; s < 10; ++s) points.push_back({s, mode::train, 0.5});
  points.push_back({10, mode::eval, 0.8});
  points.push_back({11, mode::eval, 0.9});
  std::map<int64_t, double> losses;
  auto catalog = make_loss_trial("of", points, losses);
  auto rule = make("Overfit");
  const auto out = run_rule(*rule, catalog, loss_values(losses));
  ASSERT_TRUE(out.prepared.ok());
  ASSERT_EQ(where(out.findings), (std::vector<step_tensor>{{10, "loss"}, {11, "loss"}}));
  EXPECT_DOUBLE_EQ(out.findings[0].value, 0.6);
  EXPECT_DOUBLE_EQ(out.findings[1].value, (0.85 - 0.5) / 0.5);
  // patience 2: the second consecutive evaluation above the threshold; start_step 11 likewise.
  auto patient = make("Overfit", {{"patience", "2"}});
  EXPECT_EQ(where(run_rule(*patient, catalog, loss_values(losses)).findings),
            (std::vector<step_tensor>{{11, "loss"}}));
  auto late = make("Overfit", {{"start_step", "11"}});
  EXPECT_EQ(where(run_rule(*late, catalog, loss_values(losses)).findings),
            (std::vector<step_tensor>{{11, "loss"}}));
  // ratio_threshold 0.01: the first evaluation phase (+5 %) fires too.
  auto tight = make("Overfit", {{"ratio_threshold", "0.01"}});
  EXPECT_EQ(run_rule(*tight, catalog, loss_values(losses)).findings.size(), 4u);
}

TEST(Overfit, HealthyTrialIsQuiet) {
  std::vector<loss_point> points;
  double loss = 2.0;
  for (int s = 0; s < 30; ++s) {
    const bool eval = s % 10 >= 8;
    points.push_back({s, eval ? mode::eval : mode::train, eval ? loss * 1.02 : loss});
    loss *= 0.95;
  }
  std::map<int64_t, double> losses;
  auto catalog = make_loss_trial("of_healthy", points, losses, /*with_collection=*/false);
  auto rule = make("Overfit");
  const auto out = run_rule(*rule, catalog, loss_values(losses));
  ASSERT_TRUE(out.prepared.ok());
  EXPECT_TRUE(out.findings.empty());
  // Without a losses collection every tensor was requested (only scalars are judged).
  EXPECT_EQ(out.plan.requests().size(), 2u);
}

TEST(Overtraining, FiresAfterPatienceSavesWithoutImprovement) {
  // TRAIN: 1.0, 0.9, 0.8, then 0.795 ×5 (improvements of 0.005 < delta 0.01 do not count).
  std::vector<loss_point> points = {{0, mode::train, 1.0}, {1, mode::train, 0.9},
                                    {2, mode::train, 0.8}};
  for (int s = 3; s < 8; ++s) points.push_back({s, mode::train, 0.795});
  // EVAL: 10 saves, each 0.02 better (healthy).
  for (int s = 8; s < 18; ++s) points.push_back({s, mode::eval, 1.0 - 0.02 * (s - 8)});
  std::map<int64_t, double> losses;
  auto catalog = make_loss_trial("ot", points, losses);
  auto rule = make("Overtraining");
  const auto out = run_rule(*rule, catalog, loss_values(losses));
  ASSERT_TRUE(out.prepared.ok());
  ASSERT_EQ(where(out.findings), (std::vector<step_tensor>{{7, "loss"}}));
  EXPECT_EQ(out.findings[0].value, 5.0);
  EXPECT_EQ(out.findings[0].message,
            "training loss has not improved by more than delta 0.01 on its best 0.8 for 5 saved "
            "steps (>= patience_train 5)");
  // delta 0.001: the 0.005 improvement counts once → the counter restarts at step 3.
  auto fine = make("Overtraining", {{"delta", "0.001"}});
  EXPECT_TRUE(run_rule(*fine, catalog, loss_values(losses)).findings.empty());
  // patience_validation 3 with a flat EVAL loss fires on EVAL saves.
  std::vector<loss_point> flat = {{0, mode::eval, 1.0}, {1, mode::eval, 1.0},
                                  {2, mode::eval, 1.0}, {3, mode::eval, 1.0}};
  std::map<int64_t, double> flat_losses;
  auto flat_catalog = make_loss_trial("ot_eval", flat, flat_losses);
  auto eval_rule = make("Overtraining", {{"patience_validation", "3"}});
  EXPECT_EQ(where(run_rule(*eval_rule, flat_catalog, loss_values(flat_losses)).findings),
            (std::vector<step_tensor>{{3, "loss"}}));
}

}  // namespace
}  // namespace trialstat::rule_testing
