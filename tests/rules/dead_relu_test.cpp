// SPDX-License-Identifier: Apache-2.0
// DeadRelu (spec/RULES.md §3.9).
#include <gtest/gtest.h>

#include "tests/rules/rule_harness.hpp"

namespace trialstat::rule_testing {
namespace {

using trialstat::mode;

/// A [batch, nodes] activation where node j is positive in `active[j]` of the batch rows.
tensor_value activations(int64_t batch, const std::vector<int64_t>& active) {
  const auto nodes = static_cast<int64_t>(active.size());
  tensor_value v{{batch, nodes}, std::vector<double>(static_cast<std::size_t>(batch * nodes), 0.0)};
  for (int64_t j = 0; j < nodes; ++j) {
    for (int64_t i = 0; i < active[static_cast<std::size_t>(j)]; ++i) {
      v.data[static_cast<std::size_t>(i * nodes + j)] = 0.5 + static_cast<double>(i);
    }
    // The inactive rows of a node are zero or negative (ReLU outputs are ≥ 0; inputs may not be).
    if (active[static_cast<std::size_t>(j)] < batch) {
      v.data[static_cast<std::size_t>((batch - 1) * nodes + j)] = -0.0;
    }
  }
  return v;
}

trial_folder relu_trial(const std::string& label) {
  trial_folder t(label);
  t.collection("relu_output", {}, {".*relu_output"});
  for (int s = 0; s < 4; ++s) t.step(s, mode::train, s, {{"Net_relu1_relu_output_0"}, {"fc.weight"}});
  return t;
}

std::optional<tensor_value> values(std::string_view name, int64_t step, std::string_view) {
  if (name == "fc.weight") return filled(8, 0.0);  // not a ReLU output: never judged
  switch (step) {
    case 0: return activations(200, {200, 150, 100, 50});  // healthy
    case 1: return activations(200, {0, 1, 0, 200});       // 3 of 4 dead (1/200 = 0.5% < 1%)
    case 2: return activations(200, {0, 0, 2, 200});       // 2 of 4 dead: 50%, not > 50%
    default: return activations(10, {0, 0, 0, 0});         // all-zero layer
  }
}

TEST(DeadRelu, FiresWhenMostNodesAreInactive) {
  auto catalog = relu_trial("dr").open();
  auto rule = make("DeadRelu");
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_TRUE(out.prepared.ok());
  ASSERT_EQ(where(out.findings), (std::vector<std::pair<int64_t, std::string>>{
                                     {1, "Net_relu1_relu_output_0"}, {3, "Net_relu1_relu_output_0"}}));
  EXPECT_EQ(out.findings[0].value, 75.0);
  EXPECT_EQ(out.findings[0].message,
            "dead nodes = 75% (3 of 4, active in < 1% of batch 200) > threshold_layer 50%");
  EXPECT_EQ(out.findings[1].value, 100.0);
  // Only the ReLU output was requested, with positive counts along axis 0.
  ASSERT_EQ(out.plan.requests().size(), 1u);
  const auto& request = out.plan.requests().begin()->second;
  ASSERT_EQ(request.axis0.size(), 1u);
  EXPECT_EQ(request.axis0[0].what, stats::axis0_predicate::kind::positive);
}

TEST(DeadRelu, Thresholds) {
  auto catalog = relu_trial("dr_thresholds").open();
  // threshold_inactivity 0.4%: the node active in 1/200 = 0.5% is alive → 2 of 4 dead at step 1.
  auto lenient = make("DeadRelu", {{"threshold_inactivity", "0.4"}});
  EXPECT_EQ(where(run_rule(*lenient, catalog, values).findings),
            (std::vector<std::pair<int64_t, std::string>>{{3, "Net_relu1_relu_output_0"}}));
  // threshold_layer 49: 50% dead fires too.
  auto strict = make("DeadRelu", {{"threshold_layer", "49"}});
  EXPECT_EQ(run_rule(*strict, catalog, values).findings.size(), 3u);
}

TEST(DeadRelu, RankOneTensorsHaveOneNodePerElement) {
  trial_folder t("dr_rank1");
  t.step(0, mode::train, 0, {{"relu_output"}});
  auto catalog = t.open();
  auto rule = make("DeadRelu", {{"tensor_regex", "relu"}});
  const auto out = run_rule(*rule, catalog, [](auto...) {
    return std::optional(tensor_value{{4}, {0.0, 0.0, 1.0, -2.0}});  // batch 1: 3 of 4 dead
  });
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].value, 75.0);
}

}  // namespace
}  // namespace trialstat::rule_testing
