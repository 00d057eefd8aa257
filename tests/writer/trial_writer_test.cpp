// SPDX-License-Identifier: Apache-2.0
// trial_writer: rewriting each golden smdebug trial from its decoded records must reproduce
// every file byte for byte (events, index, collections, end marker); plus layout, shape-only
// steps, tmp+rename behaviour, streaming of large tensors and error reporting.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "event.pb.h"
#include "tests/support/shared_trials.hpp"
#include "tests/writer/golden_walk.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace tw = trialstat::writer;
namespace fs = std::filesystem;
using trialstat::dtype;
using trialstat::error_code;
using trialstat::mode;
using trialstat::tensor_view;
using trialstat::testing::list_files;
using trialstat::testing::read_bytes;
using trialstat::testing::read_text;

namespace {

// Every name listed in a trial's index files (tensor and shape entries).
std::set<std::string> indexed_names(const fs::path& trial) {
  std::set<std::string> names;
  for (const auto& index_rel : trialstat::testing::index_files(trial)) {
    const auto index = nlohmann::json::parse(read_text(trial / index_rel));
    for (const auto& e : index["tensor_payload"]) names.insert(e["tensorname"].get<std::string>());
    for (const auto& e : index["shape_payload"]) names.insert(e["tensorname"].get<std::string>());
  }
  return names;
}

// Collections of a golden collections file. tensor_names are left to the writer, which must
// rebuild them from include_regex matching of the names it writes — except names that never
// reach the trial (the hook registers a tensor in its collections even when it then drops it,
// e.g. the empty `dtype_empty_via_hook`): those are given explicitly.
std::vector<tw::collection_spec> specs_from_golden(const nlohmann::ordered_json& doc,
                                                   const std::set<std::string>& written) {
  std::vector<tw::collection_spec> out;
  for (const auto& [name, c] : doc["collections"].items()) {
    tw::collection_spec s;
    s.name = c["name"].get<std::string>();
    s.include_regex = c["include_regex"].get<std::vector<std::string>>();
    for (const auto& n : c["tensor_names"]) {
      if (!written.contains(n.get<std::string>())) s.tensor_names.push_back(n.get<std::string>());
    }
    s.save_raw_tensor = c["reduction_config"]["save_raw_tensor"].get<bool>();
    s.reductions = c["reduction_config"]["reductions"].get<std::string>();
    s.save_shape = c["reduction_config"]["save_shape"].get<bool>();
    for (mode m : trialstat::all_modes) {
      const auto& sc = c["save_config"][std::string(trialstat::mode_name(m))];
      if (sc.is_null()) continue;
      tw::save_config_spec cfg;
      cfg.save_interval = sc["save_interval"].get<int64_t>();
      cfg.save_steps = sc["save_steps"].get<std::vector<int64_t>>();
      cfg.start_step = sc["start_step"].get<int64_t>();
      if (!sc["end_step"].is_null()) cfg.end_step = sc["end_step"].get<int64_t>();
      s.save_configs[static_cast<int>(m) - 1] = cfg;
    }
    s.save_histogram = c["save_histogram"].get<bool>();
    out.push_back(std::move(s));
  }
  return out;
}

// Rewrite golden trial `src` into `dst` through trial_writer.
void rewrite_trial(const fs::path& src, const fs::path& dst) {
  const auto collections_rel = fs::path("collections/000000000/worker_0_collections.json");
  const auto golden_collections = nlohmann::ordered_json::parse(read_text(src / collections_rel));
  tw::writer_options options;
  options.num_workers = golden_collections["_meta"]["num_workers"].get<int>();
  options.collections = specs_from_golden(golden_collections, indexed_names(src));
  options.buffer_bytes = 4096;  // exercise buffer flushes and the direct-write path
  auto writer = tw::trial_writer::create(dst, "worker_0", options);
  ASSERT_TRUE(writer.has_value()) << writer.error_status().to_string();
  for (const auto& index_rel : trialstat::testing::index_files(src)) {
    ASSERT_EQ(trialstat::testing::worker_of(index_rel), "worker_0");
    const auto index = nlohmann::json::parse(read_text(src / index_rel));
    const mode m = *trialstat::parse_mode_name(index["meta"]["mode"].get<std::string>());
    ASSERT_TRUE(writer->begin_step(trialstat::testing::step_of(index_rel), m,
                                   index["meta"]["mode_step"].get<int64_t>()).ok());
    std::vector<std::byte> events;
    if (index["meta"].contains("event_file_name")) {
      events = read_bytes(src / index["meta"]["event_file_name"].get<std::string>());
    }
    for (const auto& entry : index["tensor_payload"]) {
      const auto start = entry["start_idx"].get<std::size_t>();
      const auto length = entry["length"].get<std::size_t>();
      trialstat::testing::proto_record rec;
      ASSERT_TRUE(trialstat::testing::parse_proto_record(
          {events.begin() + static_cast<std::ptrdiff_t>(start),
           events.begin() + static_cast<std::ptrdiff_t>(start + length)},
          rec));
      const auto& value = rec.event.summary().value(0);
      const auto& t = value.tensor();
      std::vector<int64_t> shape;
      int64_t n = 1;
      for (const auto& d : t.tensor_shape().dim()) {
        shape.push_back(d.size());
        n *= d.size();
      }
      const tensor_view view{reinterpret_cast<const std::byte*>(t.tensor_content().data()),
                             static_cast<dtype>(t.dtype()), shape, n};
      const auto s = writer->add_tensor(value.tag(), view, rec.event.wall_time());
      ASSERT_TRUE(s.ok()) << s.to_string();
    }
    for (const auto& entry : index["shape_payload"]) {
      ASSERT_EQ(entry["tensorname"], entry["originalname"]);
      const auto shape = entry["shape"].get<std::vector<int64_t>>();
      ASSERT_TRUE(writer->add_shape(entry["tensorname"].get<std::string>(), shape).ok());
    }
    const auto s = writer->end_step();
    ASSERT_TRUE(s.ok()) << s.to_string();
  }
  const auto s = writer->close(fs::exists(src / "training_job_end.ts"));
  ASSERT_TRUE(s.ok()) << s.to_string();
}

std::vector<float> random_floats(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

tensor_view f32_view(const std::vector<float>& v, const std::vector<int64_t>& shape) {
  return {reinterpret_cast<const std::byte*>(v.data()), dtype::float32, shape,
          static_cast<int64_t>(v.size())};
}

}  // namespace

TEST(TrialWriter, RewritingEveryGoldenTrialIsByteIdentical) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  const auto names = trialstat::testing::shared_trial_names();
  ASSERT_FALSE(names.empty());
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const auto src = dir / name;
    const auto dst = trialstat::testing::make_scratch_dir("writer_golden_" + name);
    rewrite_trial(src, dst);
    if (HasFatalFailure()) return;
    const auto golden_files = list_files(src);
    ASSERT_EQ(list_files(dst), golden_files);
    for (const auto& rel : golden_files) {
      ASSERT_EQ(read_bytes(dst / rel), read_bytes(src / rel)) << rel;
    }
    fs::remove_all(dst);
  }
}

TEST(TrialWriter, LayoutAndTotals) {
  const auto root = trialstat::testing::make_scratch_dir("writer_layout");
  tw::writer_options options;
  options.num_workers = 2;
  options.collections = tw::pytorch_default_collections(10);
  auto w = tw::trial_writer::create(root, "worker_1", options);
  ASSERT_TRUE(w.has_value());
  const auto weight = random_floats(12, 7);
  const std::vector<int64_t> shape = {3, 4};
  for (int64_t step : {0, 999, 1000, 1500, 123456789}) {
    ASSERT_TRUE(w->begin_step(step, mode::train, step / 2).ok());
    ASSERT_TRUE(w->add_tensor("MLP_fc1.weight", f32_view(weight, shape), 1.0).ok());
    ASSERT_TRUE(w->end_step().ok());
  }
  ASSERT_TRUE(w->close(false).ok());
  EXPECT_TRUE(fs::exists(root / "events/000000000999/000000000999_worker_1.tfevents"));
  EXPECT_TRUE(fs::exists(root / "index/000000000/000000000999_worker_1.json"));
  EXPECT_TRUE(fs::exists(root / "index/000000001/000000001000_worker_1.json"));
  EXPECT_TRUE(fs::exists(root / "index/000000001/000000001500_worker_1.json"));
  EXPECT_TRUE(fs::exists(root / "index/000123456/000123456789_worker_1.json"));
  EXPECT_FALSE(fs::exists(root / "training_job_end.ts"));
  EXPECT_EQ(tw::trial_writer::event_file_path(5, "worker_0"),
            fs::path("events/000000000005/000000000005_worker_0.tfevents"));

  const auto files = list_files(root);
  uint64_t bytes = 0;
  for (const auto& f : files) {
    EXPECT_NE(f.extension(), ".tmp") << f;
    bytes += fs::file_size(root / f);
  }
  const auto totals = w->totals();
  EXPECT_EQ(totals.steps_count, 5u);
  EXPECT_EQ(totals.tensor_records_count, 5u);
  EXPECT_EQ(totals.files_count, files.size());
  EXPECT_EQ(totals.bytes, bytes);

  const auto c = nlohmann::ordered_json::parse(
      read_text(root / "collections/000000000/worker_1_collections.json"));
  EXPECT_EQ(c["_meta"]["num_workers"], 2);
  // ordered_json on both sides: clang's C++20 rewritten comparisons find ordered_json == json
  // ambiguous.
  EXPECT_EQ(c["collections"]["weights"]["tensor_names"],
            nlohmann::ordered_json::array({"MLP_fc1.weight"}));
  EXPECT_EQ(c["collections"]["biases"]["tensor_names"], nlohmann::ordered_json::array());
  EXPECT_EQ(c["collections"]["losses"]["save_histogram"], false);
  EXPECT_EQ(c["collections"]["weights"]["save_config"]["GLOBAL"]["save_interval"], 10);
  fs::remove_all(root);
}

TEST(TrialWriter, MatchesGoldenCollectionsForPytorchDefaults) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  // The vanishing trial was written with the hook's default collections (save_interval 2).
  const auto root = trialstat::testing::make_scratch_dir("writer_defaults");
  tw::writer_options options;
  options.collections = tw::pytorch_default_collections(2);
  auto w = tw::trial_writer::create(root, "worker_0", options);
  ASSERT_TRUE(w.has_value());
  const auto golden = nlohmann::json::parse(
      read_text(dir / "vanishing/collections/000000000/worker_0_collections.json"));
  const float one = 1.f;
  ASSERT_TRUE(w->begin_step(0, mode::train, 0).ok());
  std::set<std::string> names;
  for (const auto& [_, c] : golden["collections"].items()) {
    for (const auto& n : c["tensor_names"]) names.insert(n.get<std::string>());
  }
  for (const auto& n : names) {
    ASSERT_TRUE(w->add_tensor(n, {reinterpret_cast<const std::byte*>(&one), dtype::float32, {}, 1}).ok());
  }
  ASSERT_TRUE(w->close().ok());
  EXPECT_EQ(read_text(root / "collections/000000000/worker_0_collections.json"),
            read_text(dir / "vanishing/collections/000000000/worker_0_collections.json"));
  fs::remove_all(root);
}

TEST(TrialWriter, ShapeOnlyAndEmptySteps) {
  const auto root = trialstat::testing::make_scratch_dir("writer_shapes");
  auto w = tw::trial_writer::create(root, "worker_0");
  ASSERT_TRUE(w.has_value());
  const std::vector<int64_t> shape = {3, 4};
  ASSERT_TRUE(w->begin_step(0, mode::train, 0).ok());
  ASSERT_TRUE(w->add_shape("gradient/fc.weight", shape).ok());
  ASSERT_TRUE(w->end_step().ok());
  ASSERT_TRUE(w->begin_step(1, mode::eval, 0).ok());  // nothing added: no files
  ASSERT_TRUE(w->end_step().ok());
  ASSERT_TRUE(w->close().ok());
  // FORMAT §6: meta without event_file_name, empty tensor_payload, no event file.
  EXPECT_EQ(read_text(root / "index/000000000/000000000000_worker_0.json"),
            R"({"meta": {"mode": "TRAIN", "mode_step": 0}, "tensor_payload": [], )"
            R"("shape_payload": [{"tensorname": "gradient/fc.weight", "originalname": )"
            R"("gradient/fc.weight", "shape": [3, 4]}]})");
  EXPECT_EQ(list_files(root), (std::vector<fs::path>{"index/000000000/000000000000_worker_0.json",
                                                     "training_job_end.ts"}));
  EXPECT_EQ(fs::file_size(root / "training_job_end.ts"), 0u);
  fs::remove_all(root);
}

TEST(TrialWriter, IndexJsonEscapesLikePython) {
  const auto root = trialstat::testing::make_scratch_dir("writer_escape");
  auto w = tw::trial_writer::create(root, "worker_0");
  ASSERT_TRUE(w.has_value());
  const float one = 1.f;
  const tensor_view v{reinterpret_cast<const std::byte*>(&one), dtype::float32, {}, 1};
  ASSERT_TRUE(w->begin_step(3, mode::predict, 1).ok());
  // Python: json.dumps("a\"b\\c/\t\u00e9\U0001F600\x7f\x01") ==
  //   "a\"b\\c/\t\u00e9\ud83d\ude00\u007f\u0001"
  ASSERT_TRUE(w->add_tensor("a\"b\\c/\t\xc3\xa9\xf0\x9f\x98\x80\x7f\x01", v, 2.0).ok());
  ASSERT_TRUE(w->end_step().ok());
  EXPECT_EQ(read_text(root / "index/000000000/000000000003_worker_0.json"),
            R"({"meta": {"mode": "PREDICT", "mode_step": 1, "event_file_name": )"
            R"("events/000000000003/000000000003_worker_0.tfevents"}, "tensor_payload": )"
            R"([{"tensorname": "a\"b\\c/\t\u00e9\ud83d\ude00\u007f\u0001", "start_idx": 0, )"
            R"("length": 89}], "shape_payload": []})");
  // Invalid UTF-8 cannot go into the index: the step fails with invalid_argument, names the file.
  ASSERT_TRUE(w->begin_step(4, mode::predict, 2).ok());
  ASSERT_TRUE(w->add_tensor("bad\xff", v).ok());
  const auto s = w->end_step();
  EXPECT_EQ(s.code(), error_code::invalid_argument);
  EXPECT_NE(s.message().find("000000000004_worker_0.json"), std::string::npos) << s.message();
  fs::remove_all(root);
}

TEST(TrialWriter, LargeTensorsStreamAndReadBack) {
  const auto root = trialstat::testing::make_scratch_dir("writer_large");
  tw::writer_options options;
  options.buffer_bytes = 1 << 16;
  auto w = tw::trial_writer::create(root, "worker_0", options);
  ASSERT_TRUE(w.has_value());
  const uint32_t seed = 99;
  const auto big = random_floats(3 << 20, seed);  // 12 MiB, bypasses the buffer
  const auto small = random_floats(10, seed + 1);
  const std::vector<int64_t> big_shape = {3, 1 << 20};
  const std::vector<int64_t> small_shape = {10};
  ASSERT_TRUE(w->begin_step(7, mode::train, 7).ok());
  ASSERT_TRUE(w->add_tensor("small_a", f32_view(small, small_shape), 1.0).ok());
  ASSERT_TRUE(w->add_tensor("big", f32_view(big, big_shape), 1.0).ok());
  ASSERT_TRUE(w->add_tensor("small_b", f32_view(small, small_shape), 1.0).ok());
  // While the step is open only the .tmp exists.
  EXPECT_TRUE(fs::exists(root / "events/000000000007/000000000007_worker_0.tfevents.tmp"));
  EXPECT_FALSE(fs::exists(root / "events/000000000007/000000000007_worker_0.tfevents"));
  ASSERT_TRUE(w->end_step().ok());
  ASSERT_TRUE(w->close().ok());

  const auto index = nlohmann::json::parse(read_text(root / "index/000000000/000000000007_worker_0.json"));
  const auto events = read_bytes(root / index["meta"]["event_file_name"].get<std::string>());
  std::size_t expected_offset = 0;
  for (const auto& e : index["tensor_payload"]) {
    const auto start = e["start_idx"].get<std::size_t>();
    const auto length = e["length"].get<std::size_t>();
    EXPECT_EQ(start, expected_offset);
    expected_offset += length;
    trialstat::testing::proto_record rec;
    ASSERT_TRUE(trialstat::testing::parse_proto_record(
        {events.begin() + static_cast<std::ptrdiff_t>(start),
         events.begin() + static_cast<std::ptrdiff_t>(start + length)},
        rec));
    const auto& t = rec.event.summary().value(0).tensor();
    const auto& src = e["tensorname"] == "big" ? big : small;
    ASSERT_EQ(t.tensor_content().size(), src.size() * 4) << "seed " << seed;
    EXPECT_EQ(std::memcmp(t.tensor_content().data(), src.data(), src.size() * 4), 0);
  }
  EXPECT_EQ(expected_offset, events.size());
  fs::remove_all(root);
}

TEST(TrialWriter, AbandonedStepsLeaveNothing) {
  const auto root = trialstat::testing::make_scratch_dir("writer_abandon");
  const auto v = random_floats(4, 3);
  const std::vector<int64_t> shape = {4};
  {
    auto w = tw::trial_writer::create(root, "worker_0");
    ASSERT_TRUE(w.has_value());
    ASSERT_TRUE(w->begin_step(0, mode::train, 0).ok());
    ASSERT_TRUE(w->add_tensor("x", f32_view(v, shape)).ok());
    w->abandon_step();
    EXPECT_FALSE(w->in_step());
    ASSERT_TRUE(w->begin_step(1, mode::train, 1).ok());
    ASSERT_TRUE(w->add_tensor("x", f32_view(v, shape)).ok());
    // Destroyed without close(): the open step's .tmp is removed, nothing else written.
  }
  EXPECT_TRUE(list_files(root).empty());
  fs::remove_all(root);
}

TEST(TrialWriter, ReportsMisuse) {
  const auto root = trialstat::testing::make_scratch_dir("writer_misuse");
  EXPECT_EQ(tw::trial_writer::create(root, "").error_status().code(), error_code::invalid_argument);
  EXPECT_EQ(tw::trial_writer::create(root, "a/b").error_status().code(), error_code::invalid_argument);
  EXPECT_EQ(tw::trial_writer::create(root, "w", {.num_workers = 0}).error_status().code(),
            error_code::invalid_argument);
  tw::writer_options bad_regex;
  bad_regex.collections.push_back({.name = "c", .include_regex = {"(unclosed"}});
  EXPECT_EQ(tw::trial_writer::create(root, "w", bad_regex).error_status().code(),
            error_code::invalid_argument);
  tw::writer_options dup;
  dup.collections.push_back({.name = "c"});
  dup.collections.push_back({.name = "c"});
  EXPECT_EQ(tw::trial_writer::create(root, "w", dup).error_status().code(),
            error_code::invalid_argument);

  auto w = tw::trial_writer::create(root, "worker_0");
  ASSERT_TRUE(w.has_value());
  const auto v = random_floats(4, 5);
  const std::vector<int64_t> shape = {4};
  EXPECT_EQ(w->add_tensor("x", f32_view(v, shape)).code(), error_code::invalid_argument);
  EXPECT_EQ(w->end_step().code(), error_code::invalid_argument);
  ASSERT_TRUE(w->begin_step(5, mode::train, 5).ok());
  EXPECT_EQ(w->begin_step(6, mode::train, 6).code(), error_code::invalid_argument);
  EXPECT_EQ(w->add_reduction("x", "median", false, 1.f).code(), error_code::invalid_argument);
  ASSERT_TRUE(w->add_reduction("x", "l2", true, 2.f).ok());
  ASSERT_TRUE(w->end_step().ok());
  EXPECT_EQ(w->begin_step(5, mode::train, 5).code(), error_code::invalid_argument);
  EXPECT_EQ(w->begin_step(-1, mode::train, 0).code(), error_code::invalid_argument);
  ASSERT_TRUE(w->close().ok());
  ASSERT_TRUE(w->close().ok());  // idempotent
  EXPECT_EQ(w->begin_step(9, mode::train, 9).code(), error_code::invalid_argument);
  const auto index = read_text(root / "index/000000000/000000000005_worker_0.json");
  EXPECT_NE(index.find(R"("tensorname": "smdebug/reductions/abs_l2/x")"), std::string::npos);
  fs::remove_all(root);
}

TEST(TrialWriter, RecordModeStampsRecordsNotTheIndex) {
  const auto root = trialstat::testing::make_scratch_dir("writer_record_mode");
  auto w = tw::trial_writer::create(root, "worker_0");
  ASSERT_TRUE(w.has_value());
  const auto v = random_floats(2, 7);
  const std::vector<int64_t> shape = {2};
  EXPECT_EQ(w->set_record_mode(mode::eval, 0).code(), error_code::invalid_argument);  // no step
  ASSERT_TRUE(w->begin_step(6, mode::train, 5).ok());
  ASSERT_TRUE(w->add_tensor("a", f32_view(v, shape), 1.0).ok());
  EXPECT_EQ(w->set_record_mode(mode::eval, -2).code(), error_code::invalid_argument);
  // −1 (a mode not stepped yet) is what smdebug stamps after a mid-step set_mode.
  ASSERT_TRUE(w->set_record_mode(mode::eval, -1).ok());
  ASSERT_TRUE(w->set_record_mode(mode::eval, 2).ok());
  ASSERT_TRUE(w->add_tensor("b", f32_view(v, shape), 1.0).ok());
  ASSERT_TRUE(w->end_step().ok());
  ASSERT_TRUE(w->begin_step(7, mode::train, 6).ok());  // reset to the step's own mode
  ASSERT_TRUE(w->add_tensor("c", f32_view(v, shape), 1.0).ok());
  ASSERT_TRUE(w->close(false).ok());

  const auto plugin = [](const smdebug::Event& e) {
    const auto& pd = e.summary().value(0).metadata().plugin_data();
    return std::make_pair(pd.Get(1).content(), pd.Get(0).content());  // (mode, mode_step)
  };
  for (const auto& [step, expected] :
       std::vector<std::pair<int64_t, std::vector<std::pair<std::string, std::string>>>>{
           {6, {{"1", "5"}, {"2", "2"}}}, {7, {{"1", "6"}}}}) {
    const auto index = nlohmann::json::parse(read_text(root / tw::trial_writer::index_file_path(step, "worker_0")));
    EXPECT_EQ(index["meta"]["mode"], "TRAIN");
    const auto events = read_bytes(root / tw::trial_writer::event_file_path(step, "worker_0"));
    std::vector<std::pair<std::string, std::string>> got;
    for (const auto& e : index["tensor_payload"]) {
      const auto start = e["start_idx"].get<std::ptrdiff_t>();
      const auto length = e["length"].get<std::ptrdiff_t>();
      trialstat::testing::proto_record rec;
      ASSERT_TRUE(trialstat::testing::parse_proto_record(
          {events.begin() + start, events.begin() + start + length}, rec));
      got.push_back(plugin(rec.event));
    }
    EXPECT_EQ(got, expected) << "step " << step;
  }
  fs::remove_all(root);
}

TEST(TrialWriter, MembersAsSuppliedOrByRegexAndSetCollections) {
  const auto v = random_floats(2, 8);
  const std::vector<int64_t> shape = {2};
  const auto members = [](const fs::path& root) {
    const auto doc = nlohmann::json::parse(read_text(root / tw::trial_writer::collections_file_path("worker_0")));
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& [name, c] : doc["collections"].items()) {
      out[name] = c["tensor_names"].get<std::vector<std::string>>();
    }
    return out;
  };
  for (const bool by_regex : {true, false}) {
    const auto root = trialstat::testing::make_scratch_dir("writer_members");
    tw::writer_options options;
    options.collections.push_back({.name = "weights", .include_regex = {"weight"}, .tensor_names = {"z.weight"}});
    options.match_members_by_regex = by_regex;
    auto w = tw::trial_writer::create(root, "worker_0", options);
    ASSERT_TRUE(w.has_value());
    ASSERT_TRUE(w->begin_step(0, mode::train, 0).ok());
    ASSERT_TRUE(w->add_tensor("fc.weight", f32_view(v, shape)).ok());
    ASSERT_TRUE(w->add_tensor("fc.bias", f32_view(v, shape)).ok());
    ASSERT_TRUE(w->end_step().ok());
    ASSERT_TRUE(w->write_collections().ok());
    using names = std::vector<std::string>;
    EXPECT_EQ(members(root)["weights"], (by_regex ? names{"fc.weight", "z.weight"} : names{"z.weight"}));
    // Replaced collections: regex members are re-derived from the names written so far.
    tw::collection_spec bad{.name = "b", .include_regex = {"(unclosed"}};
    EXPECT_EQ(w->set_collections({bad}).code(), error_code::invalid_argument);
    ASSERT_TRUE(w->set_collections({{.name = "biases", .include_regex = {"bias"}, .tensor_names = {"b.bias", "a.bias"}},
                                    {.name = "weights", .tensor_names = {"fc.weight"}}})
                    .ok());
    ASSERT_TRUE(w->close(false).ok());  // rewrites the file: the collections changed
    const auto m = members(root);
    ASSERT_EQ(m.size(), 2u);
    EXPECT_EQ(m.at("biases"), (by_regex ? names{"a.bias", "b.bias", "fc.bias"} : names{"a.bias", "b.bias"}));
    EXPECT_EQ(m.at("weights"), names{"fc.weight"});
    EXPECT_EQ(w->set_collections({}).code(), error_code::invalid_argument);  // closed
    fs::remove_all(root);
  }
}
