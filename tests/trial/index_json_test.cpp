// SPDX-License-Identifier: Apache-2.0
// Index JSON parsing (spec/FORMAT.md §6) with simdjson On-Demand: every golden index file, hand
// written edge cases with their exact messages, and fixed-seed mutations, each checked against an
// independent oracle built on nlohmann-json's DOM (the schema rules written out a second time).
#include "host/trial/index_json.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/support/shared_trials.hpp"
#include "trialstat/io/file_reader.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::trial::detail {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

/// Everything a parse produced, as comparable text.
std::string describe(const parsed_index& p) {
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

/// What the parser under test said: describe() on success, else "error <code>: <message>".
std::string parse_text(index_json_parser& parser, std::string_view text) {
  parsed_index p;
  const status st = parser.parse_unpadded(text, p);
  return st.ok() ? describe(p) : "error " + st.to_string();
}

std::string parse_text(std::string_view text) {
  index_json_parser parser;
  return parse_text(parser, text);
}

/// The message of a failed parse (empty on success).
std::string error_of(std::string_view text) {
  index_json_parser parser;
  parsed_index p;
  const status st = parser.parse_unpadded(text, p);
  return st.ok() ? std::string() : st.message();
}

// ---- the oracle: nlohmann DOM + the schema, written independently of the parser ---------------

struct oracle_result {
  bool ambiguous = false;  ///< a repeated key: the DOM keeps one value, the parser reads both
  bool json_valid = false;
  std::optional<std::string> description;  ///< nullopt: the file must be rejected
};

bool is_non_negative_integer(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);  // "-0" is 0
}

oracle_result oracle(std::string_view text) {
  oracle_result r;
  // A callback that notices repeated keys in any object.
  std::vector<std::set<std::string>> keys;
  const json::parser_callback_t callback = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second) {
      r.ambiguous = true;
    }
    return true;
  };
  const json doc = json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return r;
  r.json_valid = true;
  if (!doc.is_object()) return r;
  const auto meta = doc.find("meta");
  if (meta == doc.end() || !meta->is_object() || meta->empty()) return r;
  parsed_index p;
  const auto mode = meta->find("mode");
  if (mode == meta->end() || !mode->is_string()) return r;
  std::string mode_name = mode->get<std::string>();
  while (!mode_name.empty() && std::string_view(" \t\n").find(mode_name.front()) != std::string_view::npos) {
    mode_name.erase(0, 1);
  }
  while (!mode_name.empty() && std::string_view(" \t\n").find(mode_name.back()) != std::string_view::npos) {
    mode_name.pop_back();
  }
  p.mode = parse_mode_name(mode_name);
  if (!p.mode) return r;
  const auto mode_step = meta->find("mode_step");
  if (mode_step == meta->end() || !is_non_negative_integer(*mode_step) ||
      mode_step->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return r;
  }
  p.mode_step = mode_step->get<int64_t>();
  if (const auto file = meta->find("event_file_name"); file != meta->end() && !file->is_null()) {
    if (!file->is_string()) return r;
    p.has_event_file_name = true;
    p.event_file_name = file->get<std::string>();
  }
  const auto tensors = doc.find("tensor_payload");
  const auto shapes = doc.find("shape_payload");
  if (tensors == doc.end() && shapes == doc.end()) return r;
  if (tensors != doc.end()) {
    if (!tensors->is_array()) return r;
    for (const auto& item : *tensors) {
      if (!item.is_object()) return r;
      const auto name = item.find("tensorname");
      const auto start = item.find("start_idx");
      const auto length = item.find("length");
      if (name == item.end() || !name->is_string()) return r;
      if (start == item.end() || !is_non_negative_integer(*start)) return r;
      if (length == item.end() || !is_non_negative_integer(*length)) return r;
      p.add_tensor(name->get<std::string>(), start->get<uint64_t>(), length->get<uint64_t>());
    }
  }
  if (shapes != doc.end()) {
    if (!shapes->is_array()) return r;
    for (const auto& item : *shapes) {
      if (!item.is_object()) return r;
      const auto name = item.find("tensorname");
      const auto shape = item.find("shape");
      if (name == item.end() || !name->is_string()) return r;
      if (shape == item.end() || !shape->is_array()) return r;
      parsed_index::shape_item s;
      s.name_offset = static_cast<uint32_t>(p.names.size());
      s.name_length = static_cast<uint32_t>(name->get<std::string>().size());
      p.names += name->get<std::string>();
      s.dims_offset = static_cast<uint32_t>(p.dims.size());
      for (const auto& d : *shape) {
        if (!is_non_negative_integer(d) ||
            d.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          return r;
        }
        p.dims.push_back(d.get<int64_t>());
      }
      s.dims_count = static_cast<uint32_t>(p.dims.size() - s.dims_offset);
      p.shapes.push_back(s);
    }
  }
  if (!p.tensors.empty() && !p.has_event_file_name) return r;
  r.description = describe(p);
  return r;
}

constexpr std::string_view sample =
    R"({"meta": {"mode": "EVAL", "mode_step": 4, "event_file_name": "events/000000000054/000000000054_worker_0.tfevents"}, )"
    R"("tensor_payload": [{"tensorname": "relu1_output_0", "start_idx": 0, "length": 8339}, )"
    R"({"tensorname": "smdebug/reductions/abs_l2/relu1_output_0", "start_idx": 8339, "length": 111}], )"
    R"("shape_payload": [{"tensorname": "relu1_output_0", "originalname": "relu1_output_0", "shape": [64, 32]}, )"
    R"({"tensorname": "loss", "originalname": "loss", "shape": []}]})";

/// A file around one tensor item: `{"meta": {...}, "tensor_payload": [<item>]}`.
std::string with_tensor_item(std::string_view item) {
  return fmt::format(R"({{"meta": {{"mode": "TRAIN", "mode_step": 1, "event_file_name": "e"}}, "tensor_payload": [{}]}})",
                     item);
}
/// A file around one shape item.
std::string with_shape_item(std::string_view item) {
  return fmt::format(R"({{"meta": {{"mode": "TRAIN", "mode_step": 1}}, "shape_payload": [{}]}})", item);
}
/// A file with the given meta object and an empty tensor_payload.
std::string with_meta(std::string_view meta) {
  return fmt::format(R"({{"meta": {}, "tensor_payload": []}})", meta);
}

// ---- the sample and the golden files --------------------------------------------------------------

TEST(IndexJson, ParsesTheSample) {
  index_json_parser parser;
  parsed_index p;
  ASSERT_TRUE(parser.parse_unpadded(sample, p).ok());
  EXPECT_EQ(p.mode, mode::eval);
  EXPECT_EQ(p.mode_step, 4);
  EXPECT_TRUE(p.has_event_file_name);
  EXPECT_EQ(p.event_file_name, "events/000000000054/000000000054_worker_0.tfevents");
  ASSERT_EQ(p.tensors.size(), 2u);
  EXPECT_EQ(p.name(p.tensors[0].name_offset, p.tensors[0].name_length), "relu1_output_0");
  EXPECT_EQ(p.tensors[0].start_bytes, 0u);
  EXPECT_EQ(p.tensors[0].length_bytes, 8339u);
  EXPECT_EQ(p.name(p.tensors[1].name_offset, p.tensors[1].name_length),
            "smdebug/reductions/abs_l2/relu1_output_0");
  EXPECT_EQ(p.tensors[1].start_bytes, 8339u);
  EXPECT_EQ(p.tensors[1].length_bytes, 111u);
  ASSERT_EQ(p.shapes.size(), 2u);
  EXPECT_EQ(p.name(p.shapes[0].name_offset, p.shapes[0].name_length), "relu1_output_0");
  ASSERT_EQ(p.shapes[0].dims_count, 2u);
  EXPECT_EQ(p.dims[p.shapes[0].dims_offset], 64);
  EXPECT_EQ(p.dims[p.shapes[0].dims_offset + 1], 32);
  EXPECT_EQ(p.name(p.shapes[1].name_offset, p.shapes[1].name_length), "loss");
  EXPECT_EQ(p.shapes[1].dims_count, 0u);
  const oracle_result expected = oracle(sample);
  ASSERT_TRUE(expected.description.has_value());
  EXPECT_EQ(describe(p), *expected.description);
}

TEST(IndexJson, EveryGoldenIndexFileMatchesTheOracle) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  index_json_parser parser;  // one parser for every file, as the catalog does
  std::vector<std::byte> buffer;
  std::size_t files = 0;
  std::size_t entries = 0;
  for (const auto& trial : ::trialstat::testing::shared_trial_names()) {
    const auto index = golden / trial / "index";
    if (!fs::is_directory(index)) continue;
    for (const auto& f : fs::recursive_directory_iterator(index)) {
      if (!f.is_regular_file()) continue;
      // The catalog's path: io::read_file's padded buffer handed over as it is.
      const auto size = io::read_file(f.path(), buffer);
      ASSERT_TRUE(size.has_value()) << f.path();
      const std::string_view text(reinterpret_cast<const char*>(buffer.data()), *size);
      parsed_index p;
      const status st = parser.parse(text, buffer.size(), p);
      ASSERT_TRUE(st.ok()) << f.path() << ": " << st.to_string();
      const oracle_result expected = oracle(text);
      ASSERT_FALSE(expected.ambiguous) << f.path();
      ASSERT_TRUE(expected.description.has_value()) << f.path();
      EXPECT_EQ(describe(p), *expected.description) << f.path();
      EXPECT_TRUE(p.mode.has_value()) << f.path();
      entries += p.tensors.size() + p.shapes.size();
      ++files;
    }
  }
  EXPECT_GT(files, 300u);
  EXPECT_GT(entries, files);  // real content, not empty files
}

// ---- edge cases -------------------------------------------------------------------------------------

TEST(IndexJson, EscapesAndUnicodeInNames) {
  index_json_parser parser;
  parsed_index p;
  // \" \\ \/ \n \u00e9, a surrogate pair (U+1F600), raw UTF-8 and an escaped NUL.
  const std::string text = with_tensor_item(
      R"({"tensorname": "a\"b\\c\/d\ne\u00e9\ud83d\ude00caf)" "\xC3\xA9" R"(\u0000z", "start_idx": 0, "length": 5})");
  ASSERT_TRUE(parser.parse_unpadded(text, p).ok()) << error_of(text);
  ASSERT_EQ(p.tensors.size(), 1u);
  EXPECT_EQ(p.name(p.tensors[0].name_offset, p.tensors[0].name_length),
            std::string("a\"b\\c/d\ne\xC3\xA9\xF0\x9F\x98\x80" "caf\xC3\xA9") + std::string(1, '\0') + "z");
  EXPECT_EQ(parse_text(text), *oracle(text).description);
  // Escaped keys are the same keys (Python's json.loads unescapes them too).
  const std::string escaped_keys =
      R"({"m\u0065ta": {"mode": "TRAIN", "mode_step": 2, "event_file_name": "e"}, "tensor_payload": [{"tensor\u006eame": "x", "start_idx": 1, "length": 2}]})";
  ASSERT_TRUE(parser.parse_unpadded(escaped_keys, p).ok()) << error_of(escaped_keys);
  EXPECT_EQ(p.mode_step, 2);
  ASSERT_EQ(p.tensors.size(), 1u);
  EXPECT_EQ(p.name(p.tensors[0].name_offset, p.tensors[0].name_length), "x");
  // Mode names are stripped like smdebug's ModeKeys[mode.strip()].
  ASSERT_TRUE(parser.parse_unpadded(with_meta(R"({"mode": " PREDICT\n", "mode_step": 0})"), p).ok());
  EXPECT_EQ(p.mode, mode::predict);
  ASSERT_TRUE(parser.parse_unpadded(with_meta(R"({"mode": "GLOBAL", "mode_step": 0})"), p).ok());
  EXPECT_EQ(p.mode, mode::global);
}

TEST(IndexJson, MalformedStringsAreNotValidJson) {
  const std::vector<std::string> texts = {
      with_tensor_item(R"({"tensorname": "\ud800", "start_idx": 0, "length": 5})"),   // lone high surrogate
      with_tensor_item(R"({"tensorname": "\udc00", "start_idx": 0, "length": 5})"),   // lone low surrogate
      with_tensor_item(R"({"tensorname": "\q", "start_idx": 0, "length": 5})"),       // unknown escape
      with_tensor_item(R"({"tensorname": "\u12", "start_idx": 0, "length": 5})"),     // short \u
      with_tensor_item("{\"tensorname\": \"a\x01\", \"start_idx\": 0, \"length\": 5}"),  // control character
      with_tensor_item("{\"tensorname\": \"a\xC3\x28\", \"start_idx\": 0, \"length\": 5}"),  // bad UTF-8
      with_tensor_item("{\"tensorname\": \"a\xFF\", \"start_idx\": 0, \"length\": 5}"),
      with_tensor_item("{\"tensorname\": \"a\", \"start_idx\": 0, \"length\": 5, \"x\": \"\xED\xA0\x80\"}"),  // UTF-16 surrogate in UTF-8
  };
  for (const auto& text : texts) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(oracle(text).json_valid);
    EXPECT_EQ(error_of(text).rfind("not valid JSON", 0), 0u) << error_of(text);
  }
}

TEST(IndexJson, NumbersFollowPythonsIntegerRules) {
  index_json_parser parser;
  parsed_index p;
  // The largest 64-bit sizes are integers; "-0" is the integer 0 (int("-0") in Python).
  const std::string big = with_tensor_item(R"({"tensorname": "a", "start_idx": 18446744073709551615, "length": -0})");
  ASSERT_TRUE(parser.parse_unpadded(big, p).ok()) << error_of(big);
  EXPECT_EQ(p.tensors[0].start_bytes, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(p.tensors[0].length_bytes, 0u);
  EXPECT_EQ(parse_text(big), *oracle(big).description);
  ASSERT_TRUE(parser.parse_unpadded(with_meta(R"({"mode": "TRAIN", "mode_step": 9223372036854775807})"), p).ok());
  EXPECT_EQ(p.mode_step, std::numeric_limits<int64_t>::max());

  struct bad_case {
    std::string text;
    std::string message;
  };
  const std::vector<bad_case> cases = {
      {with_tensor_item(R"({"tensorname": "a", "start_idx": 1.0, "length": 5})"),
       R"(tensor_payload[0]: expected "start_idx" to be a non-negative integer, got a floating-point number)"},
      {with_tensor_item(R"({"tensorname": "a", "start_idx": 0, "length": 5e2})"),
       R"(tensor_payload[0]: expected "length" to be a non-negative integer, got a floating-point number)"},
      {with_tensor_item(R"({"tensorname": "a", "start_idx": 0, "length": 18446744073709551616})"),
       R"(tensor_payload[0]: expected "length" to be a non-negative integer, got a floating-point number)"},
      {with_tensor_item(R"({"tensorname": "a", "start_idx": -1, "length": 5})"),
       R"(tensor_payload[0]: expected "start_idx" to be a non-negative integer, got a negative number)"},
      {with_tensor_item(R"({"tensorname": "a", "start_idx": 0, "length": -9223372036854775809})"),
       R"(tensor_payload[0]: expected "length" to be a non-negative integer, got a floating-point number)"},
      {with_meta(R"({"mode": "TRAIN", "mode_step": 1e2})"),
       "meta.mode_step: expected a non-negative integer, got a floating-point number"},
      {with_meta(R"({"mode": "TRAIN", "mode_step": -3})"),
       "meta.mode_step: expected a non-negative integer, got a negative number"},
      {with_meta(R"({"mode": "TRAIN", "mode_step": 9223372036854775808})"),
       "meta.mode_step: expected a non-negative integer, got a number"},
      {with_shape_item(R"({"tensorname": "s", "shape": [1, -2]})"),
       "shape_payload[0].shape: expected non-negative integers, got a negative number"},
      {with_shape_item(R"({"tensorname": "s", "shape": [2.5]})"),
       "shape_payload[0].shape: expected non-negative integers, got a floating-point number"},
      {with_shape_item(R"({"tensorname": "s", "shape": [18446744073709551615]})"),
       "shape_payload[0].shape: expected non-negative integers, got a number"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(error_of(c.text), c.message);
    EXPECT_TRUE(oracle(c.text).json_valid);
    EXPECT_FALSE(oracle(c.text).description.has_value());
  }
  // Not JSON numbers at all (nlohmann and Python reject them too).
  for (const std::string number : {"01", "1.", "-", ".5", "+1", "1e", "0x10", "1E400", "-1e999", "NaN", "Infinity"}) {
    const std::string text = with_tensor_item(R"({"tensorname": "a", "start_idx": )" + number + R"(, "length": 5})");
    SCOPED_TRACE(text);
    EXPECT_FALSE(oracle(text).json_valid);
    EXPECT_EQ(error_of(text).rfind("not valid JSON", 0), 0u) << error_of(text);
  }
}

TEST(IndexJson, MissingFieldsAndWrongTypesSayWhatWasExpectedWhere) {
  struct bad_case {
    std::string text;
    std::string message;
  };
  const std::string good_item = R"({"tensorname": "a", "start_idx": 0, "length": 5})";
  const std::vector<bad_case> cases = {
      // top level and meta
      {"[1, 2]", "the top level: expected a JSON object, got an array"},
      {"null", "the top level: expected a JSON object, got null"},
      {"\"x\"", "the top level: expected a JSON object, got a string"},
      {"7", "the top level: expected a JSON object, got a number"},
      {"{}", "missing or empty \"meta\" object"},
      {R"({"tensor_payload": []})", "missing or empty \"meta\" object"},
      {R"({"meta": {}, "tensor_payload": []})", "missing or empty \"meta\" object"},
      {R"({"meta": "TRAIN", "tensor_payload": []})", "meta: expected an object, got a string"},
      {R"({"meta": [], "tensor_payload": []})", "meta: expected an object, got an array"},
      {with_meta(R"({"mode_step": 1})"), "meta.mode: missing (expected TRAIN, EVAL, PREDICT or GLOBAL)"},
      {with_meta(R"({"mode": "TRAIN"})"), "meta.mode_step: missing (expected an integer)"},
      {with_meta(R"({"mode": "TRAINING", "mode_step": 1})"),
       "meta.mode: expected TRAIN, EVAL, PREDICT or GLOBAL, got \"TRAINING\""},
      {with_meta(R"({"mode": 3, "mode_step": 1})"), "meta.mode: expected a mode name, got a number"},
      {with_meta(R"({"mode": null, "mode_step": 1})"), "meta.mode: expected a mode name, got null"},
      {with_meta(R"({"mode": ["TRAIN"], "mode_step": 1})"),
       "meta.mode: expected a mode name (TRAIN, EVAL, PREDICT or GLOBAL), got an array"},
      {with_meta(R"({"mode": "TRAIN", "mode_step": "4"})"),
       "meta.mode_step: expected a non-negative integer, got a string"},
      {with_meta(R"({"mode": "TRAIN", "mode_step": true})"),
       "meta.mode_step: expected a non-negative integer, got a boolean"},
      {with_meta(R"({"mode": "TRAIN", "mode_step": {}})"), "meta.mode_step: expected an integer, got an object"},
      {with_meta(R"({"mode": "TRAIN", "mode_step": 1, "event_file_name": 5})"),
       "meta.event_file_name: expected a string, got a number"},
      {with_meta(R"({"mode": "TRAIN", "mode_step": 1, "event_file_name": {}})"),
       "meta.event_file_name: expected a string, got an object"},
      {R"({"meta": {"mode": "TRAIN", "mode_step": 1}})", "neither \"tensor_payload\" nor \"shape_payload\" is present"},
      {R"({"meta": {"mode": "TRAIN", "mode_step": 1}, "tensor_payload": {}})",
       "tensor_payload: expected an array, got an object"},
      {R"({"meta": {"mode": "TRAIN", "mode_step": 1}, "shape_payload": "x"})",
       "shape_payload: expected an array, got a string"},
      {R"({"meta": {"mode": "TRAIN", "mode_step": 1, "event_file_name": null}, "tensor_payload": [)" + good_item + "]}",
       "meta.event_file_name: missing although tensor_payload lists records"},
      // tensor items
      {with_tensor_item("[]"), "tensor_payload[0]: expected an object, got an array"},
      {with_tensor_item(good_item + ", 5"), "tensor_payload[1]: expected an object, got a number"},
      {with_tensor_item(good_item + R"(, {"tensorname": 7, "start_idx": 0, "length": 5})"),
       R"(tensor_payload[1]: expected "tensorname" to be a string, got a number)"},
      {with_tensor_item(R"({"tensorname": ["a"], "start_idx": 0, "length": 5})"),
       R"(tensor_payload[0]: expected "tensorname" to be a string, got an array)"},
      {with_tensor_item(good_item + ", " + good_item + ", " + good_item + R"(, {"tensorname": "a", "start_idx": "0", "length": 5})"),
       R"(tensor_payload[3]: expected "start_idx" to be a non-negative integer, got a string)"},
      {with_tensor_item(R"({"tensorname": "a", "start_idx": {}, "length": 5})"),
       R"(tensor_payload[0]: expected "start_idx" to be a non-negative integer, got an object)"},
      {with_tensor_item(R"({"tensorname": "a", "start_idx": 0, "length": null})"),
       R"(tensor_payload[0]: expected "length" to be a non-negative integer, got null)"},
      {with_tensor_item(R"({"start_idx": 0, "length": 5})"), R"(tensor_payload[0]: missing "tensorname")"},
      {with_tensor_item(R"({"tensorname": "a", "length": 5})"), R"(tensor_payload[0]: missing "start_idx")"},
      {with_tensor_item(good_item + R"(, {"tensorname": "a", "start_idx": 0})"), R"(tensor_payload[1]: missing "length")"},
      // shape items
      {with_shape_item(R"({"tensorname": "s"})"), R"(shape_payload[0]: missing "shape")"},
      {with_shape_item(R"({"shape": [1]})"), R"(shape_payload[0]: missing "tensorname")"},
      {with_shape_item(R"({"tensorname": "s", "shape": "x"})"),
       R"(shape_payload[0]: expected "shape" to be an array of non-negative integers, got a string)"},
      {with_shape_item(R"({"tensorname": "s", "shape": [[1]]})"),
       "shape_payload[0].shape: expected non-negative integers, got an array"},
      {with_shape_item(R"({"tensorname": "s", "shape": [1, {}]})"),
       "shape_payload[0].shape: expected non-negative integers, got an object"},
      {with_shape_item(R"({"tensorname": "s", "shape": []}, null)"), "shape_payload[1]: expected an object, got null"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(error_of(c.text), c.message);
    // Each is valid JSON that the schema rejects.
    const oracle_result expected = oracle(c.text);
    EXPECT_TRUE(expected.json_valid);
    EXPECT_FALSE(expected.description.has_value());
  }
}

TEST(IndexJson, WhatTheSchemaAllows) {
  index_json_parser parser;
  parsed_index p;
  // Shape-only file: no event_file_name, empty tensor_payload.
  const std::string shape_only =
      R"({"meta": {"mode": "TRAIN", "mode_step": 3}, "tensor_payload": [], "shape_payload": [{"tensorname": "w", "originalname": "w", "shape": [3, 4]}]})";
  ASSERT_TRUE(parser.parse_unpadded(shape_only, p).ok()) << error_of(shape_only);
  EXPECT_FALSE(p.has_event_file_name);
  EXPECT_TRUE(p.tensors.empty());
  ASSERT_EQ(p.shapes.size(), 1u);
  EXPECT_EQ(p.dims[p.shapes[0].dims_offset + 1], 4);
  // event_file_name null with no records; unknown keys of every type anywhere (valid JSON).
  const std::string extras =
      R"({"x": [true, false, null, {"y": -1.5e3, "z": [[]]}, "s\n\u00e9"], "meta": {"mode": "EVAL", "mode_step": 0, "event_file_name": null, "extra": {"k": 1}}, )"
      R"("tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 0, "shape": "ignored here", "w": -1}], "shape_payload": [], "trailer": 1E-400})";
  EXPECT_EQ(error_of(extras), "meta.event_file_name: missing although tensor_payload lists records");
  const std::string extras_with_file = [&] {
    std::string t = extras;
    t.replace(t.find("null, \"extra\""), 4, "\"e\"");
    return t;
  }();
  ASSERT_TRUE(parser.parse_unpadded(extras_with_file, p).ok()) << error_of(extras_with_file);
  EXPECT_EQ(p.event_file_name, "e");
  ASSERT_EQ(p.tensors.size(), 1u);
  EXPECT_EQ(parse_text(extras_with_file), *oracle(extras_with_file).description);
  // Repeated names are all kept, in order: the catalog lets the last one win.
  const std::string repeated =
      with_tensor_item(R"({"tensorname": "loss", "start_idx": 0, "length": 5}, {"tensorname": "loss", "start_idx": 5, "length": 6})");
  ASSERT_TRUE(parser.parse_unpadded(repeated, p).ok());
  ASSERT_EQ(p.tensors.size(), 2u);
  EXPECT_EQ(p.tensors[1].start_bytes, 5u);
  // A repeated key inside an item: read in order, the last value wins (as json.loads does).
  const std::string repeated_key = with_tensor_item(R"({"tensorname": "a", "start_idx": 1, "length": 2, "start_idx": 7})");
  ASSERT_TRUE(parser.parse_unpadded(repeated_key, p).ok());
  EXPECT_EQ(p.tensors[0].start_bytes, 7u);
  EXPECT_TRUE(oracle(repeated_key).ambiguous);
  // Whitespace of every kind between tokens, and a trailing newline.
  const std::string spaced =
      "{\n  \"meta\" :\t{ \"mode\": \"PREDICT\",\r\n \"mode_step\": 0 } ,\n  \"tensor_payload\": [ ],\n  \"shape_payload\": [ ]\n}\n";
  ASSERT_TRUE(parser.parse_unpadded(spaced, p).ok()) << error_of(spaced);
  EXPECT_EQ(p.mode, mode::predict);
  // A UTF-8 byte order mark is skipped (json.loads on the file's bytes and nlohmann do too);
  // offsets in messages still count it.
  const std::string bom = "\xEF\xBB\xBF";
  EXPECT_EQ(parse_text(parser, bom + std::string(sample)), *oracle(bom + std::string(sample)).description);
  EXPECT_EQ(error_of(bom + std::string(sample) + " {}"),
            fmt::format("not valid JSON (byte {}): trailing content after the top-level object", sample.size() + 4));
  EXPECT_EQ(error_of(bom), "not valid JSON: Empty: no JSON found");
}

TEST(IndexJson, TruncatedEmptyAndTrailingGarbageAreNotValidJson) {
  index_json_parser parser;  // reused through failures: no state may leak from one to the next
  for (std::size_t n = 0; n < sample.size(); ++n) {
    const std::string_view prefix = sample.substr(0, n);
    SCOPED_TRACE(n);
    const std::string got = parse_text(parser, prefix);
    EXPECT_EQ(got.rfind("error data_loss: not valid JSON", 0), 0u) << got;
  }
  EXPECT_EQ(parse_text(parser, sample), *oracle(sample).description);

  const std::string good(sample);
  for (const std::string& text : {std::string(""), std::string("   \n"), good + " trailing", good + " {}", good + "}",
                                 good + ",", good + " null", good + "\x01", "{\"meta\": {\"mode\": \"TRAIN\"," + good}) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(oracle(text).json_valid);
    const std::string got = parse_text(parser, text);
    EXPECT_EQ(got.rfind("error data_loss: not valid JSON", 0), 0u) << got;
  }
  EXPECT_EQ(error_of(good + " {}"),
            fmt::format("not valid JSON (byte {}): trailing content after the top-level object", good.size() + 1));
  EXPECT_EQ(parse_text(parser, good + " \n\t\r\n"), *oracle(sample).description);  // trailing whitespace is fine

  // Invalid JSON inside keys the schema ignores is still invalid JSON.
  for (const std::string junk : {"[1 2]", "tru", "nul", "01", "{\"a\" 1}", "{\"a\": 1,}", "[1,]", "\"\\x\"", "{1: 2}"}) {
    const std::string text = with_tensor_item(R"({"tensorname": "a", "start_idx": 0, "length": 5, "x": )" + junk + "}");
    SCOPED_TRACE(text);
    EXPECT_FALSE(oracle(text).json_valid);
    const std::string got = parse_text(parser, text);
    EXPECT_EQ(got.rfind("error data_loss: not valid JSON", 0), 0u) << got;
  }
  // Deep nesting under an unknown key: up to simdjson's DOM limit (1024) it is walked; beyond,
  // rejected (nlohmann would accept it; smdebug's json.loads stops near 1000), never a crash.
  const auto nested = [](std::size_t levels) {
    return with_meta(R"({"mode": "TRAIN", "mode_step": 1, "x": )" + std::string(levels, '[') + std::string(levels, ']') + "}");
  };
  EXPECT_EQ(parse_text(parser, nested(1000)).rfind("mode 1 step 1", 0), 0u) << parse_text(parser, nested(1000));
  for (const std::size_t levels : {1025u, 100000u}) {
    const std::string got = parse_text(parser, nested(levels));
    EXPECT_EQ(got.rfind("error data_loss: not valid JSON (byte ", 0), 0u) << got;
    EXPECT_NE(got.find("more than 1024 nested arrays or objects"), std::string::npos) << got;
  }
}

TEST(IndexJson, ParseRequiresPaddingAndReusesItsBuffers) {
  index_json_parser parser;
  parsed_index p;
  std::string buffer(sample);
  const status unpadded = parser.parse(buffer, buffer.size(), p);
  EXPECT_EQ(unpadded.code(), error_code::invalid_argument);
  buffer.append(index_json_padding_bytes, '\0');
  ASSERT_TRUE(parser.parse(std::string_view(buffer.data(), sample.size()), buffer.size(), p).ok());
  EXPECT_EQ(describe(p), *oracle(sample).description);
  // The padding may hold anything: here a '}' right after the text (simdjson issue 1834).
  std::string braces = std::string(sample.substr(0, sample.size() - 1)) + std::string(index_json_padding_bytes + 1, '}');
  const std::string_view truncated(braces.data(), sample.size() - 1);
  EXPECT_EQ(parser.parse(truncated, braces.size(), p).code(), error_code::data_loss);
  // A big file, then a small one, then a failure, then the small one again: same answers.
  std::string big = R"({"meta": {"mode": "TRAIN", "mode_step": 1, "event_file_name": "e"}, "tensor_payload": [)";
  for (int i = 0; i < 20000; ++i) {
    big += fmt::format(R"({}{{"tensorname": "t{}", "start_idx": {}, "length": {}}})", i ? ", " : "", i, i * 10, 10);
  }
  big += "]}";
  ASSERT_TRUE(parser.parse_unpadded(big, p).ok());
  ASSERT_EQ(p.tensors.size(), 20000u);
  EXPECT_EQ(p.name(p.tensors[19999].name_offset, p.tensors[19999].name_length), "t19999");
  EXPECT_EQ(p.tensors[19999].start_bytes, 199990u);
  const std::string small_first = parse_text(parser, sample);
  EXPECT_NE(parse_text(parser, "{\"meta\": 1}").rfind("error", 0), std::string::npos);
  EXPECT_EQ(parse_text(parser, sample), small_first);
  EXPECT_EQ(small_first, *oracle(sample).description);
}

// ---- mutations ---------------------------------------------------------------------------------------

/// 20000 mutations by default; $TRIALSTAT_FUZZ_ITERATIONS asks for a longer run.
int fuzz_iterations() {
  const char* env = std::getenv("TRIALSTAT_FUZZ_ITERATIONS");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 20000;
}

TEST(IndexJson, MutatedFilesMatchTheOracleAndNameTheFileInTheCatalog) {
  // Byte flips, insertions, deletions and truncations of the sample and of a variant with
  // escapes, non-ASCII names and unknown keys. Whatever the oracle says (rejected, or these
  // entries), the parser must say the same; a rejection has a message, and the catalog's
  // warning for such a file names it.
  const uint32_t seed = 20240611;
  std::mt19937 rng(seed);
  const std::string alphabet = "{}[]\":,0123456789-.eE \\ntrufalsTRAINmode_stepxyz\x01\xC3\xA9";
  const std::string escaped_sample =
      R"({"meta": {"mode": "TRAIN", "mode_step": 12, "event_file_name": "events/x.tfevents", "extra": [1.5, null, {"k": "v"}]}, )"
      R"("tensor_payload": [{"tensorname": "caf\u00e9/\"q\"\\w", "start_idx": 0, "length": 70}, )"
      R"({"tensorname": "\ud83d\ude00", "start_idx": 70, "length": 9, "note": "ok"}], )"
      R"("shape_payload": [{"tensorname": "caf)" "\xC3\xA9" R"(", "originalname": "o\n", "shape": [2, 0, 3]}]})";
  ASSERT_TRUE(oracle(escaped_sample).description.has_value());
  ASSERT_EQ(parse_text(escaped_sample), *oracle(escaped_sample).description);
  index_json_parser parser;
  std::vector<std::string> rejected;
  std::size_t accepted = 0, ambiguous = 0;
  const int iterations = fuzz_iterations();
  for (int iteration = 0; iteration < iterations; ++iteration) {
    std::string text(iteration % 2 == 0 ? sample : std::string_view(escaped_sample));
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
    parsed_index p;
    const status st = parser.parse_unpadded(text, p);
    const oracle_result expected = oracle(text);
    if (expected.ambiguous) {
      ++ambiguous;  // a repeated key: only "no crash" is asserted
      continue;
    }
    ASSERT_EQ(st.ok(), expected.description.has_value())
        << "seed " << seed << " iteration " << iteration << " text: " << text << "\n got: " << st.to_string();
    if (st.ok()) {
      ASSERT_EQ(describe(p), *expected.description) << "seed " << seed << " iteration " << iteration << " text: " << text;
      ++accepted;
    } else {
      ASSERT_EQ(st.code(), error_code::data_loss) << "seed " << seed << " iteration " << iteration;
      ASSERT_FALSE(st.message().empty());
      if (rejected.size() < 300) rejected.push_back(text);
    }
  }
  EXPECT_GT(accepted, 100u);
  EXPECT_GT(rejected.size(), 100u);
  std::cout << "mutations: " << accepted << " accepted, " << ambiguous << " with repeated keys\n";

  // Through the catalog: every rejected file becomes one warning naming it.
  const fs::path root = ::trialstat::testing::make_scratch_dir("index_json_mutations");
  std::set<std::string> rels;
  for (std::size_t i = 0; i < rejected.size(); ++i) {
    const std::string rel = fmt::format("index/000000000/{:012d}_worker_0.json", i);
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel, std::ios::binary) << rejected[i];
    rels.insert(rel);
  }
  catalog_options options;
  options.scan_missing_index = false;
  const auto cat = catalog::open(root, options);
  ASSERT_TRUE(cat.has_value()) << cat.error_status().to_string();
  EXPECT_TRUE(cat->entries().empty());
  ASSERT_EQ(cat->warnings().size(), rejected.size());
  for (const auto& w : cat->warnings()) {
    EXPECT_TRUE(rels.contains(w.file.generic_string())) << w.file;
    EXPECT_NE(w.problem.message().find(w.file.generic_string()), std::string::npos) << w.problem.message();
    EXPECT_EQ(w.problem.code(), error_code::data_loss) << w.problem.message();
  }
  std::error_code ec;
  fs::remove_all(root, ec);
}

}  // namespace
}  // namespace trialstat::trial::detail
