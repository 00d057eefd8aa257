// SPDX-License-Identifier: Apache-2.0
// SaturatedActivation (spec/RULES.md §3.17), NLPSequenceRatio (§3.18), CheckInputImages (§3.8)
// and PoorWeightInitialization (§3.16) over hand-built records.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/rules/rule_harness.hpp"

namespace trialstat::rule_testing {
namespace {

using trialstat::mode;
using step_tensor = std::pair<int64_t, std::string>;

/// [batch, nodes] where node j is `inside[j]` rows at 0.5 and the rest at `outside`.
tensor_value layer(int64_t batch, const std::vector<int64_t>& inside, double outside) {
  const auto nodes = static_cast<int64_t>(inside.size());
  tensor_value v{{batch, nodes}, std::vector<double>(static_cast<std::size_t>(batch * nodes), outside)};
  for (int64_t j = 0; j < nodes; ++j) {
    for (int64_t i = 0; i < inside[static_cast<std::size_t>(j)]; ++i) {
      v.data[static_cast<std::size_t>(i * nodes + j)] = 0.5;
    }
  }
  return v;
}

TEST(SaturatedActivation, FiresOnTheSaturatedLayerByKind) {
  trial_folder t("sa");
  for (int s = 0; s < 3; ++s) {
    t.step(s, mode::train, s, {{"net.tanh1_tanh_input"}, {"net.sig_sigmoid_input"}, {"net.fc"}});
  }
  auto catalog = t.open();
  const auto values = [](std::string_view name, int64_t step, std::string_view) {
    if (name == "net.fc") return std::optional(filled(4, 100.0));
    const bool tanh = name.find("tanh") != std::string_view::npos;
    // Step 1: the tanh layer saturates (|x| = 12 ≥ 9.4999) in 3 of 4 nodes; −20 stays inside
    // the sigmoid range (−23, 17). Step 2: the sigmoid layer sees −30 in every node.
    if (step == 1 && tanh) return std::optional(layer(100, {100, 0, 0, 0}, 12.0));
    if (step == 2 && !tanh) return std::optional(layer(100, {0, 0, 0, 0}, -30.0));
    return std::optional(layer(100, {100, 60, 100, 100}, tanh ? 5.0 : -20.0));
  };
  auto rule = make("SaturatedActivation");
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_TRUE(out.prepared.ok()) << out.prepared.to_string();
  ASSERT_EQ(where(out.findings), (std::vector<step_tensor>{{1, "net.tanh1_tanh_input"},
                                                           {2, "net.sig_sigmoid_input"}}));
  EXPECT_EQ(out.findings[0].value, 75.0);
  EXPECT_EQ(out.findings[0].message,
            "saturated nodes = 75% (3 of 4, inside (-9.4999, 9.4999) in < 1% of batch 100) > "
            "threshold_layer 50%");
  EXPECT_EQ(out.findings[1].value, 100.0);
  // Each layer got an interval predicate with its kind's bounds.
  const auto tanh_id = *catalog.find_tensor("net.tanh1_tanh_input");
  ASSERT_EQ(out.plan.find(tanh_id)->axis0.size(), 1u);
  EXPECT_EQ(out.plan.find(tanh_id)->axis0[0].hi, 9.4999);
  // Narrower tanh bounds in the older tuple form: 0.5 lies outside (−0.4, 0.4), so every tanh
  // node is saturated at every step.
  auto narrow = make("SaturatedActivation", {{"threshold_tanh", "(-0.4, 0.4)"}});
  EXPECT_EQ(where(run_rule(*narrow, catalog, values).findings),
            (std::vector<step_tensor>{{0, "net.tanh1_tanh_input"},
                                      {1, "net.tanh1_tanh_input"},
                                      {2, "net.sig_sigmoid_input"},  // name order
                                      {2, "net.tanh1_tanh_input"}}));
}

TEST(NLPSequenceRatio, FiresWhenPaddingDominates) {
  trial_folder t("nlp");
  for (int s = 0; s < 3; ++s) t.step(s, mode::train, s, {{"model_embedding0_input_0"}, {"other"}});
  auto catalog = t.open();
  // [4, 10] token ids; `zeros` of the 40 are padding (0), the rest 1..9, token 7 `sevens` times.
  const auto tokens = [](int zeros, int sevens) {
    tensor_value v{{4, 10}, {}};
    for (int i = 0; i < 40; ++i) v.data.push_back(i < zeros ? 0.0 : (i < zeros + sevens ? 7.0 : 1.0 + i % 6));
    return v;
  };
  const auto values = [&](std::string_view name, int64_t step, std::string_view) {
    if (name == "other") return std::optional(filled(40, 0.0));  // not selected
    if (step == 0) return std::optional(tokens(12, 0));   // 30 % padding: healthy
    if (step == 1) return std::optional(tokens(24, 0));   // 60 %: fires
    return std::optional(tokens(20, 10));                 // 50 % is not > 50 %
  };
  auto rule = make("NLPSequenceRatio");
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_TRUE(out.prepared.ok());
  ASSERT_EQ(where(out.findings), (std::vector<step_tensor>{{1, "model_embedding0_input_0"}}));
  EXPECT_EQ(out.findings[0].value, 60.0);
  EXPECT_EQ(out.findings[0].message, "token 0: 60% (24 of 40) > 50%");
  // Two tokens, one threshold (repeated): token 7 at 25 % never exceeds 20 %? It does at step 2.
  auto two = make("NLPSequenceRatio", {{"token_values", "0,7"}, {"token_thresholds_percent", "20"}});
  const auto out2 = run_rule(*two, catalog, values);
  ASSERT_EQ(where(out2.findings), (std::vector<step_tensor>{{0, "model_embedding0_input_0"},
                                                            {1, "model_embedding0_input_0"},
                                                            {2, "model_embedding0_input_0"}}));
  EXPECT_EQ(out2.findings[2].message, "token 0: 50% (20 of 40) > 20%; token 7: 25% (10 of 40) > 20%");
}

/// [batch, 3, 2, 2] images whose channel c holds `mean[c]` ± 0.5 (alternating).
tensor_value images(int64_t batch, const std::vector<double>& mean) {
  tensor_value v{{batch, 3, 2, 2}, {}};
  for (int64_t b = 0; b < batch; ++b) {
    for (int c = 0; c < 3; ++c) {
      for (int k = 0; k < 4; ++k) v.data.push_back(mean[static_cast<std::size_t>(c)] + (k % 2 ? 0.5 : -0.5));
    }
  }
  return v;
}

TEST(CheckInputImages, FiresOnceEnoughSamplesShowUnnormalizedChannels) {
  trial_folder t("cii");
  for (int s = 0; s < 4; ++s) t.step(s, mode::train, s, {{"net_hybridsequential0_input_0"}});
  auto catalog = t.open();
  // 200 samples per step: the running totals reach 500 samples at step 2.
  auto raw = make("CheckInputImages");
  const auto out = run_rule(*raw, catalog, [](auto...) {
    return std::optional(images(200, {0.0, 0.1, 127.5}));  // channel 2 is raw pixels
  });
  ASSERT_TRUE(out.prepared.ok());
  ASSERT_EQ(where(out.findings), (std::vector<step_tensor>{{2, "net_hybridsequential0_input_0"},
                                                           {3, "net_hybridsequential0_input_0"}}));
  EXPECT_EQ(out.findings[0].value, 127.5);
  EXPECT_EQ(out.findings[0].message,
            "|mean| of channel 2 (axis 1) over 600 samples = 127.5 > threshold_mean 0.2 (inputs "
            "not normalized)");
  // Normalised inputs are quiet.
  auto healthy = make("CheckInputImages");
  EXPECT_TRUE(run_rule(*healthy, catalog, [](auto...) {
                return std::optional(images(200, {0.05, -0.1, 0.15}));
              }).findings.empty());
  // The axis is a parameter (Python-style): along the last axis (size 2) each "channel" averages
  // all three colour channels ∓ 0.5 → |(0 + 0.1 + 127.5)/3 ∓ 0.5| > 0.2 from the first step on.
  auto last_axis = make("CheckInputImages", {{"channel", "-1"}, {"threshold_samples", "100"}});
  EXPECT_EQ(run_rule(*last_axis, catalog, [](auto...) {
              return std::optional(images(200, {0.0, 0.1, 127.5}));
            }).findings.size(),
            4u);
}

TEST(PoorWeightInitialization, EachCheckFiresOnItsPathology) {
  trial_folder t("pwi");
  t.collection("gradients", {"gradient/fc1.weight", "gradient/fc2.weight"});
  t.collection("losses", {"loss"});
  for (int s = 0; s < 8; ++s) {
    t.step(s, mode::train, s,
           {{"relu1_relu_input"}, {"relu2_relu_input"}, {"gradient/fc1.weight"},
            {"gradient/fc2.weight"}, {"loss"}});
  }
  auto catalog = t.open();
  // Activation inputs: variance 1 (±1) and 100 (±10) at step 0 only → ratio 100 > 10.
  // Gradients: fc2 spread over [0, 1e-5] at step 1 → p95 − p5 < 0.001. Loss: flat from step 2,
  // so from step 7 on it has not decreased for 5 saved steps.
  const auto values = [](std::string_view name, int64_t step, std::string_view) {
    const auto spread = [](double scale) {
      tensor_value v{{100}, {}};
      for (int i = 0; i < 100; ++i) v.data.push_back(scale * (i % 2 ? 1.0 : -1.0));
      return v;
    };
    const auto ramp = [](double top) {
      tensor_value v{{101}, {}};
      for (int i = 0; i <= 100; ++i) v.data.push_back(top * i / 100.0);
      return v;
    };
    if (name == "relu1_relu_input") return std::optional(spread(1.0));
    if (name == "relu2_relu_input") return std::optional(spread(step == 0 ? 10.0 : 2.0));
    if (name == "gradient/fc1.weight") return std::optional(ramp(1.0));
    if (name == "gradient/fc2.weight") return std::optional(ramp(step == 1 ? 1e-5 : 0.5));
    return std::optional(tensor_value{{}, {step < 2 ? 3.0 - static_cast<double>(step) : 1.0}});
  };
  auto rule = make("PoorWeightInitialization");
  const auto out = run_rule(*rule, catalog, values);
  ASSERT_TRUE(out.prepared.ok()) << out.prepared.to_string();
  ASSERT_EQ(where(out.findings), (std::vector<step_tensor>{{0, "relu2_relu_input"},
                                                           {1, "gradient/fc2.weight"},
                                                           {7, "loss"}}));
  EXPECT_EQ(out.findings[0].value, 100.0);
  EXPECT_EQ(out.findings[0].message,
            "activation-input variance ratio 100 (largest 100 / smallest 1 of relu1_relu_input) > "
            "threshold 10");
  EXPECT_NEAR(out.findings[1].value, 0.9e-5, 1e-18);  // p95 − p5 of the ramp 0..1e-5
  EXPECT_EQ(out.findings[2].value, 5.0);
  // The gradients were asked for their 5th and 95th percentiles.
  EXPECT_EQ(out.plan.find(*catalog.find_tensor("gradient/fc1.weight"))->percentiles,
            (std::vector<double>{5, 95}));
  // Only the first `steps` saved steps count: with 6 the loss check cannot reach patience 5.
  auto early = make("PoorWeightInitialization", {{"steps", "6"}});
  EXPECT_EQ(run_rule(*early, catalog, values).findings.size(), 2u);
}

TEST(PoorWeightInitialization, HealthyTrialIsQuiet) {
  trial_folder t("pwi_healthy");
  t.collection("gradients", {"gradient/fc1.weight"});
  t.collection("losses", {"loss"});
  for (int s = 0; s < 10; ++s) {
    t.step(s, mode::train, s, {{"relu1_relu_input"}, {"relu2_relu_input"}, {"gradient/fc1.weight"}, {"loss"}});
  }
  auto catalog = t.open();
  auto rule = make("PoorWeightInitialization");
  const auto out = run_rule(*rule, catalog, [](std::string_view name, int64_t step, std::string_view) {
    if (name == "loss") return std::optional(tensor_value{{}, {10.0 / static_cast<double>(step + 1)}});
    tensor_value v{{64}, {}};
    const double scale = name == "relu2_relu_input" ? 2.0 : 1.0;  // variance ratio 4
    for (int i = 0; i < 64; ++i) v.data.push_back(scale * std::sin(0.3 * i + static_cast<double>(step)));
    return std::optional(v);
  });
  ASSERT_TRUE(out.prepared.ok());
  EXPECT_TRUE(out.findings.empty());
}

}  // namespace
}  // namespace trialstat::rule_testing
