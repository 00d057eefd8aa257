// SPDX-License-Identifier: Apache-2.0
// The later built-in rules end to end: trials written by trialstat's own trial writer, read
// back through the catalog and the statistics pipeline (CPU executor: percentiles, equality
// counts, channel sums and kept values included), evaluated by pipeline::evaluate_rules. Each
// rule fires at the right step on the right tensor for its pathology and stays quiet on a
// healthy trial.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "tests/reference/reference_stats.hpp"
#include "tests/support/evaluate_rule.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/trial/catalog.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat {
namespace {

using trialstat::mode;
using step_tensor = std::pair<int64_t, std::string>;

struct tensor_spec {
  std::string name;
  dtype type = dtype::float32;
  std::vector<int64_t> shape;
  std::vector<double> values;
};

struct step_spec {
  int64_t step = 0;
  mode m = mode::train;
  int64_t mode_step = 0;
  std::vector<tensor_spec> tensors;
  std::optional<double> wall_time = std::nullopt;
};

tensor_spec vec(std::string name, std::vector<double> v, dtype type = dtype::float32) {
  const auto n = static_cast<int64_t>(v.size());
  return {std::move(name), type, {n}, std::move(v)};
}

tensor_spec scalar(std::string name, double v) { return {std::move(name), dtype::float32, {}, {v}}; }

void write_steps(writer::trial_writer& w, const std::vector<step_spec>& steps) {
  for (const step_spec& s : steps) {
    ASSERT_TRUE(w.begin_step(s.step, s.m, s.mode_step).ok());
    for (const tensor_spec& t : s.tensors) {
      const auto bytes = reference::encode_values(t.type, t.values);
      const tensor_view view{bytes.data(), t.type, t.shape, static_cast<int64_t>(t.values.size()),
                             memory_kind::host};
      const status added = w.add_tensor(t.name, view, s.wall_time);
      ASSERT_TRUE(added.ok()) << added.to_string();
    }
    ASSERT_TRUE(w.end_step().ok());
  }
}

std::filesystem::path write_trial(const std::string& label, const std::vector<step_spec>& steps,
                                  std::vector<writer::collection_spec> collections = {}) {
  const auto root = testing::make_scratch_dir(label);
  writer::writer_options options;
  options.collections = std::move(collections);
  auto w = writer::trial_writer::create(root, "worker_0", options);
  EXPECT_TRUE(w.has_value()) << w.error_status().to_string();
  write_steps(*w, steps);
  EXPECT_TRUE(w->close(true).ok());
  return root;
}

writer::collection_spec collection(std::string name, std::vector<std::string> members) {
  writer::collection_spec c;
  c.name = std::move(name);
  c.tensor_names = std::move(members);
  return c;
}

struct outcome {
  rules::rule_status status = rules::rule_status::error;
  std::string details;
  std::vector<rules::finding> findings;
  std::vector<step_tensor> where() const {
    std::vector<step_tensor> out;
    for (const auto& f : findings) out.emplace_back(f.step, f.tensor);
    return out;
  }
};

outcome evaluate(const std::filesystem::path& root, const std::string& rule,
                 const rules::rule_parameters& params = {}) {
  pipeline::rule_result r = testing::evaluate_rule(root, rule, params);
  return outcome{r.status, std::move(r.status_details), std::move(r.findings)};
}

#define EXPECT_QUIET(o)                                                  \
  do {                                                                   \
    const outcome& q_ = (o);                                             \
    EXPECT_EQ(q_.status, rules::rule_status::no_issues_found) << q_.details; \
    EXPECT_TRUE(q_.findings.empty()) << q_.findings.front().message;     \
  } while (0)

// ---- Confusion, ClassImbalance ---------------------------------------------------------------

std::vector<step_spec> digit_steps(int64_t wrong_from) {
  std::vector<step_spec> steps;
  for (int64_t s = 0; s < 3; ++s) {
    std::vector<double> labels{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    std::vector<double> predictions = labels;
    if (s >= wrong_from) predictions[3] = 5;
    steps.push_back({s, mode::eval, s,
                     {vec("labels", labels, dtype::int64), vec("predictions", predictions, dtype::int64),
                      scalar("loss", 0.5)}});
  }
  return steps;
}

TEST(BuiltinRulesEndToEnd, Confusion) {
  const auto sick = evaluate(write_trial("e2e_confusion", digit_steps(1)), "Confusion");
  EXPECT_EQ(sick.status, rules::rule_status::issues_found) << sick.details;
  EXPECT_EQ(sick.where(), (std::vector<step_tensor>{{1, "labels"}, {2, "labels"}}));
  EXPECT_QUIET(evaluate(write_trial("e2e_confusion_ok", digit_steps(99)), "Confusion"));
}

TEST(BuiltinRulesEndToEnd, ClassImbalance) {
  std::vector<double> skewed(990, 0.0);
  skewed.insert(skewed.end(), 10, 1.0);
  std::vector<step_spec> steps;
  for (int64_t s = 0; s < 3; ++s) steps.push_back({s, mode::train, s, {scalar("loss", 1.0)}});
  steps.push_back({3, mode::train, 3,
                   {vec("out/labels", skewed, dtype::int32), vec("out/predictions", skewed, dtype::int32)}});
  const auto sick = evaluate(write_trial("e2e_imbalance", steps), "ClassImbalance");
  EXPECT_EQ(sick.where(), (std::vector<step_tensor>{{3, "out/labels"}}));
  ASSERT_EQ(sick.findings.size(), 1u);
  EXPECT_EQ(sick.findings[0].value, 99.0);
  std::vector<double> balanced;
  for (int i = 0; i < 1000; ++i) balanced.push_back(i % 4);
  steps.back().tensors = {vec("out/labels", balanced, dtype::int32),
                          vec("out/predictions", balanced, dtype::int32)};
  EXPECT_QUIET(evaluate(write_trial("e2e_imbalance_ok", steps), "ClassImbalance"));
}

// ---- activations, sequences, images, initialisation -------------------------------------------

TEST(BuiltinRulesEndToEnd, SaturatedActivation) {
  std::vector<step_spec> steps;
  for (int64_t s = 0; s < 3; ++s) {
    std::vector<double> v;
    for (int i = 0; i < 32 * 8; ++i) v.push_back(s == 2 ? 12.0 : std::sin(i * 0.7) * 3.0);
    steps.push_back({s, mode::train, s, {{"layer1_tanh_input", dtype::float16, {32, 8}, v}}});
  }
  const auto sick = evaluate(write_trial("e2e_saturated", steps), "SaturatedActivation");
  EXPECT_EQ(sick.where(), (std::vector<step_tensor>{{2, "layer1_tanh_input"}}));
  ASSERT_EQ(sick.findings.size(), 1u);
  EXPECT_EQ(sick.findings[0].value, 100.0);
  steps.pop_back();
  EXPECT_QUIET(evaluate(write_trial("e2e_saturated_ok", steps), "SaturatedActivation"));
}

TEST(BuiltinRulesEndToEnd, NLPSequenceRatio) {
  const auto batch = [](int padding) {
    std::vector<double> v;
    for (int i = 0; i < 64; ++i) v.push_back(i < padding ? 0.0 : 1.0 + i % 50);
    return tensor_spec{"net_embedding0_input_0", dtype::int64, {4, 16}, v};
  };
  std::vector<step_spec> steps = {{0, mode::train, 0, {batch(10)}}, {1, mode::train, 1, {batch(40)}},
                                  {2, mode::train, 2, {batch(20)}}};
  const auto sick = evaluate(write_trial("e2e_nlp", steps), "NLPSequenceRatio");
  EXPECT_EQ(sick.where(), (std::vector<step_tensor>{{1, "net_embedding0_input_0"}}));
  ASSERT_EQ(sick.findings.size(), 1u);
  EXPECT_EQ(sick.findings[0].value, 62.5);
  steps.erase(steps.begin() + 1);
  EXPECT_QUIET(evaluate(write_trial("e2e_nlp_ok", steps), "NLPSequenceRatio"));
}

TEST(BuiltinRulesEndToEnd, CheckInputImages) {
  const auto images = [](double offset) {
    std::vector<double> v;
    for (int b = 0; b < 128; ++b) {
      for (int c = 0; c < 3; ++c) {
        for (int k = 0; k < 16; ++k) v.push_back((c == 1 ? offset : 0.0) + (k % 2 ? 0.5 : -0.5));
      }
    }
    return tensor_spec{"model_hybridsequential0_input_0", dtype::float32, {128, 3, 4, 4}, v};
  };
  std::vector<step_spec> sick_steps, ok_steps;
  for (int64_t s = 0; s < 5; ++s) {
    sick_steps.push_back({s, mode::train, s, {images(0.75)}});
    ok_steps.push_back({s, mode::train, s, {images(0.0)}});
  }
  // 128 samples per step: 512 ≥ 500 at step 3.
  const auto sick = evaluate(write_trial("e2e_images", sick_steps), "CheckInputImages");
  EXPECT_EQ(sick.where(), (std::vector<step_tensor>{{3, "model_hybridsequential0_input_0"},
                                                    {4, "model_hybridsequential0_input_0"}}));
  ASSERT_EQ(sick.findings.size(), 2u);
  EXPECT_EQ(sick.findings[0].value, 0.75);
  EXPECT_QUIET(evaluate(write_trial("e2e_images_ok", ok_steps), "CheckInputImages"));
}

TEST(BuiltinRulesEndToEnd, PoorWeightInitialization) {
  const auto ramp = [](std::string name, double top) {
    std::vector<double> v;
    for (int i = 0; i <= 200; ++i) v.push_back(top * i / 200.0);
    return tensor_spec{std::move(name), dtype::float32, {201}, v};
  };
  std::vector<step_spec> steps;
  for (int64_t s = 0; s < 4; ++s) {
    steps.push_back({s, mode::train, s,
                     {ramp("gradient/fc1.weight", 1.0),
                      ramp("gradient/fc2.weight", s == 2 ? 1e-5 : 0.5), ramp("relu1_relu_input", 1.0),
                      ramp("relu2_relu_input", 2.0), scalar("loss", 4.0 - static_cast<double>(s))}});
  }
  const std::vector<writer::collection_spec> collections = {
      collection("gradients", {"gradient/fc1.weight", "gradient/fc2.weight"}),
      collection("losses", {"loss"})};
  const auto sick = evaluate(write_trial("e2e_pwi", steps, collections), "PoorWeightInitialization");
  EXPECT_EQ(sick.where(), (std::vector<step_tensor>{{2, "gradient/fc2.weight"}}));
  ASSERT_EQ(sick.findings.size(), 1u);
  // numpy: percentile(ramp 0..1e-5 in float32, 95) − percentile(…, 5) ≈ 0.9e-5.
  EXPECT_NEAR(sick.findings[0].value, 0.9e-5, 1e-10);
  steps[2].tensors[1] = ramp("gradient/fc2.weight", 0.5);
  EXPECT_QUIET(evaluate(write_trial("e2e_pwi_ok", steps, collections), "PoorWeightInitialization"));
}

// ---- losses ------------------------------------------------------------------------------------

std::vector<step_spec> train_eval_steps(double eval_loss_late) {
  std::vector<step_spec> steps;
  int64_t train = 0, eval = 0;
  for (int64_t s = 0; s < 12; ++s) {
    const bool is_eval = s % 6 >= 4;
    const double loss = is_eval ? (s < 6 ? 1.02 : eval_loss_late) : (s < 6 ? 1.0 : 0.5);
    steps.push_back({s, is_eval ? mode::eval : mode::train, is_eval ? eval++ : train++,
                     {scalar("loss", loss)}});
  }
  return steps;
}

TEST(BuiltinRulesEndToEnd, OverfitAndOvertraining) {
  const std::vector<writer::collection_spec> losses = {collection("losses", {"loss"})};
  const auto sick = evaluate(write_trial("e2e_overfit", train_eval_steps(0.9), losses), "Overfit");
  EXPECT_EQ(sick.where(), (std::vector<step_tensor>{{10, "loss"}, {11, "loss"}}));
  EXPECT_QUIET(evaluate(write_trial("e2e_overfit_ok", train_eval_steps(0.51), losses), "Overfit"));

  std::vector<step_spec> flat;
  for (int64_t s = 0; s < 8; ++s) flat.push_back({s, mode::train, s, {scalar("loss", s < 2 ? 2.0 - s : 1.0)}});
  const auto stuck = evaluate(write_trial("e2e_overtraining", flat, losses), "Overtraining");
  EXPECT_EQ(stuck.where(), (std::vector<step_tensor>{{6, "loss"}, {7, "loss"}}));
  std::vector<step_spec> improving;
  for (int64_t s = 0; s < 8; ++s) improving.push_back({s, mode::train, s, {scalar("loss", 2.0 - 0.1 * s)}});
  EXPECT_QUIET(evaluate(write_trial("e2e_overtraining_ok", improving, losses), "Overtraining"));
}

// ---- XGBoost -----------------------------------------------------------------------------------

TEST(BuiltinRulesEndToEnd, TreeDepthAndFeatureImportance) {
  const auto node_ids = [](int max_id) {
    std::vector<double> v;
    for (int id = 0; id <= max_id; ++id) v.push_back(id);
    return vec("trees/Node", v, dtype::int64);
  };
  const auto features = [](std::vector<double> scores) {
    std::vector<tensor_spec> t;
    for (std::size_t f = 0; f < scores.size(); ++f) {
      t.push_back({"feature_importance/weight/f" + std::to_string(f), dtype::float64, {}, {scores[f]}});
    }
    return t;
  };
  std::vector<step_spec> steps;
  for (int64_t s = 0; s < 3; ++s) {
    auto tensors = features(s < 2 ? std::vector<double>{0.2, 0.2, 0.2, 0.2, 0.2}
                                  : std::vector<double>{0.6, 0.25, 0.1, 0.03, 0.02});
    tensors.push_back(node_ids(s == 1 ? 62 : 30));
    steps.push_back({s, mode::train, s, tensors});
  }
  const auto root = write_trial("e2e_xgboost", steps);
  const auto deep = evaluate(root, "TreeDepth");
  EXPECT_EQ(deep.where(), (std::vector<step_tensor>{{1, "trees/Node"}}));
  const auto heavy = evaluate(root, "FeatureImportanceOverweight");
  EXPECT_EQ(heavy.where(), (std::vector<step_tensor>{{2, "feature_importance/weight/f0"}}));
  ASSERT_EQ(heavy.findings.size(), 1u);
  EXPECT_NEAR(heavy.findings[0].value, 0.95, 1e-12);
  EXPECT_QUIET(evaluate(root, "TreeDepth", {{"depth", "5"}}));
  EXPECT_QUIET(evaluate(root, "FeatureImportanceOverweight", {{"threshold", "0.96"}}));
}

// ---- SimilarAcrossRuns -------------------------------------------------------------------------

std::vector<step_spec> run_steps(bool diverge) {
  std::vector<step_spec> steps;
  for (int64_t s = 0; s < 3; ++s) {
    std::vector<double> w{0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
    for (auto& x : w) x += 0.01 * static_cast<double>(s);
    if (diverge && s == 2) w[4] += 1e-3;
    std::vector<double> b{1, 2, 3};
    if (diverge && s == 1) b.push_back(4);
    steps.push_back({s, mode::train, s,
                     {{"fc.weight", dtype::float32, {2, 3}, w}, vec("fc.bias", b),
                      scalar(diverge ? "only_other" : "only_base", 1.0)}});
  }
  return steps;
}

TEST(BuiltinRulesEndToEnd, SimilarAcrossRuns) {
  const auto base = write_trial("e2e_similar_base", run_steps(false));
  const auto same = write_trial("e2e_similar_same", run_steps(false));
  const auto other = write_trial("e2e_similar_other", run_steps(true));
  const auto differs = evaluate(base, "SimilarAcrossRuns", {{"other_trials", other.string()}});
  EXPECT_EQ(differs.status, rules::rule_status::issues_found) << differs.details;
  EXPECT_EQ(differs.where(), (std::vector<step_tensor>{{1, "fc.bias"}, {2, "fc.weight"}}));
  ASSERT_EQ(differs.findings.size(), 2u);
  EXPECT_TRUE(std::isnan(differs.findings[0].value));  // shapes differ
  EXPECT_NE(differs.findings[0].message.find("shape [3] differs from [4]"), std::string::npos)
      << differs.findings[0].message;
  EXPECT_EQ(differs.findings[1].value, 1.0);  // one element not close
  EXPECT_QUIET(evaluate(base, "SimilarAcrossRuns", {{"other_trials", same.string()}}));
  // Restricted to the bias: only the shape difference.
  EXPECT_EQ(evaluate(base, "SimilarAcrossRuns",
                     {{"other_trials", other.string()}, {"tensor_regex", "bias"}})
                .where(),
            (std::vector<step_tensor>{{1, "fc.bias"}}));
  // A loose tolerance accepts the 1e-3 change.
  EXPECT_EQ(evaluate(base, "SimilarAcrossRuns", {{"other_trials", other.string()}, {"atol", "0.01"}})
                .where(),
            (std::vector<step_tensor>{{1, "fc.bias"}}));
  // A missing other trial is the rule's Error, naming the path.
  const auto missing = evaluate(base, "SimilarAcrossRuns", {{"other_trials", "/no/such/trial"}});
  EXPECT_EQ(missing.status, rules::rule_status::error);
  EXPECT_NE(missing.details.find("/no/such/trial"), std::string::npos) << missing.details;
}

// ---- StalledTrainingRule -----------------------------------------------------------------------

TEST(BuiltinRulesEndToEnd, StalledTrainingOfflineFromWallTimes) {
  std::vector<step_spec> steps;
  const double times[] = {1000.0, 1010.0, 1020.0, 3000.0, 3010.0};
  for (int64_t s = 0; s < 5; ++s) {
    steps.push_back({s, mode::train, s, {scalar("loss", 1.0)}, times[s]});
  }
  const auto root = write_trial("e2e_stalled", steps);
  const auto stalled = evaluate(root, "StalledTrainingRule");
  ASSERT_EQ(stalled.findings.size(), 1u);
  EXPECT_EQ(stalled.findings[0].step, 3);
  EXPECT_EQ(stalled.findings[0].value, 1980.0);
  EXPECT_EQ(stalled.findings[0].message,
            "no new step for 1980 s (step 2 at wall time 1020.000 to step 3 at 3000.000) > "
            "threshold 1800 s");
  EXPECT_QUIET(evaluate(root, "StalledTrainingRule", {{"threshold", "2000"}}));
}

TEST(BuiltinRulesEndToEnd, StalledTrainingLiveOnPoll) {
  const auto root = testing::make_scratch_dir("e2e_stalled_live");
  auto w = writer::trial_writer::create(root, "worker_0");
  ASSERT_TRUE(w.has_value());
  write_steps(*w, {{0, mode::train, 0, {scalar("loss", 1.0)}}, {1, mode::train, 1, {scalar("loss", 0.9)}}});
  auto catalog = trial::catalog::open(root);
  ASSERT_TRUE(catalog.has_value());
  auto rule = rules::make_rule("StalledTrainingRule",
                               {{"threshold", "60"}, {"stop_training_on_fire", "True"},
                                {"training_job_name_prefix", "job-a"}});
  ASSERT_TRUE(rule.has_value());
  const auto t0 = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  const auto at = [&](int seconds) { return t0 + std::chrono::seconds(seconds); };
  std::vector<rules::finding> findings;
  (*rule)->on_poll(*catalog, at(0), findings);   // the rule's start counts as progress
  (*rule)->on_poll(*catalog, at(60), findings);  // 60 s is not more than 60 s
  EXPECT_TRUE(findings.empty());
  (*rule)->on_poll(*catalog, at(61), findings);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule, "StalledTrainingRule");
  EXPECT_EQ(findings[0].step, 1);
  EXPECT_EQ(findings[0].value, 61.0);
  EXPECT_EQ(findings[0].message,
            "no new step for 61 s (last saved step 1; no end marker) > threshold 60 s; "
            "stop_training_on_fire: StopTraining requested for jobs prefixed 'job-a'");
  (*rule)->on_poll(*catalog, at(300), findings);  // once per stall
  EXPECT_EQ(findings.size(), 1u);
  // Progress resumes: a new step; the clock restarts at the poll that sees it.
  write_steps(*w, {{2, mode::train, 2, {scalar("loss", 0.8)}}});
  ASSERT_TRUE(catalog->refresh().has_value());
  (*rule)->on_poll(*catalog, at(310), findings);
  (*rule)->on_poll(*catalog, at(369), findings);
  EXPECT_EQ(findings.size(), 1u);
  (*rule)->on_poll(*catalog, at(371), findings);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[1].step, 2);
  // Training ended: never stalled.
  auto rule2 = rules::make_rule("StalledTrainingRule", {{"threshold", "60"}});
  ASSERT_TRUE(w->close(true).ok());
  ASSERT_TRUE(catalog->refresh().has_value());
  std::vector<rules::finding> after;
  (*rule2)->on_poll(*catalog, at(400), after);
  (*rule2)->on_poll(*catalog, at(4000), after);
  EXPECT_TRUE(after.empty());
}

}  // namespace
}  // namespace trialstat
