// SPDX-License-Identifier: Apache-2.0
// Multi-worker conventions (spec/RULES.md §2, TRIAL_API §5): the default worker is the
// lexicographically smallest worker with a record; evaluate_all_workers reports every worker.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/rules/rule_harness.hpp"

namespace trialstat::rule_testing {
namespace {

using trialstat::mode;

TEST(RuleWorkers, DefaultWorkerIsTheSmallestName) {
  trial_folder t("workers");
  // worker_10 < worker_2 lexicographically (like smdebug). Step 1: only worker_2 wrote.
  t.step(0, mode::train, 0, {{"w"}}, "worker_2").step(0, mode::train, 0, {{"w"}}, "worker_10");
  t.step(1, mode::train, 1, {{"w"}}, "worker_2");
  auto catalog = t.open();
  // NaN in worker_2's tensor only.
  const auto values = [](std::string_view, int64_t, std::string_view worker) {
    tensor_value v{{2}, {1.0, 2.0}};
    if (worker == "worker_2") v.data[0] = std::numeric_limits<double>::quiet_NaN();
    return std::optional(v);
  };
  auto rule = make("ExplodingTensor");
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_EQ(out.findings.size(), 1u);  // step 0 judged on worker_10 (clean); step 1 on worker_2
  EXPECT_EQ(out.findings[0].step, 1);
  EXPECT_EQ(out.findings[0].worker, "worker_2");

  auto all = make("ExplodingTensor", {{"evaluate_all_workers", "True"}});
  const auto out_all = run_rule(*all, catalog, values);
  ASSERT_EQ(out_all.findings.size(), 2u);
  EXPECT_EQ(out_all.findings[0].step, 0);
  EXPECT_EQ(out_all.findings[0].worker, "worker_2");
  EXPECT_EQ(out_all.findings[1].step, 1);
}

TEST(RuleWorkers, PairwiseRulesPairWithinAWorker) {
  trial_folder t("workers_pairs");
  t.collection("weights", {"w"});
  for (int s = 0; s < 3; ++s) {
    t.step(s, mode::train, s, {{"w"}}, "worker_0").step(s, mode::train, s, {{"w"}}, "worker_1");
  }
  auto catalog = t.open();
  // worker_0's weights never change; worker_1's change a lot every step.
  const auto values = [](std::string_view, int64_t step, std::string_view worker) {
    const double scale = worker == "worker_0" ? 1.0 : std::pow(100.0, static_cast<double>(step));
    return std::optional(tensor_value{{2}, {scale, -scale}});
  };
  auto all = make("WeightUpdateRatio", {{"evaluate_all_workers", "True"}});
  const auto out = run_rule(*all, catalog, values);
  ASSERT_EQ(out.findings.size(), 4u);  // steps 1, 2 × (worker_0 too small, worker_1 too large)
  EXPECT_EQ(out.findings[0].worker, "worker_0");
  EXPECT_EQ(out.findings[0].value, 0.0);
  EXPECT_EQ(out.findings[1].worker, "worker_1");
  EXPECT_NEAR(out.findings[1].value, 99.0, 1e-6);  // ‖100W − W‖ / ‖W‖

  auto unchanged = make("UnchangedTensor", {{"collection_names", "weights"}});
  const auto out_unchanged = run_rule(*unchanged, catalog, values);
  ASSERT_EQ(out_unchanged.findings.size(), 1u);  // default worker_0, steps 0..2 identical
  EXPECT_EQ(out_unchanged.findings[0].step, 2);
  EXPECT_EQ(out_unchanged.findings[0].worker, "worker_0");
}

}  // namespace
}  // namespace trialstat::rule_testing
