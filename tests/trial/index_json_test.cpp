// SPDX-License-Identifier: Apache-2.0
// Index JSON parsing (spec/FORMAT.md §6): the fast json.dumps tokenizer must give exactly what
// the nlohmann-json path gives — same entries, same errors — on real and mutated files.
#include "host/trial/index_json.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/shared_trials.hpp"

namespace trialstat::trial::detail {
namespace {

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Everything a parse produced, as comparable text.
std::string describe(const status& st, const parsed_index& p) {
  if (!st.ok()) return "error " + st.to_string();
  std::ostringstream out;
  out << "mode " << (p.mode ? static_cast<int>(*p.mode) : -1) << " step " << p.mode_step.value_or(-1)
      << " file " << (p.has_event_file_name ? p.event_file_name : "<none>") << "\n";
  for (const auto& t : p.tensors) {
    out << "T " << p.name(t.name_offset, t.name_length) << " " << t.start_bytes << " " << t.length_bytes << "\n";
  }
  for (const auto& s : p.shapes) {
    out << "S " << p.name(s.name_offset, s.name_length) << " [";
    for (uint32_t i = 0; i < s.dims_count; ++i) out << p.dims[s.dims_offset + i] << ",";
    out << "]\n";
  }
  return out.str();
}

std::string parse_fast(std::string_view text) {
  parsed_index p;
  const status st = parse_index_json(text, p);
  return describe(st, p);
}
std::string parse_reference(std::string_view text) {
  parsed_index p;
  const status st = parse_index_json_nlohmann(text, p);
  return describe(st, p);
}

constexpr std::string_view sample =
    R"({"meta": {"mode": "EVAL", "mode_step": 4, "event_file_name": "events/000000000054/000000000054_worker_0.tfevents"}, )"
    R"("tensor_payload": [{"tensorname": "relu1_output_0", "start_idx": 0, "length": 8339}, )"
    R"({"tensorname": "smdebug/reductions/abs_l2/relu1_output_0", "start_idx": 8339, "length": 111}], )"
    R"("shape_payload": [{"tensorname": "relu1_output_0", "originalname": "relu1_output_0", "shape": [64, 32]}, )"
    R"({"tensorname": "loss", "originalname": "loss", "shape": []}]})";

TEST(IndexJson, ParsesTheSample) {
  parsed_index p;
  ASSERT_TRUE(parse_index_json(sample, p).ok());
  EXPECT_EQ(p.mode, mode::eval);
  EXPECT_EQ(p.mode_step, 4);
  EXPECT_EQ(p.event_file_name, "events/000000000054/000000000054_worker_0.tfevents");
  ASSERT_EQ(p.tensors.size(), 2u);
  EXPECT_EQ(p.name(p.tensors[1].name_offset, p.tensors[1].name_length),
            "smdebug/reductions/abs_l2/relu1_output_0");
  EXPECT_EQ(p.tensors[1].start_bytes, 8339u);
  EXPECT_EQ(p.tensors[1].length_bytes, 111u);
  ASSERT_EQ(p.shapes.size(), 2u);
  EXPECT_EQ(p.shapes[0].dims_count, 2u);
  EXPECT_EQ(p.dims[p.shapes[0].dims_offset + 1], 32);
  EXPECT_EQ(p.shapes[1].dims_count, 0u);
  EXPECT_EQ(parse_fast(sample), parse_reference(sample));
}

TEST(IndexJson, EscapesAndPrettyPrintingGiveTheSameResult) {
  const std::vector<std::string> texts = {
      // escapes and non-ASCII go through nlohmann
      R"({"meta": {"mode": "TRAIN", "mode_step": 1, "event_file_name": "e"}, "tensor_payload": [{"tensorname": "a\"b\\c\u00e9", "start_idx": 0, "length": 5}]})",
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 1, \"event_file_name\": \"e\"}, \"tensor_payload\": [{\"tensorname\": \"caf\xC3\xA9\", \"start_idx\": 0, \"length\": 5}]}",
      // indentation and newlines stay on the fast path
      "{\n  \"meta\": {\n    \"mode\": \"PREDICT\",\n    \"mode_step\": 0\n  },\r\n\t\"tensor_payload\": [],\n  \"shape_payload\": [ ]\n}\n",
      // big numbers: 18 digits fast, 19-20 via nlohmann, beyond uint64 a float
      R"({"meta": {"mode": "TRAIN", "mode_step": 1, "event_file_name": "e"}, "tensor_payload": [{"tensorname": "a", "start_idx": 999999999999999999, "length": 18446744073709551615}]})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 1, "event_file_name": "e"}, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 18446744073709551616}]})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 1e2}, "tensor_payload": []})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 01}, "tensor_payload": []})",
      R"({"meta": {"mode": " TRAIN ", "mode_step": 1}, "tensor_payload": [], "x": [true, false, null, {"y": -1.5}]})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 1}, "tensor_payload": []} trailing)",
      R"({"meta": {"mode": "TRAIN", "mode_step": 1}, "tensor_payload": [],})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 1}, "shape_payload": [{"tensorname": "s", "shape": [1, -2]}]})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 1}, "shape_payload": [{"tensorname": "s", "shape": [[1]]}]})",
      R"({"meta": {"mode": "TRAIN", "mode_step": 1}, "tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 3}]})",
      "",
      "   ",
      "null",
      "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
  };
  for (const auto& text : texts) {
    SCOPED_TRACE(text);
    EXPECT_EQ(parse_fast(text), parse_reference(text));
  }
  parsed_index p;
  ASSERT_TRUE(parse_index_json(texts[0], p).ok());
  EXPECT_EQ(p.name(p.tensors[0].name_offset, p.tensors[0].name_length), "a\"b\\c\xC3\xA9");
  EXPECT_FALSE(parse_index_json(texts[12], p).ok());  // records without event_file_name
  EXPECT_TRUE(parse_index_json(texts[2], p).ok());
  EXPECT_EQ(p.mode, mode::predict);
}

TEST(IndexJson, EveryGoldenIndexFileAgreesWithNlohmann) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  std::size_t files = 0;
  for (const auto& trial : ::trialstat::testing::shared_trial_names()) {
    const auto index = golden / trial / "index";
    if (!std::filesystem::is_directory(index)) continue;
    for (const auto& f : std::filesystem::recursive_directory_iterator(index)) {
      if (!f.is_regular_file()) continue;
      const std::string text = read_text(f.path());
      const std::string fast = parse_fast(text);
      EXPECT_EQ(fast, parse_reference(text)) << f.path();
      EXPECT_EQ(fast.rfind("error", 0), std::string::npos) << f.path() << ": " << fast;
      ++files;
    }
  }
  EXPECT_GT(files, 0u);
}

TEST(IndexJson, MutatedFilesAgreeWithNlohmann) {
  // Byte flips, insertions, deletions and truncations of the sample: whatever nlohmann says
  // (an error message or entries), the fast path must say the same.
  const uint32_t seed = 20240611;
  std::mt19937 rng(seed);
  const std::string alphabet = "{}[]\":,0123456789-.eE \\ntrufalsTRAINmode_stepxyz\x01\xC3\xA9";
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string text(sample);
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const std::size_t pos = rng() % text.size();
      switch (rng() % 4) {
        case 0: text[pos] = alphabet[rng() % alphabet.size()]; break;
        case 1: text.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        case 2: text.erase(pos, 1 + rng() % 8); break;
        case 3: text.resize(pos); break;
      }
    }
    ASSERT_EQ(parse_fast(text), parse_reference(text)) << "seed " << seed << " iteration " << iteration
                                                       << " text: " << text;
  }
}

}  // namespace
}  // namespace trialstat::trial::detail
