// SPDX-License-Identifier: Apache-2.0
// SageMaker string parameters → typed rule parameters (spec/RULES.md §1 parsing [prop]) and the
// rule registry.
#include <gtest/gtest.h>

#include <cmath>

#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"
#include "trialstat/rules/rule.hpp"

namespace trialstat::rules {
namespace {

TEST(RuleParameters, Floats) {
  EXPECT_EQ(parse_float_parameter("1e-6"), 1e-6);
  EXPECT_EQ(parse_float_parameter(" 2.5 "), 2.5);
  EXPECT_EQ(parse_float_parameter("+3"), 3.0);
  EXPECT_EQ(parse_float_parameter("-0.25"), -0.25);
  EXPECT_EQ(parse_float_parameter(".5"), 0.5);
  EXPECT_EQ(parse_float_parameter("10"), 10.0);
  EXPECT_EQ(parse_float_parameter("-inf"), -INFINITY);
  EXPECT_EQ(parse_float_parameter("1e999"), INFINITY);  // Python: float('1e999') == inf
  ASSERT_TRUE(parse_float_parameter("nan").has_value());
  EXPECT_TRUE(std::isnan(*parse_float_parameter("NaN")));
  for (const char* bad : {"abc", "1.0x", "", " ", "1,5", "0x10", "--1", "+-1", "1e"}) {
    EXPECT_FALSE(parse_float_parameter(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(RuleParameters, Integers) {
  EXPECT_EQ(parse_integer_parameter("10"), 10);
  EXPECT_EQ(parse_integer_parameter(" +5 "), 5);
  EXPECT_EQ(parse_integer_parameter("-3"), -3);
  for (const char* bad : {"10.0", "1e3", "ten", "", "99999999999999999999"}) {
    EXPECT_FALSE(parse_integer_parameter(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(RuleParameters, Booleans) {
  EXPECT_EQ(parse_bool_parameter("True"), true);
  EXPECT_EQ(parse_bool_parameter("true"), true);
  EXPECT_EQ(parse_bool_parameter(" False "), false);
  EXPECT_EQ(parse_bool_parameter("false"), false);
  for (const char* bad : {"TRUE", "1", "0", "yes", "no", ""}) {
    EXPECT_FALSE(parse_bool_parameter(bad).has_value()) << "'" << bad << "'";
  }
}

TEST(RuleParameters, ListsAndUnset) {
  EXPECT_EQ(parse_list_parameter("weights, gradients ,,biases "),
            (std::vector<std::string>{"weights", "gradients", "biases"}));
  EXPECT_EQ(parse_list_parameter(".*relu_output"), (std::vector<std::string>{".*relu_output"}));
  EXPECT_TRUE(parse_list_parameter(" , ").empty());
  EXPECT_TRUE(is_unset_parameter(""));
  EXPECT_TRUE(is_unset_parameter("  "));
  EXPECT_TRUE(is_unset_parameter("None"));
  EXPECT_FALSE(is_unset_parameter("none"));  // only Python's None spelling
  EXPECT_FALSE(is_unset_parameter("0"));
}

TEST(RuleParameters, DefaultsMatchTheSpec) {
  const auto vg = parse_vanishing_gradient_params({});
  ASSERT_TRUE(vg.has_value());
  EXPECT_EQ(vg->threshold, 1e-7);
  EXPECT_FALSE(vg->evaluate_all_workers);

  const auto wur = parse_weight_update_ratio_params({});
  ASSERT_TRUE(wur.has_value());
  EXPECT_FALSE(wur->num_steps.has_value());
  EXPECT_EQ(wur->large_threshold, 10.0);
  EXPECT_EQ(wur->small_threshold, 1e-8);
  EXPECT_EQ(wur->epsilon, 1e-9);

  const auto az = parse_all_zero_params({});
  ASSERT_TRUE(az.has_value());
  EXPECT_EQ(az->threshold, 100.0);

  const auto et = parse_exploding_tensor_params({});
  ASSERT_TRUE(et.has_value());
  EXPECT_FALSE(et->only_nan);
  EXPECT_TRUE(et->collection_names.empty());

  const auto ut = parse_unchanged_tensor_params({});
  ASSERT_TRUE(ut.has_value());
  EXPECT_EQ(ut->num_steps, 3);
  EXPECT_EQ(ut->rtol, 1e-5);
  EXPECT_EQ(ut->atol, 1e-8);
  EXPECT_FALSE(ut->equal_nan);

  const auto lnd = parse_loss_not_decreasing_params({});
  ASSERT_TRUE(lnd.has_value());
  EXPECT_TRUE(lnd->use_losses_collection);
  EXPECT_EQ(lnd->num_steps, 10);
  EXPECT_EQ(lnd->diff_percent, 0.1);
  EXPECT_EQ(lnd->increase_threshold_percent, 5.0);
  EXPECT_FALSE(lnd->mode.has_value());
  EXPECT_FALSE(lnd->use_legacy_semantics);

  const auto dr = parse_dead_relu_params({});
  ASSERT_TRUE(dr.has_value());
  EXPECT_EQ(dr->tensor_regex, (std::vector<std::string>{".*relu_output"}));
  EXPECT_EQ(dr->threshold_inactivity, 1.0);
  EXPECT_EQ(dr->threshold_layer, 50.0);

  const auto tv = parse_tensor_variance_params({});
  ASSERT_TRUE(tv.has_value());
  EXPECT_FALSE(tv->max_threshold.has_value());
  EXPECT_FALSE(tv->min_threshold.has_value());
}

TEST(RuleParameters, ValuesAreParsed) {
  const auto p = parse_loss_not_decreasing_params({{"rule_to_invoke", "LossNotDecreasing"},
                                                   {"collection_names", "losses, metrics"},
                                                   {"tensor_regex", "None"},
                                                   {"use_losses_collection", "false"},
                                                   {"num_steps", "20"},
                                                   {"diff_percent", "0.0"},
                                                   {"increase_threshold_percent", ""},
                                                   {"mode", "train"},
                                                   {"use_legacy_semantics", "True"},
                                                   {"evaluate_all_workers", "true"}});
  ASSERT_TRUE(p.has_value()) << p.error_status().to_string();
  EXPECT_EQ(p->collection_names, (std::vector<std::string>{"losses", "metrics"}));
  EXPECT_TRUE(p->tensor_regex.empty());
  EXPECT_FALSE(p->use_losses_collection);
  EXPECT_EQ(p->num_steps, 20);
  EXPECT_EQ(p->diff_percent, 0.0);
  EXPECT_EQ(p->increase_threshold_percent, 5.0);  // "" = unset → default
  EXPECT_EQ(p->mode, trialstat::mode::train);
  EXPECT_TRUE(p->use_legacy_semantics);
  EXPECT_TRUE(p->evaluate_all_workers);

  const auto tv = parse_tensor_variance_params({{"max_threshold", "1e3"}, {"min_threshold", "None"}});
  ASSERT_TRUE(tv.has_value());
  EXPECT_EQ(tv->max_threshold, 1e3);
  EXPECT_FALSE(tv->min_threshold.has_value());

  const auto dr = parse_dead_relu_params({{"tensor_regex", "None"}});  // unset → the default
  ASSERT_TRUE(dr.has_value());
  EXPECT_EQ(dr->tensor_regex, (std::vector<std::string>{".*relu_output"}));
}

void expect_invalid(const result<std::unique_ptr<rule>>& r, std::initializer_list<const char*> parts) {
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error_status().code(), error_code::invalid_argument);
  for (const char* part : parts) {
    EXPECT_NE(r.error_status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << r.error_status().message();
  }
}

TEST(RuleParameters, ErrorsNameRuleParameterAndType) {
  expect_invalid(make_rule("VanishingGradient", {{"threshold", "abc"}}),
                 {"VanishingGradient", "'threshold'", "float", "'abc'"});
  expect_invalid(make_rule("VanishingGradient", {{"thresh", "1e-6"}}),
                 {"VanishingGradient", "unknown parameter 'thresh'", "threshold"});
  expect_invalid(make_rule("ExplodingTensor", {{"only_nan", "yes"}}),
                 {"ExplodingTensor", "'only_nan'", "boolean"});
  expect_invalid(make_rule("UnchangedTensor", {{"num_steps", "2.5"}}),
                 {"UnchangedTensor", "'num_steps'", "integer"});
  expect_invalid(make_rule("UnchangedTensor", {{"num_steps", "1"}}),
                 {"UnchangedTensor", "'num_steps'", "between 2 and 65"});
  expect_invalid(make_rule("LossNotDecreasing", {{"mode", "training"}}),
                 {"LossNotDecreasing", "'mode'", "TRAIN"});
  expect_invalid(make_rule("WeightUpdateRatio", {{"num_steps", "0"}}),
                 {"WeightUpdateRatio", "'num_steps'", "at least 1"});
  expect_invalid(make_rule("ReplicaConsistency", {{"rtol", "-1e-6"}}),
                 {"ReplicaConsistency", "'rtol'", ">= 0"});
  expect_invalid(make_rule("ReplicaConsistency", {{"atol", "inf"}}),
                 {"ReplicaConsistency", "'atol'", "finite"});
  expect_invalid(make_rule("ReplicaConsistency", {{"max_findings", "-1"}}),
                 {"ReplicaConsistency", "'max_findings'", ">= 0"});
  expect_invalid(make_rule("ReplicaConsistency", {{"max_findings", "1.5"}}),
                 {"ReplicaConsistency", "'max_findings'", "integer"});
  expect_invalid(make_rule("ReplicaConsistency", {{"mode", "training"}}),
                 {"ReplicaConsistency", "'mode'", "TRAIN"});
  expect_invalid(make_rule("ReplicaConsistency", {{"equal_nan", "True"}}),
                 {"ReplicaConsistency", "'equal_nan'"});
}

TEST(RuleRegistry, NamesAndLookup) {
  EXPECT_EQ(builtin_rule_names(),
            (std::vector<std::string>{
                "VanishingGradient", "SimilarAcrossRuns", "WeightUpdateRatio", "AllZero",
                "ExplodingTensor", "UnchangedTensor", "LossNotDecreasing", "CheckInputImages",
                "DeadRelu", "Confusion", "TreeDepth", "ClassImbalance", "Overfit",
                "TensorVariance", "Overtraining", "PoorWeightInitialization",
                "SaturatedActivation", "NLPSequenceRatio", "StalledTrainingRule",
                "FeatureImportanceOverweight", "ReplicaConsistency"}));
  for (const auto& name : builtin_rule_names()) {
    rule_parameters params = {{"rule_to_invoke", name}};
    if (name == "SimilarAcrossRuns") params["other_trials"] = "/some/other/trial";  // required
    auto r = make_rule(name, params);
    ASSERT_TRUE(r.has_value()) << name << ": " << r.error_status().to_string();
    EXPECT_EQ((*r)->name(), name);
  }
  auto alias = make_rule("vanishing_gradient", {{"threshold", "1e-6"}});
  ASSERT_TRUE(alias.has_value());
  EXPECT_EQ((*alias)->name(), "VanishingGradient");

  auto unknown = make_rule("NoSuchRule", {});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error_status().code(), error_code::not_found);
  EXPECT_NE(unknown.error_status().message().find("DeadRelu"), std::string::npos);
  // Every SDK function name is accepted too.
  auto sdk = make_rule("feature_importance_overweight", {{"nfeatures", "2"}});
  ASSERT_TRUE(sdk.has_value());
  EXPECT_EQ((*sdk)->name(), "FeatureImportanceOverweight");
}

TEST(RuleStatus, Names) {
  EXPECT_EQ(rule_status_name(rule_status::in_progress), "InProgress");
  EXPECT_EQ(rule_status_name(rule_status::no_issues_found), "NoIssuesFound");
  EXPECT_EQ(rule_status_name(rule_status::issues_found), "IssuesFound");
  EXPECT_EQ(rule_status_name(rule_status::error), "Error");
}

}  // namespace
}  // namespace trialstat::rules
