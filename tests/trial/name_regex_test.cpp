// SPDX-License-Identifier: Apache-2.0
// name_regex: Python re.search semantics on PCRE2 (spec/TRIAL_API.md §9).
#include "trialstat/trial/name_regex.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace trialstat::trial {
namespace {

name_regex compile_ok(std::string_view pattern) {
  auto rx = name_regex::compile(pattern);
  EXPECT_TRUE(rx.has_value()) << pattern << ": " << rx.error_status().to_string();
  return rx.has_value() ? *rx : name_regex{};
}

TEST(NameRegex, DefaultWeightsRegexUsesNegativeLookahead) {
  // smdebug's default PyTorch "weights" collection regex (FORMAT §8).
  const auto rx = compile_ok("^(?!gradient).*weight");
  EXPECT_TRUE(rx.search("MLP_fc1.weight"));
  EXPECT_TRUE(rx.search("Deep_layers.0.weight"));
  EXPECT_FALSE(rx.search("gradient/MLP_fc1.weight"));
  EXPECT_FALSE(rx.search("MLP_fc1.bias"));
  EXPECT_EQ(rx.pattern(), "^(?!gradient).*weight");
}

TEST(NameRegex, DefaultLossesRegex) {
  const auto rx = compile_ok("[Ll]oss_(?!input).*output");
  EXPECT_TRUE(rx.search("CrossEntropyLoss_output_0"));
  EXPECT_TRUE(rx.search("MSELoss_output_0"));
  EXPECT_FALSE(rx.search("CrossEntropyLoss_input_0"));
  EXPECT_FALSE(rx.search("relu1_output_0"));
}

TEST(NameRegex, SearchIsUnanchored) {
  // re.search finds the pattern anywhere; re.match would need it at the start.
  const auto rx = compile_ok("fc2");
  EXPECT_TRUE(rx.search("MLP_fc2.weight"));
  EXPECT_TRUE(rx.search("gradient/MLP_fc2.bias"));
  EXPECT_FALSE(rx.search("MLP_fc1.weight"));
  const auto anchored = compile_ok("^gradient");
  EXPECT_TRUE(anchored.search("gradient/MLP_fc1.weight"));
  EXPECT_FALSE(anchored.search("MLP_gradient"));
  const auto end = compile_ok("bias$");
  EXPECT_TRUE(end.search("MLP_fc1.bias"));
  EXPECT_FALSE(end.search("MLP_fc1.bias_x"));
  EXPECT_TRUE(compile_ok("").search(""));
  EXPECT_TRUE(compile_ok("").search("anything"));
  EXPECT_FALSE(compile_ok("x").search(""));
}

TEST(NameRegex, PythonNamedGroupsAndBackReferences) {
  const auto rx = compile_ok("(?P<n>a)(?P=n)");
  EXPECT_TRUE(rx.search("xaay"));
  EXPECT_FALSE(rx.search("xaby"));
  const auto word = compile_ok("^(?P<stem>[a-z]+)_(?P=stem)$");
  EXPECT_TRUE(word.search("relu_relu"));
  EXPECT_FALSE(word.search("relu_gelu"));
  // A literal "(?P=" inside a character class is not rewritten.
  EXPECT_TRUE(compile_ok("[(?P=]").search("P"));
}

TEST(NameRegex, PythonOnlySpellings) {
  // \Z is Python's absolute end of string (PCRE2's \z).
  const auto z = compile_ok("weight\\Z");
  EXPECT_TRUE(z.search("MLP_fc1.weight"));
  EXPECT_FALSE(z.search("MLP_fc1.weight\n"));
  // {,n} means {0,n} in Python.
  const auto q = compile_ok("^a{,2}b$");
  EXPECT_TRUE(q.search("b"));
  EXPECT_TRUE(q.search("aab"));
  EXPECT_FALSE(q.search("aaab"));
  // \uXXXX escapes.
  EXPECT_TRUE(compile_ok("caf\\u00e9").search("caf\xC3\xA9_output_0"));
}

TEST(NameRegex, UnicodeNames) {
  // Python 3 patterns are Unicode: \w matches a non-ASCII letter, '.' one code point.
  EXPECT_TRUE(compile_ok("^\\w+$").search("gewicht_\xC3\xBC"));
  EXPECT_TRUE(compile_ok("^caf.$").search("caf\xC3\xA9"));
  // Invalid UTF-8 in a name is searched, not rejected.
  EXPECT_TRUE(compile_ok("abc").search("\xFF" "abc"));
}

TEST(NameRegex, InvalidPatternNamesPatternAndOffset) {
  const auto rx = name_regex::compile("weight(");
  ASSERT_FALSE(rx.has_value());
  EXPECT_EQ(rx.error_status().code(), error_code::invalid_argument);
  EXPECT_NE(rx.error_status().message().find("weight("), std::string::npos)
      << rx.error_status().message();
  EXPECT_NE(rx.error_status().message().find("offset"), std::string::npos)
      << rx.error_status().message();
  const auto bad_class = name_regex::compile("[z-a]");
  ASSERT_FALSE(bad_class.has_value());
  EXPECT_NE(bad_class.error_status().message().find("[z-a]"), std::string::npos);
}

TEST(NameRegex, SearchAnyAndDefaultConstructed) {
  std::vector<name_regex> list{compile_ok("^gradient"), compile_ok("bias$")};
  EXPECT_TRUE(search_any(list, "gradient/MLP_fc1.weight"));
  EXPECT_TRUE(search_any(list, "MLP_fc1.bias"));
  EXPECT_FALSE(search_any(list, "MLP_fc1.weight"));
  EXPECT_FALSE(search_any({}, "MLP_fc1.weight"));
  const name_regex empty;
  EXPECT_FALSE(empty.search("anything"));
}

TEST(NameRegex, ConcurrentSearchesAgree) {
  const auto rx = compile_ok("^(?!gradient).*weight");
  const auto copy = rx;  // copies share the compiled code
  std::vector<std::thread> threads;
  std::vector<int> hits(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string name = (i % 2 == 0 ? "gradient/L" : "L") + std::to_string(i) + ".weight";
        if ((t % 2 == 0 ? rx : copy).search(name)) ++hits[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(hits[t], 1000) << "thread " << t;
}

}  // namespace
}  // namespace trialstat::trial
