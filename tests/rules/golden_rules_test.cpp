// SPDX-License-Identifier: Apache-2.0
// The built-in rules over the golden smdebug trials (generated or shared), with tensors read from
// the real event files. Expected findings are derived independently from each trial's
// <name>.expected.json (smdebug's reader + float64 numpy statistics).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <set>

#include "tests/rules/golden_reader.hpp"

namespace trialstat::rule_testing {
namespace {

using finding_set = std::set<std::pair<int64_t, std::string>>;

finding_set as_set(const std::vector<trialstat::rules::finding>& findings) {
  finding_set out;
  for (const auto& f : findings) out.emplace(f.step, f.tensor);
  EXPECT_EQ(out.size(), findings.size()) << "one finding per (step, tensor) with one worker";
  return out;
}

/// Run `rule` on a golden trial with its real tensors and saved reductions.
run_result run_golden(trialstat::rules::rule& rule, golden_trial& g) {
  golden_reader reader(g.catalog);
  run_options options;
  options.reductions = reader.reductions();
  auto out = run_rule(rule, g.catalog, reader.values(), options);
  EXPECT_TRUE(out.prepared.ok()) << out.prepared.to_string();
  return out;
}

std::vector<std::string> collection_tensors(const golden_trial& g, const std::string& name) {
  return g.expected["collections"][name]["tensor_names_in_trial"].get<std::vector<std::string>>();
}

TEST(GoldenRules, VanishingGradient) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  for (const std::string name : {"vanishing", "healthy_mlp", "exploding", "reductions_only"}) {
    SCOPED_TRACE(name);
    auto g = open_golden(dir, name);
    ASSERT_TRUE(g);
    // reductions_only saves gradients as reductions only: judged on the saved abs_mean; a
    // larger threshold makes that case non-trivial.
    const double threshold = name == "reductions_only" ? 1.5e-3 : 1e-7;
    finding_set expected;
    for (const auto& t : collection_tensors(*g, "gradients")) {
      for (const auto& r : g->expected["tensors"][t]["records"]) {
        const auto& st = r["stats"];
        double mean_abs = std::numeric_limits<double>::quiet_NaN();
        if (!st.is_null()) {
          // numpy mean(|g|): NaN/Inf elements make it non-finite (never below a threshold).
          if (st["nan_count"] == 0 && st["pos_inf_count"] == 0 && st["neg_inf_count"] == 0 &&
              !st["mean_abs"].is_null()) {
            mean_abs = st["mean_abs"].get<double>();
          }
        } else {
          for (const auto& red : r["saved_reductions"]) {
            if (red["reduction"] == "mean" && red["abs"] == true) mean_abs = json_number(red["value"]);
          }
        }
        if (mean_abs < threshold) expected.emplace(r["step"].get<int64_t>(), t);
      }
    }
    auto rule = make("VanishingGradient", {{"threshold", fmt::format("{}", threshold)}});
    const auto out = run_golden(*rule, *g);
    EXPECT_EQ(as_set(out.findings), expected);
    if (name == "vanishing") {
      EXPECT_GT(expected.size(), 100u);
    } else if (name == "reductions_only") {
      EXPECT_FALSE(expected.empty());
    } else if (name == "healthy_mlp") {
      EXPECT_TRUE(expected.empty());
    }
  }
}

TEST(GoldenRules, ExplodingTensor) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  for (const std::string name : {"exploding", "healthy_mlp", "reductions_only", "dead_relu"}) {
    SCOPED_TRACE(name);
    auto g = open_golden(dir, name);
    ASSERT_TRUE(g);
    finding_set expected;
    for (const auto& [t, tensor] : g->expected["tensors"].items()) {
      for (const auto& r : tensor["records"]) {
        const auto& st = r["stats"];
        bool bad = false;
        if (!st.is_null()) {
          bad = st["nan_count"].get<int64_t>() + st["pos_inf_count"].get<int64_t>() +
                    st["neg_inf_count"].get<int64_t>() > 0;
        } else {
          for (const auto& red : r["saved_reductions"]) bad = bad || !std::isfinite(json_number(red["value"]));
        }
        if (bad) expected.emplace(r["step"].get<int64_t>(), t);
      }
    }
    auto rule = make("ExplodingTensor");
    const auto out = run_golden(*rule, *g);
    EXPECT_EQ(as_set(out.findings), expected);
    if (name == "exploding") {
      EXPECT_GT(expected.size(), 30u);
      // The loss turns +Inf part way through (step 17 in both sets; read from the trial's own
      // expected.json): that step is a finding.
      std::optional<int64_t> first_inf;
      for (const auto& r : g->expected["tensors"]["MSELoss_output_0"]["records"]) {
        if (!r["stats"].is_null() && r["stats"]["pos_inf_count"].get<int64_t>() > 0) {
          first_inf = r["step"].get<int64_t>();
          break;
        }
      }
      ASSERT_TRUE(first_inf.has_value()) << "the exploding loss never reaches +Inf";
      EXPECT_TRUE(expected.contains({*first_inf, "MSELoss_output_0"}));
    }
  }
}

TEST(GoldenRules, WeightUpdateRatio) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  for (const std::string name : {"healthy_mlp", "exploding", "dead_relu"}) {
    SCOPED_TRACE(name);
    auto g = open_golden(dir, name);
    ASSERT_TRUE(g);
    // Weights are saved in TRAIN only here, so consecutive saves are the rule's TRAIN pairs.
    std::map<std::pair<int64_t, std::string>, double> expected;
    for (const auto& e : g->expected["weight_update_ratios"]) {
      if (e["collection"] != "weights") continue;
      const double ratio = json_number(e["ratio"]);
      if (ratio > 10.0 || ratio < 1e-8) expected[{e["step"].get<int64_t>(), e["tensor"]}] = ratio;
    }
    auto rule = make("WeightUpdateRatio");
    const auto out = run_golden(*rule, *g);
    std::map<std::pair<int64_t, std::string>, double> found;
    for (const auto& f : out.findings) found[{f.step, f.tensor}] = f.value;
    ASSERT_EQ(found.size(), expected.size());
    for (const auto& [key, ratio] : expected) {
      ASSERT_TRUE(found.contains(key)) << key.first << " " << key.second;
      if (std::isinf(ratio)) {
        EXPECT_EQ(found[key], ratio);
      } else {
        EXPECT_NEAR(found[key], ratio, 1e-9 * std::max(1.0, std::fabs(ratio))) << key.second;
      }
    }
    if (name == "healthy_mlp") {
      EXPECT_TRUE(expected.empty());
    } else if (name == "exploding") {
      EXPECT_GT(expected.size(), 50u);  // update ratio exactly 0
    }
  }
}

TEST(GoldenRules, UnchangedTensor) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  auto g = open_golden(dir, "exploding");
  ASSERT_TRUE(g);
  // From step 5 to 50 every parameter but MLP_fc3.bias keeps exactly the same value: wherever
  // the two previous consecutive updates were exactly 0 the rule must fire; MLP_fc3.bias
  // (update ratio 5 per step) must not.
  std::map<std::string, std::map<int64_t, double>> ratios;  // tensor → step → ratio
  for (const auto& e : g->expected["weight_update_ratios"]) {
    ratios[e["tensor"]][e["step"].get<int64_t>()] = json_number(e["ratio"]);
  }
  auto rule = make("UnchangedTensor", {{"collection_names", "weights, biases"}});
  const auto out = run_golden(*rule, *g);
  const auto found = as_set(out.findings);
  std::size_t required = 0;
  for (const auto& [t, by_step] : ratios) {
    for (const auto& [s, r] : by_step) {
      if (r == 0.0 && by_step.contains(s - 1) && by_step.at(s - 1) == 0.0) {
        ++required;
        EXPECT_TRUE(found.contains({s, t})) << s << " " << t;
      }
    }
  }
  EXPECT_GT(required, 100u);
  for (const auto& [s, t] : found) {
    EXPECT_NE(t, "MLP_fc3.bias") << s;
    EXPECT_GE(s, 2);
  }
}

/// The legacy-free LossNotDecreasing decision, re-derived from the expected losses.
finding_set expected_loss_findings(const golden_trial& g, const std::string& tensor,
                                   const std::string& mode, int64_t num_steps) {
  std::vector<std::tuple<int64_t, int64_t, double>> losses;  // (mode step, global, value)
  for (const auto& r : g.expected["tensors"][tensor]["records"]) {
    if (r["mode"] != mode) continue;
    losses.emplace_back(r["mode_step"].get<int64_t>(), r["step"].get<int64_t>(),
                        r["stats"]["min"].get<double>());
  }
  finding_set out;
  std::optional<int64_t> last;
  for (const auto& [s, global, c] : losses) {
    std::optional<double> b;
    for (const auto& [p, pg, v] : losses) {
      if (p <= s - num_steps) b = v;
    }
    if (!b || (last && s < *last + num_steps)) continue;
    last = s;
    const bool fire = c <= *b ? 100.0 * (*b - c) / std::fabs(*b) < 0.1
                              : 100.0 * (c - *b) / std::fabs(*b) > 5.0;
    if (fire) out.emplace(global, tensor);
  }
  return out;
}

TEST(GoldenRules, LossNotDecreasing) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  auto g = open_golden(dir, "overfit");
  ASSERT_TRUE(g);
  const std::string loss = "CrossEntropyLoss_output_0";
  // Default mode: EVAL (the loss has EVAL steps). The EVAL loss bottoms out at EVAL step 3 and
  // then rises: the rule must catch it.
  auto rule = make("LossNotDecreasing");
  const auto out = run_golden(*rule, *g);
  const auto expected_eval = expected_loss_findings(*g, loss, "EVAL", 10);
  EXPECT_EQ(as_set(out.findings), expected_eval);
  EXPECT_FALSE(expected_eval.empty());
  for (const auto& f : out.findings) EXPECT_EQ(f.mode, trialstat::mode::eval);

  auto train = make("LossNotDecreasing", {{"mode", "TRAIN"}, {"num_steps", "50"}});
  const auto out_train = run_golden(*train, *g);
  EXPECT_EQ(as_set(out_train.findings), expected_loss_findings(*g, loss, "TRAIN", 50));
}

TEST(GoldenRules, AllZeroAndTensorVariance) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  for (const std::string name : {"dead_relu", "healthy_mlp"}) {
    SCOPED_TRACE(name);
    auto g = open_golden(dir, name);
    ASSERT_TRUE(g);
    finding_set zero_expected;
    finding_set variance_expected;
    for (const auto& [t, tensor] : g->expected["tensors"].items()) {
      for (const auto& r : tensor["records"]) {
        const auto& st = r["stats"];
        if (st.is_null()) continue;
        const auto numel = st["numel"].get<int64_t>();
        if (t.find("relu") != std::string::npos && numel > 0 &&
            100.0 * st["zero_count"].get<double>() / static_cast<double>(numel) >= 90.0) {
          zero_expected.emplace(r["step"].get<int64_t>(), t);
        }
        if (t.find("weight") != std::string::npos && t.find("gradient") == std::string::npos &&
            !st["variance"].is_null()) {
          const double v = st["variance"].get<double>();
          if (v > 0.01 || v < 1e-3) variance_expected.emplace(r["step"].get<int64_t>(), t);
        }
      }
    }
    auto all_zero = make("AllZero", {{"tensor_regex", "relu"}, {"threshold", "90"}});
    EXPECT_EQ(as_set(run_golden(*all_zero, *g).findings), zero_expected);
    auto variance = make("TensorVariance", {{"collection_names", "weights"},
                                            {"max_threshold", "0.01"},
                                            {"min_threshold", "0.001"}});
    EXPECT_EQ(as_set(run_golden(*variance, *g).findings), variance_expected);
    if (name == "dead_relu") {
      EXPECT_FALSE(zero_expected.empty());
    }
  }
}

TEST(GoldenRules, DeadRelu) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  for (const std::string name : {"dead_relu", "healthy_mlp"}) {
    SCOPED_TRACE(name);
    auto g = open_golden(dir, name);
    ASSERT_TRUE(g);
    // PyTorch names the layers relu1/relu2 ("relu1_output_0"), which smdebug's default regex
    // `.*relu_output` does not match: the default configuration sees no tensor here.
    auto by_default = make("DeadRelu");
    EXPECT_TRUE(run_golden(*by_default, *g).findings.empty());

    // Expected: per-node activity straight from the raw [batch, nodes] values.
    golden_reader reader(g->catalog);
    const auto values = reader.values();
    std::map<std::pair<int64_t, std::string>, double> expected;
    for (const std::string t : {"relu1_output_0", "relu2_output_0"}) {
      for (const auto& r : g->expected["tensors"][t]["records"]) {
        const auto v = values(t, r["step"].get<int64_t>(), "worker_0");
        ASSERT_TRUE(v);
        ASSERT_EQ(v->shape.size(), 2u);
        const int64_t batch = v->shape[0];
        const int64_t nodes = v->shape[1];
        int64_t dead = 0;
        for (int64_t j = 0; j < nodes; ++j) {
          int64_t active = 0;
          for (int64_t i = 0; i < batch; ++i) active += v->data[static_cast<std::size_t>(i * nodes + j)] > 0;
          if (100.0 * static_cast<double>(active) / static_cast<double>(batch) < 1.0) ++dead;
        }
        const double percent = 100.0 * static_cast<double>(dead) / static_cast<double>(nodes);
        if (percent > 50.0) expected[{r["step"].get<int64_t>(), t}] = percent;
      }
    }
    auto rule = make("DeadRelu", {{"tensor_regex", R"(relu\d*_output)"}});
    const auto out = run_golden(*rule, *g);
    std::map<std::pair<int64_t, std::string>, double> found;
    for (const auto& f : out.findings) found[{f.step, f.tensor}] = f.value;
    EXPECT_EQ(found, expected);
    if (name == "dead_relu") {
      EXPECT_GE(expected.size(), 12u);  // 95.6% / 97.7% of the outputs are exactly 0
    } else {
      EXPECT_TRUE(expected.empty());
    }
  }
}

}  // namespace
}  // namespace trialstat::rule_testing
