// SPDX-License-Identifier: Apache-2.0
// Parameters of the later built-in rules: smdebug's names and defaults (spec/RULES.md §3), the
// string forms SageMaker passes, and the errors for bad values.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "trialstat/rules/builtin_rules.hpp"

namespace trialstat::rules {
namespace {

void expect_invalid(const status& s, std::initializer_list<const char*> parts) {
  EXPECT_EQ(s.code(), error_code::invalid_argument) << s.to_string();
  for (const char* part : parts) {
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message() << " lacks " << part;
  }
}

TEST(LaterRuleParameters, Defaults) {
  const auto sar = parse_similar_across_runs_params({{"other_trials", "s3://b/other"}});
  ASSERT_TRUE(sar.has_value());
  EXPECT_EQ(sar->other_trials, "s3://b/other");
  EXPECT_TRUE(sar->collection_names.empty() && sar->tensor_regex.empty());
  EXPECT_EQ(sar->rtol, 1e-5);
  EXPECT_EQ(sar->atol, 1e-8);
  EXPECT_FALSE(sar->equal_nan);

  const auto cii = parse_check_input_images_params({});
  ASSERT_TRUE(cii.has_value());
  EXPECT_EQ(cii->threshold_mean, 0.2);
  EXPECT_EQ(cii->threshold_samples, 500);
  EXPECT_EQ(cii->regex, ".*hybridsequential0_input_0");
  EXPECT_EQ(cii->channel, 1);

  const auto c = parse_confusion_params({});
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->category_no.has_value());
  EXPECT_EQ(c->labels, "labels");
  EXPECT_EQ(c->predictions, "predictions");
  EXPECT_EQ(c->labels_collection, "labels");
  EXPECT_EQ(c->predictions_collection, "predictions");
  EXPECT_EQ(c->min_diag, 0.9);
  EXPECT_EQ(c->max_off_diag, 0.1);

  EXPECT_EQ(parse_tree_depth_params({})->depth, 4.0);

  const auto ci = parse_class_imbalance_params({});
  ASSERT_TRUE(ci.has_value());
  EXPECT_EQ(ci->threshold_imbalance, 10.0);
  EXPECT_EQ(ci->threshold_misprediction, 0.7);
  EXPECT_EQ(ci->samples, 500);
  EXPECT_FALSE(ci->argmax);
  EXPECT_EQ(ci->labels_regex, ".*labels");
  EXPECT_EQ(ci->predictions_regex, ".*predictions");

  const auto of = parse_overfit_params({});
  ASSERT_TRUE(of.has_value());
  EXPECT_TRUE(of->tensor_regex.empty());
  EXPECT_EQ(of->start_step, 0);
  EXPECT_EQ(of->patience, 1);
  EXPECT_EQ(of->ratio_threshold, 0.1);

  const auto ot = parse_overtraining_params({});
  ASSERT_TRUE(ot.has_value());
  EXPECT_EQ(ot->patience_train, 5);
  EXPECT_EQ(ot->patience_validation, 10);
  EXPECT_EQ(ot->delta, 0.01);

  const auto pwi = parse_poor_weight_initialization_params({});
  ASSERT_TRUE(pwi.has_value());
  EXPECT_EQ(pwi->activation_inputs_regex, std::vector<std::string>{".*relu_input"});
  EXPECT_EQ(pwi->threshold, 10.0);
  EXPECT_EQ(pwi->distribution_range, 0.001);
  EXPECT_EQ(pwi->patience, 5);
  EXPECT_EQ(pwi->steps, 10);

  const auto sa = parse_saturated_activation_params({});
  ASSERT_TRUE(sa.has_value());
  EXPECT_EQ(sa->tensor_regex, std::vector<std::string>{".*tanh_input|.*sigmoid_input"});
  EXPECT_EQ(sa->threshold_tanh_min, -9.4999);
  EXPECT_EQ(sa->threshold_tanh_max, 9.4999);
  EXPECT_EQ(sa->threshold_sigmoid_min, -23.0);
  EXPECT_EQ(sa->threshold_sigmoid_max, 16.99999);
  EXPECT_EQ(sa->threshold_inactivity, 1.0);
  EXPECT_EQ(sa->threshold_layer, 50.0);

  const auto nlp = parse_nlp_sequence_ratio_params({});
  ASSERT_TRUE(nlp.has_value());
  EXPECT_EQ(nlp->tensor_regex, std::vector<std::string>{".*embedding0_input_0"});
  EXPECT_EQ(nlp->token_values, std::vector<double>{0.0});
  EXPECT_EQ(nlp->token_thresholds_percent, std::vector<double>{50.0});

  const auto st = parse_stalled_training_rule_params({});
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->threshold, 1800);
  EXPECT_FALSE(st->stop_training_on_fire);
  EXPECT_TRUE(st->training_job_name_prefix.empty());

  const auto fi = parse_feature_importance_overweight_params({});
  ASSERT_TRUE(fi.has_value());
  EXPECT_EQ(fi->threshold, 0.8);
  EXPECT_EQ(fi->nfeatures, 3);
  EXPECT_EQ(fi->tensor_regex, ".*feature_importance/weight");
}

TEST(LaterRuleParameters, StringForms) {
  // The 2019–2020 name of SimilarAcrossRuns' path.
  EXPECT_EQ(parse_similar_across_runs_params({{"other_trial", "/t2"}})->other_trials, "/t2");
  EXPECT_EQ(parse_similar_across_runs_params({{"other_trial", "/old"}, {"other_trials", "/new"}})
                ->other_trials,
            "/new");
  // Comma lists of numbers; a shorter threshold list is allowed.
  const auto nlp = parse_nlp_sequence_ratio_params(
      {{"token_values", "0, 1,2"}, {"token_thresholds_percent", "50,50"}});
  ASSERT_TRUE(nlp.has_value()) << nlp.error_status().to_string();
  EXPECT_EQ(nlp->token_values, (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(nlp->token_thresholds_percent, (std::vector<double>{50, 50}));
  // The older tuple forms of SaturatedActivation's bounds.
  const auto sa = parse_saturated_activation_params(
      {{"threshold_tanh", "(-5, 5.5)"}, {"threshold_sigmoid", "[-20,15]"}});
  ASSERT_TRUE(sa.has_value()) << sa.error_status().to_string();
  EXPECT_EQ(sa->threshold_tanh_min, -5.0);
  EXPECT_EQ(sa->threshold_tanh_max, 5.5);
  EXPECT_EQ(sa->threshold_sigmoid_min, -20.0);
  EXPECT_EQ(sa->threshold_sigmoid_max, 15.0);
  const auto stalled = parse_stalled_training_rule_params(
      {{"threshold", "60"}, {"stop_training_on_fire", "True"},
       {"training_job_name_prefix", "my-job"}});
  ASSERT_TRUE(stalled.has_value());
  EXPECT_EQ(stalled->threshold, 60);
  EXPECT_TRUE(stalled->stop_training_on_fire);
  EXPECT_EQ(stalled->training_job_name_prefix, "my-job");
  EXPECT_EQ(parse_confusion_params({{"category_no", "5"}})->category_no, 5);
  EXPECT_TRUE(parse_class_imbalance_params({{"argmax", "true"}})->argmax);
}

TEST(LaterRuleParameters, Errors) {
  expect_invalid(parse_similar_across_runs_params({}).error_status(),
                 {"SimilarAcrossRuns", "'other_trials'", "required"});
  expect_invalid(parse_nlp_sequence_ratio_params({{"token_values", "0,pad"}}).error_status(),
                 {"NLPSequenceRatio", "'token_values'", "pad"});
  expect_invalid(parse_saturated_activation_params({{"threshold_tanh", "(5)"}}).error_status(),
                 {"SaturatedActivation", "'threshold_tanh'", "(min, max)"});
  expect_invalid(parse_saturated_activation_params({{"threshold_tanh", "(5, -5)"}}).error_status(),
                 {"'threshold_tanh'"});
  expect_invalid(parse_confusion_params({{"category_no", "1"}}).error_status(),
                 {"Confusion", "'category_no'"});
  expect_invalid(parse_overfit_params({{"patience", "0"}}).error_status(),
                 {"Overfit", "'patience'", "at least 1"});
  expect_invalid(parse_overtraining_params({{"patience_train", "2.5"}}).error_status(),
                 {"Overtraining", "'patience_train'", "integer"});
  expect_invalid(parse_feature_importance_overweight_params({{"nfeatures", "0"}}).error_status(),
                 {"'nfeatures'"});
  expect_invalid(parse_stalled_training_rule_params({{"threshold", "-1"}}).error_status(),
                 {"'threshold'"});
  expect_invalid(parse_tree_depth_params({{"max_depth", "4"}}).error_status(),
                 {"TreeDepth", "'max_depth'"});
  expect_invalid(parse_class_imbalance_params({{"argmax", "yes"}}).error_status(),
                 {"ClassImbalance", "'argmax'"});
}

}  // namespace
}  // namespace trialstat::rules
