// SPDX-License-Identifier: Apache-2.0
// SageMaker-shaped rule configurations (spec/RULES.md §1).
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/shared_trials.hpp"
#include "trialstat/rules/rule_config.hpp"

namespace trialstat::rules {
namespace {

TEST(RuleConfig, ParsesAList) {
  const auto r = parse_rule_config(R"([
    {"RuleConfigurationName": "vanishing", "RuleEvaluatorImage": "ignored",
     "RuleParameters": {"rule_to_invoke": "VanishingGradient", "threshold": "1e-6"}},
    {"RuleParameters": {"rule_to_invoke": "LossNotDecreasing", "num_steps": 20,
                        "diff_percent": 0.5, "use_losses_collection": false, "mode": null,
                        "collection_names": ["losses", "metrics"]}}
  ])");
  ASSERT_TRUE(r.has_value()) << r.error_status().to_string();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].configuration_name, "vanishing");
  EXPECT_EQ((*r)[0].rule_name, "VanishingGradient");
  EXPECT_EQ((*r)[0].parameters, (rule_parameters{{"threshold", "1e-6"}}));
  EXPECT_EQ((*r)[1].configuration_name, "LossNotDecreasing");  // defaults to the rule name
  EXPECT_EQ((*r)[1].parameters, (rule_parameters{{"num_steps", "20"},
                                                  {"diff_percent", "0.5"},
                                                  {"use_losses_collection", "False"},
                                                  {"mode", "None"},
                                                  {"collection_names", "losses,metrics"}}));
  // The converted strings parse back.
  auto rule = make_rule((*r)[1].rule_name, (*r)[1].parameters);
  EXPECT_TRUE(rule.has_value()) << rule.error_status().to_string();
}

TEST(RuleConfig, SingleObjectAndSageMakerWrapper) {
  const auto single = parse_rule_config(
      R"({"RuleConfigurationName": "x", "RuleParameters": {"rule_to_invoke": "AllZero", "tensor_regex": ".*"}})");
  ASSERT_TRUE(single.has_value()) << single.error_status().to_string();
  ASSERT_EQ(single->size(), 1u);
  EXPECT_EQ((*single)[0].rule_name, "AllZero");
  EXPECT_EQ((*single)[0].parameters.at("tensor_regex"), ".*");

  const auto wrapped = parse_rule_config(
      R"({"DebugRuleConfigurations": [{"RuleParameters": {"rule_to_invoke": "DeadRelu"}}]})");
  ASSERT_TRUE(wrapped.has_value()) << wrapped.error_status().to_string();
  ASSERT_EQ(wrapped->size(), 1u);
  EXPECT_EQ((*wrapped)[0].rule_name, "DeadRelu");
  EXPECT_TRUE((*wrapped)[0].parameters.empty());

  const auto empty = parse_rule_config("[]");
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
}

// Found by tests/fuzz/fuzz_rule_config (issue 12): a number literal beyond a double's range is
// nlohmann's out_of_range, not a parse_error; it escaped parse_rule_config and `trialstat rules
// --config` ended in std::terminate. The fuzzer's reproducer, then the smallest such document.
TEST(RuleConfig, NumberOverflowIsDataLossNotACrash) {
  for (const char* text : {"{\"DebugRuleConfigurations\": [720e+46116860184273879ght,(ea+)+$\"",
                           "[1e999]",
                           R"({"RuleParameters": {"rule_to_invoke": "AllZero", "threshold": -1e400}})"}) {
    const auto r = parse_rule_config(text, "rules.json");
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.error_status().code(), error_code::data_loss) << text;
    const std::string m = r.error_status().message();
    EXPECT_NE(m.find("rules.json"), std::string::npos) << m;
    EXPECT_NE(m.find("number overflow"), std::string::npos) << m;
  }
}

TEST(RuleConfig, MalformedJsonNamesSourceAndByte) {
  const auto r = parse_rule_config(R"([{"RuleParameters": {"rule_to_invoke": "AllZero",}}])",
                                   "rules.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error_status().code(), error_code::data_loss);
  const std::string m = r.error_status().message();
  EXPECT_NE(m.find("rules.json"), std::string::npos) << m;
  EXPECT_NE(m.find("at byte offset 49"), std::string::npos) << m;  // the "}" after the trailing ","
}

TEST(RuleConfig, ShapeErrorsNameTheEntry) {
  const auto missing = parse_rule_config(R"([
    {"RuleParameters": {"rule_to_invoke": "AllZero"}},
    {"RuleConfigurationName": "bad", "RuleParameters": {"threshold": "1"}}])");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error_status().code(), error_code::invalid_argument);
  EXPECT_NE(missing.error_status().message().find("entry 1"), std::string::npos);
  EXPECT_NE(missing.error_status().message().find("rule_to_invoke"), std::string::npos);

  for (const char* bad : {R"([{"RuleConfigurationName": "x"}])", R"([42])",
                          R"([{"RuleParameters": {"rule_to_invoke": "AllZero", "x": {"a": 1}}}])",
                          R"([{"RuleParameters": {"rule_to_invoke": 7}}])", R"("AllZero")"}) {
    const auto r = parse_rule_config(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error_status().code(), error_code::invalid_argument) << bad;
  }
}

TEST(RuleConfig, LoadsFiles) {
  const auto dir = testing::make_scratch_dir("rule_config");
  const auto good = dir / "rules.json";
  std::ofstream(good) << R"([{"RuleParameters": {"rule_to_invoke": "ExplodingTensor"}}])";
  const auto r = load_rule_config(good);
  ASSERT_TRUE(r.has_value()) << r.error_status().to_string();
  EXPECT_EQ((*r)[0].rule_name, "ExplodingTensor");

  const auto bad = dir / "bad.json";
  std::ofstream(bad) << "[{";
  const auto b = load_rule_config(bad);
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.error_status().code(), error_code::data_loss);
  EXPECT_NE(b.error_status().message().find("bad.json"), std::string::npos);

  const auto none = load_rule_config(dir / "absent.json");
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error_status().code(), error_code::not_found);
}

}  // namespace
}  // namespace trialstat::rules
