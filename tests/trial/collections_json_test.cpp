// SPDX-License-Identifier: Apache-2.0
// The collections file parser (host/trial/collections_json.hpp, spec/FORMAT.md §8), called
// directly: a complete valid file field by field, then every malformed case with its exact
// warning (code and message) and what is still loaded.
#include "host/trial/collections_json.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace trialstat::trial::detail {
namespace {

constexpr std::string_view file = "collections/000000000/worker_0_collections.json";

std::vector<std::string> messages(const parsed_collections& p) {
  std::vector<std::string> out;
  for (const status& w : p.warnings) out.push_back(w.message());
  return out;
}

std::string prefixed(std::string_view message) {
  return "collections file collections/000000000/worker_0_collections.json: " + std::string(message);
}

TEST(CollectionsJson, ValidFileEveryField) {
  const auto p = parse_collections_json(
      R"({"collections": {)"
      R"("weights": {"name": "weights", "include_regex": ["^(?!gradient).*weight"], )"
      R"("tensor_names": ["b.weight", "a.weight"], )"
      R"("reduction_config": {"save_raw_tensor": false, "reductions": "mean,abs_l2_norm", "save_shape": true}, )"
      R"("save_config": {"TRAIN": {"save_interval": 2, "save_steps": [1, 3], "start_step": 1, "end_step": 9}, )"
      R"("EVAL": null, "GLOBAL": {"save_interval": 5, "save_steps": [], "start_step": 0, "end_step": null}}, )"
      R"("save_histogram": false}, )"
      R"("plain": {"include_regex": [["nested"], "x$"], "tensor_names": null}}, )"
      R"("_meta": {"num_workers": 3}})",
      file);
  EXPECT_TRUE(p.warnings.empty()) << testing::PrintToString(messages(p));
  EXPECT_EQ(p.num_workers, 3);
  ASSERT_EQ(p.collections.size(), 2u);
  ASSERT_EQ(p.include_regexes.size(), 2u);

  const collection& w = p.collections[0];
  EXPECT_EQ(w.name, "weights");
  EXPECT_EQ(w.include_regex, std::vector<std::string>{"^(?!gradient).*weight"});
  EXPECT_EQ(w.tensor_names, (std::vector<std::string>{"b.weight", "a.weight"}));  // as in the file
  EXPECT_FALSE(w.save_raw_tensor);
  EXPECT_TRUE(w.save_shape);
  EXPECT_EQ(w.reductions, "mean,abs_l2_norm");
  EXPECT_TRUE(w.has_reduction_config);
  EXPECT_FALSE(w.save_histogram);
  ASSERT_TRUE(w.save_configs[0].has_value());  // TRAIN
  EXPECT_EQ(w.save_configs[0]->save_interval, 2);
  EXPECT_EQ(w.save_configs[0]->save_steps, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(w.save_configs[0]->start_step, 1);
  EXPECT_EQ(w.save_configs[0]->end_step, 9);
  EXPECT_FALSE(w.save_configs[1].has_value());  // EVAL: null
  EXPECT_FALSE(w.save_configs[2].has_value());  // PREDICT: absent
  ASSERT_TRUE(w.save_configs[3].has_value());   // GLOBAL
  EXPECT_EQ(w.save_configs[3]->save_interval, 5);
  EXPECT_FALSE(w.save_configs[3]->end_step.has_value());
  ASSERT_EQ(p.include_regexes[0].size(), 1u);
  EXPECT_TRUE(p.include_regexes[0][0].search("MLP_fc1.weight"));
  EXPECT_FALSE(p.include_regexes[0][0].search("gradient/MLP_fc1.weight"));

  const collection& plain = p.collections[1];  // no "name": the key; defaults elsewhere
  EXPECT_EQ(plain.name, "plain");
  EXPECT_EQ(plain.include_regex, (std::vector<std::string>{"nested", "x$"}));  // nested lists flattened
  EXPECT_TRUE(plain.tensor_names.empty());
  EXPECT_TRUE(plain.save_raw_tensor);
  EXPECT_FALSE(plain.save_shape);
  EXPECT_FALSE(plain.has_reduction_config);
  EXPECT_TRUE(plain.save_histogram);
  EXPECT_EQ(p.include_regexes[1].size(), 2u);
}

TEST(CollectionsJson, NotAnObjectLoadsNothing) {
  for (const std::string_view text : {"not json at all", "[1, 2]", "", "\"text\"", "{\"collections\": {}"}) {
    const auto p = parse_collections_json(text, file);
    ASSERT_EQ(p.warnings.size(), 1u) << text;
    EXPECT_EQ(p.warnings[0].code(), error_code::data_loss);
    EXPECT_EQ(p.warnings[0].message(),
              prefixed("expected a JSON object with \"collections\" and \"_meta\"; no collections loaded"));
    EXPECT_TRUE(p.collections.empty());
    EXPECT_FALSE(p.num_workers.has_value());
  }
}

TEST(CollectionsJson, NumWorkersMustBeAPositiveInteger) {
  for (const std::string_view n : {"0", "-1", "1.5", "\"2\"", "null", "1073741824"}) {
    const auto p =
        parse_collections_json(R"({"collections": {}, "_meta": {"num_workers": )" + std::string(n) + "}}", file);
    EXPECT_EQ(messages(p), std::vector<std::string>{prefixed("_meta.num_workers: expected a positive integer")}) << n;
    EXPECT_EQ(p.warnings[0].code(), error_code::data_loss);
    EXPECT_FALSE(p.num_workers.has_value()) << n;
  }
  // Absent (or a _meta that is not an object): no number, no warning.
  EXPECT_TRUE(parse_collections_json(R"({"collections": {}, "_meta": {}})", file).warnings.empty());
  EXPECT_TRUE(parse_collections_json(R"({"collections": {}, "_meta": 4})", file).warnings.empty());
  EXPECT_EQ(parse_collections_json(R"({"collections": {}, "_meta": {"num_workers": 1073741823}})", file).num_workers,
            1073741823);
}

TEST(CollectionsJson, CollectionsMustBeAnObject) {
  for (const std::string_view text :
       {R"({"_meta": {"num_workers": 2}})", R"({"collections": [], "_meta": {"num_workers": 2}})"}) {
    const auto p = parse_collections_json(text, file);
    EXPECT_EQ(messages(p), std::vector<std::string>{prefixed("\"collections\": expected an object")}) << text;
    EXPECT_EQ(p.num_workers, 2);  // read before
    EXPECT_TRUE(p.collections.empty());
  }
}

TEST(CollectionsJson, ACollectionThatIsNotAnObjectIsSkipped) {
  const auto p = parse_collections_json(R"({"collections": {"bad": 3, "good": {}}})", file);
  EXPECT_EQ(messages(p), std::vector<std::string>{prefixed("collection 'bad': expected an object")});
  ASSERT_EQ(p.collections.size(), 1u);
  EXPECT_EQ(p.collections[0].name, "good");
  EXPECT_EQ(p.include_regexes.size(), 1u);
}

TEST(CollectionsJson, MistypedFieldsKeepTheirDefaults) {
  struct field_case {
    const char* fields;
    const char* problems;
  };
  const field_case cases[] = {
      {R"("include_regex": "x")", "include_regex: expected a list of strings"},
      {R"("tensor_names": ["a", 1])", "tensor_names: expected a list of strings"},
      {R"("save_histogram": 1)", "save_histogram: expected a boolean"},
      {R"("reduction_config": [])", "reduction_config: expected an object"},
      {R"("reduction_config": {"save_raw_tensor": 0})", "reduction_config.save_raw_tensor: expected a boolean"},
      {R"("reduction_config": {"save_shape": "yes"})", "reduction_config.save_shape: expected a boolean"},
      {R"("reduction_config": {"reductions": ["mean"]})", "reduction_config.reductions: expected a string"},
      {R"("save_config": 1)", "save_config: expected an object keyed by mode"},
      {R"("save_config": {"TRAIN": 1})", "save_config.TRAIN: expected an object or null"},
      {R"("save_config": {"TRAIN": {"save_interval": "2"}})", "save_config.TRAIN.save_interval: expected an integer"},
      {R"("save_config": {"EVAL": {"start_step": 1.5}})", "save_config.EVAL.start_step: expected an integer"},
      {R"("save_config": {"TRAIN": {"end_step": "9"}})", "save_config.TRAIN.end_step: expected an integer or null"},
      {R"("save_config": {"TRAIN": {"save_steps": [1, "2"]}})", "save_config.TRAIN.save_steps: expected integers"},
      {R"("save_config": {"TRAIN": {"save_steps": 3}})", "save_config.TRAIN.save_steps: expected a list"},
      {R"("save_histogram": 1, "tensor_names": 2)",
       "tensor_names: expected a list of strings; save_histogram: expected a boolean"},
  };
  for (const auto& c : cases) {
    const auto p = parse_collections_json(
        std::string(R"({"collections": {"key": {"name": "named", )") + c.fields + "}}}", file);
    ASSERT_EQ(p.warnings.size(), 1u) << c.fields;
    EXPECT_EQ(p.warnings[0].code(), error_code::data_loss);
    EXPECT_EQ(p.warnings[0].message(),
              prefixed(std::string("collection 'named': ") + c.problems + " (those fields use defaults)"));
    ASSERT_EQ(p.collections.size(), 1u) << c.fields;
    const collection& got = p.collections[0];
    EXPECT_TRUE(got.save_histogram);
    EXPECT_TRUE(got.save_raw_tensor);
    EXPECT_FALSE(got.save_shape);
    EXPECT_TRUE(got.reductions.empty());
    EXPECT_FALSE(got.save_configs[0].has_value()) << c.fields;  // a bad mode keeps no save config
    EXPECT_FALSE(got.save_configs[1].has_value()) << c.fields;
  }
}

TEST(CollectionsJson, UnknownModesKeysAndNullsAreIgnored) {
  const auto p = parse_collections_json(
      R"({"collections": {"c": {"extra": [1], "save_config": {"TRAINING": 1, "PREDICT": null}, )"
      R"("save_histogram": null, )"
      R"("reduction_config": null, "include_regex": null}}, "other": true})",
      file);
  EXPECT_TRUE(p.warnings.empty()) << testing::PrintToString(messages(p));
  ASSERT_EQ(p.collections.size(), 1u);
  EXPECT_FALSE(p.collections[0].has_reduction_config);
}

TEST(CollectionsJson, APatternThatDoesNotCompileMatchesNothing) {
  const auto p = parse_collections_json(
      R"({"collections": {"rx": {"include_regex": ["(unclosed", "bias$"]}}})", file);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0].code(), error_code::invalid_argument);
  const std::string& message = p.warnings[0].message();
  EXPECT_EQ(message.rfind(prefixed("collection 'rx': "), 0), 0u) << message;
  EXPECT_NE(message.find("(unclosed"), std::string::npos) << message;
  EXPECT_TRUE(message.ends_with("; that pattern matches nothing")) << message;
  ASSERT_EQ(p.collections.size(), 1u);
  EXPECT_EQ(p.collections[0].include_regex.size(), 2u);  // as listed
  ASSERT_EQ(p.include_regexes[0].size(), 1u);            // the one that compiles
  EXPECT_EQ(p.include_regexes[0][0].pattern(), "bias$");
}

TEST(CollectionsJson, WarningsComeInFileOrder) {
  const auto p = parse_collections_json(
      R"({"_meta": {"num_workers": 0}, "collections": {"a": 1, "b": {"save_histogram": 2, "include_regex": ["("]}}})",
      file);
  const auto got = messages(p);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], prefixed("_meta.num_workers: expected a positive integer"));
  EXPECT_EQ(got[1], prefixed("collection 'a': expected an object"));
  EXPECT_EQ(got[2], prefixed("collection 'b': save_histogram: expected a boolean (those fields use defaults)"));
  EXPECT_EQ(got[3].rfind(prefixed("collection 'b': "), 0), 0u);
  EXPECT_EQ(p.warnings[3].code(), error_code::invalid_argument);
}

}  // namespace
}  // namespace trialstat::trial::detail
