// SPDX-License-Identifier: Apache-2.0
// The catalog on trials built in a scratch folder: golden trials with files removed, corrupted,
// duplicated for a second worker or added while "training", and small hand-written index files.
// Sources: spec/FORMAT.md §1, §6-§8; spec/TRIAL_API.md §2-§4.
#include "trialstat/trial/catalog.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "tests/support/forwarding_source.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/io/trial_source.hpp"

namespace trialstat::trial {
namespace {

namespace fs = std::filesystem;
using ::trialstat::testing::make_scratch_dir;

// ---- helpers -------------------------------------------------------------------------------------

/// A scratch folder removed at the end of the test.
struct scratch_dir {
  fs::path path;
  explicit scratch_dir(const std::string& label) : path(make_scratch_dir(label)) {}
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

/// Replace the first occurrence of `from` (which must exist) by `to`.
std::string replace_first(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << "'" << from << "' not found";
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

std::string index_rel(int64_t step, const std::string& worker) {
  return fmt::format("index/{:09d}/{:012d}_{}.json", step / 1000, step, worker);
}
std::string event_rel(int64_t step, const std::string& worker) {
  return fmt::format("events/{:012d}/{:012d}_{}.tfevents", step, step, worker);
}

/// Copy golden trial `name` into a scratch folder; returns the copy's root.
fs::path copy_trial(const fs::path& golden, const std::string& name, const scratch_dir& scratch) {
  const fs::path dst = scratch.path / name;
  fs::copy(golden / name, dst, fs::copy_options::recursive);
  return dst;
}

/// One entry reduced to comparable values (names instead of ids).
struct flat_entry {
  bool has_raw = false;
  std::string raw_file;
  uint64_t raw_start = 0, raw_length = 0;
  std::set<std::tuple<std::string, bool, std::string, uint64_t, uint64_t>> reductions;
  std::optional<std::vector<int64_t>> shape;
  bool operator==(const flat_entry&) const = default;
};

/// The entries of (step, worker), keyed by tensor name; shapes dropped unless `with_shapes`.
std::map<std::string, flat_entry> flatten(const catalog& cat, int64_t step, const std::string& worker,
                                          bool with_shapes) {
  std::map<std::string, flat_entry> out;
  const auto w = cat.find_worker(worker);
  if (!w) return out;
  for (const auto& e : cat.entries_at(step)) {
    if (e.worker != *w) continue;
    flat_entry f;
    f.has_raw = e.raw.has_value();
    if (e.raw) {
      f.raw_file = cat.event_file(e.raw->event_file).generic_string();
      f.raw_start = e.raw->start_bytes;
      f.raw_length = e.raw->length_bytes;
    }
    for (const auto& r : e.reductions) {
      f.reductions.emplace(std::string(reduction_name(r.op)), r.abs,
                           cat.event_file(r.location.event_file).generic_string(),
                           r.location.start_bytes, r.location.length_bytes);
    }
    if (with_shapes && e.shape) f.shape = *e.shape;
    const bool inserted = out.emplace(cat.tensor_names()[e.tensor], f).second;
    EXPECT_TRUE(inserted) << "tensor listed twice at step " << step;
  }
  return out;
}

std::string warnings_text(const catalog& cat) {
  std::string out;
  for (const auto& w : cat.warnings()) out += w.file.generic_string() + ": " + w.problem.to_string() + "\n";
  return out;
}

std::vector<int64_t> range(int64_t first, int64_t last, int64_t stride) {
  std::vector<int64_t> out;
  for (int64_t s = first; s <= last; s += stride) out.push_back(s);
  return out;
}

// ---- missing and corrupt index files ---------------------------------------------------------

TEST(CatalogScan, DeletedIndexIsFoundByScanningTheEventFile) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  // reductions_only: raw, reduction and shape records; healthy_mlp step 26 is an EVAL step.
  for (const auto& [trial, step] : std::vector<std::pair<std::string, int64_t>>{
           {"reductions_only", 10}, {"healthy_mlp", 26}, {"healthy_mlp", 0}}) {
    SCOPED_TRACE(trial + " step " + std::to_string(step));
    const auto original = catalog::open(golden / trial).value();
    scratch_dir scratch("catalog_scan");
    const fs::path root = copy_trial(golden, trial, scratch);
    ASSERT_TRUE(fs::remove(root / index_rel(step, "worker_0")));

    const auto scanned = catalog::open(root).value();
    EXPECT_TRUE(scanned.warnings().empty()) << warnings_text(scanned);
    EXPECT_EQ(scanned.steps(), original.steps());
    for (const auto m : all_modes) EXPECT_EQ(scanned.steps(m, true), original.steps(m, true));
    const step_info* a = original.find_step(step);
    const step_info* b = scanned.find_step(step);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->mode, a->mode);
    EXPECT_EQ(b->mode_step, a->mode_step);
    const auto want = flatten(original, step, "worker_0", /*with_shapes=*/false);
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(flatten(scanned, step, "worker_0", false), want);
    // Shapes come only from the index: the scanned step has none, the others keep theirs.
    for (const auto& e : scanned.entries_at(step)) EXPECT_FALSE(e.shape.has_value());
    EXPECT_EQ(scanned.entries().size(), original.entries().size());
  }
}

TEST(CatalogScan, LiveRefreshFindsNewEventFilesWithoutIndexPastTheCompleteSteps) {
  // A refresh lists events/ only after the folder of the last complete step; event files of new
  // steps without an index file must still be found (scanned), as a fresh open finds them.
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  const auto original = catalog::open(golden / "reductions_only").value();
  scratch_dir scratch("catalog_live_scan");
  const fs::path root = copy_trial(golden, "reductions_only", scratch);
  ASSERT_TRUE(fs::remove(root / "training_job_end.ts"));
  const std::vector<int64_t> steps = original.steps(mode::global, true);
  ASSERT_GE(steps.size(), 3u);
  const int64_t last = steps.back();
  const int64_t before_last = steps[steps.size() - 2];
  // The last two steps are not written yet.
  const fs::path hold = scratch.path / "held";
  for (const int64_t step : {before_last, last}) {
    fs::create_directories(hold / std::to_string(step));
    fs::rename(root / index_rel(step, "worker_0"), hold / std::to_string(step) / "index.json");
    fs::rename(root / event_rel(step, "worker_0"), hold / std::to_string(step) / "events");
  }
  auto cat = catalog::open(root).value();
  EXPECT_EQ(cat.last_complete_step(), steps[steps.size() - 3]);
  EXPECT_EQ(cat.refresh().value(), 0u);  // nothing new: nothing scanned again
  // Step before_last arrives without its index file, then `last` with one.
  fs::rename(hold / std::to_string(before_last) / "events", root / event_rel(before_last, "worker_0"));
  EXPECT_EQ(cat.refresh().value(), 1u);
  EXPECT_EQ(cat.last_complete_step(), before_last);
  EXPECT_EQ(flatten(cat, before_last, "worker_0", false), flatten(original, before_last, "worker_0", false));
  fs::rename(hold / std::to_string(last) / "events", root / event_rel(last, "worker_0"));
  fs::rename(hold / std::to_string(last) / "index.json", root / index_rel(last, "worker_0"));
  EXPECT_EQ(cat.refresh().value(), 1u);
  EXPECT_EQ(cat.refresh().value(), 0u);
  EXPECT_EQ(cat.last_complete_step(), last);
  EXPECT_EQ(flatten(cat, last, "worker_0", true), flatten(original, last, "worker_0", true));
  EXPECT_EQ(cat.entries().size(), original.entries().size());
  EXPECT_TRUE(cat.warnings().empty()) << warnings_text(cat);
}

/// A local source that records what the catalog's folder filter said about each folder of a
/// listing (sub/folder -> skipped or listed).
class recording_source final : public ::trialstat::testing_support::forwarding_source {
 public:
  using forwarding_source::forwarding_source;
  status list_share(std::string_view sub, std::string_view start_after, int share, int shares,
                    std::vector<io::object_info>& out, const io::folder_filter& skip_folder) const override {
    io::folder_filter recorded;
    if (skip_folder) {
      recorded = [&](std::string_view folder) {
        const bool skip = skip_folder(folder);
        (skip ? skipped : listed).insert(std::string(sub) + "/" + std::string(folder));
        return skip;
      };
    }
    return inner().list_share(sub, start_after, share, shares, out, recorded);
  }
  mutable std::set<std::string> skipped, listed;
};

TEST(CatalogScan, StepFoldersWithEveryWorkersIndexAreNotListed) {
  // dead_relu: one worker (collections: num_workers 1), steps 0..55 by 5. With step 20's index
  // file deleted, only events/000000000020/ is listed (and its event file scanned); with a range,
  // the step folders outside it are not listed either.
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  const auto original = catalog::open(golden / "dead_relu").value();
  scratch_dir scratch("catalog_skip_folders");
  const fs::path root = copy_trial(golden, "dead_relu", scratch);
  ASSERT_TRUE(fs::remove(root / index_rel(20, "worker_0")));
  const auto folder = [](int64_t step) { return fmt::format("events/{:012d}", step); };

  auto source = std::make_shared<recording_source>(io::open_trial_source(root.string()).value());
  const auto cat = catalog::open(source).value();
  EXPECT_TRUE(cat.warnings().empty()) << warnings_text(cat);
  EXPECT_EQ(source->listed, std::set<std::string>{folder(20)});
  std::set<std::string> others;
  for (int64_t step = 0; step <= 55; step += 5) {
    if (step != 20) others.insert(folder(step));
  }
  EXPECT_EQ(source->skipped, others);
  EXPECT_EQ(cat.steps(), original.steps());
  EXPECT_EQ(flatten(cat, 20, "worker_0", false), flatten(original, 20, "worker_0", false));
  EXPECT_EQ(cat.entries().size(), original.entries().size());

  auto ranged_source = std::make_shared<recording_source>(io::open_trial_source(root.string()).value());
  catalog_options options;
  options.range_begin = 30;
  const auto ranged = catalog::open(ranged_source, options).value();
  EXPECT_TRUE(ranged_source->listed.empty());  // step 20 is outside the range: not listed either
  EXPECT_EQ(ranged.steps(), range(30, 55, 5));
}

TEST(CatalogScan, WithoutADeclaredWorkerCountEveryStepFolderIsListed) {
  // A worker that wrote no index file at all is known only from its event files: without
  // `_meta.num_workers` the catalog cannot tell a step is covered, so it lists every folder.
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  scratch_dir scratch("catalog_skip_folders");
  const fs::path root = copy_trial(golden, "dead_relu", scratch);
  const fs::path collections = root / "collections/000000000/worker_0_collections.json";
  const std::string text = read_text(collections);
  ASSERT_NE(text.find("\"_meta\": {\"num_workers\": 1}"), std::string::npos);
  write_text(collections, replace_first(text, "\"_meta\": {\"num_workers\": 1}", "\"_meta\": {}"));
  // worker_1 wrote event files for steps 0 and 5, but no index file and no collections file.
  for (const int64_t step : {0, 5}) fs::copy_file(root / event_rel(step, "worker_0"), root / event_rel(step, "worker_1"));

  auto source = std::make_shared<recording_source>(io::open_trial_source(root.string()).value());
  const auto cat = catalog::open(source).value();
  EXPECT_TRUE(source->skipped.empty());
  EXPECT_EQ(source->listed.size(), 12u);
  ASSERT_TRUE(cat.find_worker("worker_1").has_value());
  EXPECT_EQ(flatten(cat, 5, "worker_1", false).size(), flatten(cat, 5, "worker_0", false).size());
}

/// A local source on which the training job "finishes" right after the catalog's first listing
/// of events/ (its last listing of a pass): step 55's event and index files, then the end
/// marker, appear.
class finishing_source final : public ::trialstat::testing_support::forwarding_source {
 public:
  finishing_source(std::shared_ptr<const io::trial_source> inner, fs::path root, fs::path held)
      : forwarding_source(std::move(inner)), root_(std::move(root)), held_(std::move(held)) {}
  status list_share(std::string_view sub, std::string_view start_after, int share, int shares,
                    std::vector<io::object_info>& out, const io::folder_filter& skip_folder) const override {
    status listed = inner().list_share(sub, start_after, share, shares, out, skip_folder);
    if (sub == "events" && !finished_) {
      finished_ = true;
      fs::rename(held_ / "index.json", root_ / index_rel(55, "worker_0"));
      fs::rename(held_ / "events.tfevents", root_ / event_rel(55, "worker_0"));
      write_text(root_ / "training_job_end.ts", "");
    }
    return listed;
  }

 private:
  fs::path root_, held_;
  mutable bool finished_ = false;
};

TEST(CatalogLive, AnEndMarkerWrittenDuringAPassDoesNotEndTheTrialWithoutItsLastStep) {
  // The marker is looked for before the listings: seen after them, it would say "ended" while
  // the step written just before it was not listed, and a live reader would stop without it.
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  scratch_dir scratch("catalog_end_marker_race");
  const fs::path root = copy_trial(golden, "dead_relu", scratch);
  const fs::path held = scratch.path / "held";
  fs::create_directories(held);
  fs::rename(root / index_rel(55, "worker_0"), held / "index.json");
  fs::rename(root / event_rel(55, "worker_0"), held / "events.tfevents");
  fs::remove(root / "training_job_end.ts");  // the job is still running
  auto source = std::make_shared<finishing_source>(io::open_trial_source(root.string()).value(), root, held);
  auto cat = catalog::open(source).value();
  EXPECT_FALSE(cat.training_ended()) << "the marker came after the listing: not seen in this pass";
  EXPECT_EQ(cat.steps(mode::global, true), range(0, 50, 5));
  EXPECT_EQ(cat.refresh().value(), 1u);
  EXPECT_TRUE(cat.training_ended());
  EXPECT_EQ(cat.steps(), range(0, 55, 5));
  EXPECT_TRUE(cat.warnings().empty()) << warnings_text(cat);
}

TEST(CatalogScan, EveryGoldenTrialScansLikeItsIndex) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  // Without any index file, scanning the event files gives every record the index lists (all
  // but shape records, which have no bytes), with the same modes and mode steps.
  for (const auto& trial : ::trialstat::testing::shared_trial_names()) {
    SCOPED_TRACE(trial);
    const auto original = catalog::open(golden / trial).value();
    scratch_dir scratch("catalog_scan_all");
    const fs::path root = copy_trial(golden, trial, scratch);
    fs::remove_all(root / "index");
    const auto scanned = catalog::open(root).value();
    EXPECT_TRUE(scanned.warnings().empty()) << warnings_text(scanned);
    ASSERT_EQ(scanned.step_infos().size(), original.step_infos().size());
    for (std::size_t i = 0; i < original.step_infos().size(); ++i) {
      const step_info& a = original.step_infos()[i];
      const step_info& b = scanned.step_infos()[i];
      EXPECT_EQ(b.step, a.step);
      EXPECT_EQ(b.mode, a.mode) << "step " << a.step;
      EXPECT_EQ(b.mode_step, a.mode_step) << "step " << a.step;
      auto want = flatten(original, a.step, "worker_0", false);
      std::erase_if(want, [](const auto& kv) { return !kv.second.has_raw && kv.second.reductions.empty(); });
      EXPECT_EQ(flatten(scanned, b.step, "worker_0", false), want) << "step " << a.step;
    }
    for (const auto m : all_modes) EXPECT_EQ(scanned.steps(m), original.steps(m)) << mode_name(m);
  }
}

TEST(CatalogScan, ScanCanBeTurnedOff) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  scratch_dir scratch("catalog_noscan");
  const fs::path root = copy_trial(golden, "dead_relu", scratch);
  ASSERT_TRUE(fs::remove(root / index_rel(20, "worker_0")));
  catalog_options options;
  options.scan_missing_index = false;
  const auto cat = catalog::open(root, options).value();
  EXPECT_EQ(cat.find_step(20), nullptr);
  EXPECT_TRUE(cat.entries_at(20).empty());
  EXPECT_EQ(cat.steps().size(), 11u);
}

TEST(CatalogScan, CorruptIndexWarnsAndFallsBackToTheEventFile) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  const int64_t step = 15;
  const std::string rel = index_rel(step, "worker_0");
  const auto original = catalog::open(golden / "dead_relu").value();
  const std::string good = read_text(golden / "dead_relu" / rel);
  struct variant {
    std::string label;
    std::string text;
    std::string expected_fragment;  // part of the warning
  };
  const std::vector<variant> variants = {
      {"garbage", "this is not json {", "not valid JSON"},
      {"empty file", "", "not valid JSON"},
      {"truncated", good.substr(0, good.size() / 2), "not valid JSON"},
      {"empty object", "{}", "meta"},
      {"empty meta", "{\"meta\": {}, " + good.substr(good.find("\"tensor_payload\"")), "meta"},
      {"array top level", "[1, 2]", "expected a JSON object"},
      {"no payload keys", R"({"meta": {"mode": "TRAIN", "mode_step": 15}})", "tensor_payload"},
      {"start_idx as string", replace_first(good, "\"start_idx\": 0,", "\"start_idx\": \"0\","), "start_idx"},
      {"negative length", replace_first(good, "\"length\": ", "\"length\": -"), "length"},
      {"float start", replace_first(good, "\"start_idx\": 0,", "\"start_idx\": 0.5,"), "start_idx"},
      {"mode_step string", replace_first(good, "\"mode_step\": 15", "\"mode_step\": \"15\""), "mode_step"},
      {"unknown mode", replace_first(good, "\"TRAIN\"", "\"TRAINING\""), "mode"},
      {"payload object", "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 15}, \"tensor_payload\": {}}",
       "tensor_payload: expected an array"},
      {"tensorname number", replace_first(good, "\"tensorname\": \"MLP_fc1.weight\"", "\"tensorname\": 7"),
       "tensorname"},
      {"missing length", replace_first(good, ", \"length\": 8327}", "}"), "length"},
  };
  for (const auto& v : variants) {
    SCOPED_TRACE(v.label);
    scratch_dir scratch("catalog_corrupt");
    const fs::path root = copy_trial(golden, "dead_relu", scratch);
    write_text(root / rel, v.text);

    const auto cat = catalog::open(root).value();
    ASSERT_EQ(cat.warnings().size(), 1u) << warnings_text(cat);
    const auto& w = cat.warnings()[0];
    EXPECT_EQ(w.file.generic_string(), rel);
    EXPECT_EQ(w.problem.code(), error_code::data_loss);
    EXPECT_NE(w.problem.message().find(rel), std::string::npos) << w.problem.message();
    EXPECT_NE(w.problem.message().find(v.expected_fragment), std::string::npos) << w.problem.message();
    // Fallback: the step is complete from its event file.
    EXPECT_EQ(cat.steps(), original.steps());
    EXPECT_EQ(flatten(cat, step, "worker_0", false), flatten(original, step, "worker_0", false));

    catalog_options no_scan;
    no_scan.scan_missing_index = false;
    const auto without = catalog::open(root, no_scan).value();
    EXPECT_EQ(without.warnings().size(), 1u);
    EXPECT_EQ(without.find_step(step), nullptr);
  }
}

TEST(CatalogScan, CorruptRecordCostsOnlyThatRecord) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  const int64_t step = 5;
  const auto original = catalog::open(golden / "healthy_mlp").value();
  const auto want = flatten(original, step, "worker_0", false);
  // The second record of the event file, by offset.
  std::vector<std::pair<uint64_t, std::string>> by_offset;
  for (const auto& [name, e] : want) by_offset.emplace_back(e.raw_start, name);
  std::sort(by_offset.begin(), by_offset.end());
  ASSERT_GE(by_offset.size(), 3u);
  const auto [victim_offset, victim] = by_offset[1];

  scratch_dir scratch("catalog_badrecord");
  const fs::path root = copy_trial(golden, "healthy_mlp", scratch);
  ASSERT_TRUE(fs::remove(root / index_rel(step, "worker_0")));
  const fs::path event = root / event_rel(step, "worker_0");
  std::string bytes = read_text(event);
  bytes[victim_offset + 8] = static_cast<char>(bytes[victim_offset + 8] ^ 0x5A);  // length CRC
  write_text(event, bytes);

  const auto cat = catalog::open(root).value();
  ASSERT_FALSE(cat.warnings().empty());
  for (const auto& w : cat.warnings()) {
    EXPECT_EQ(w.file.generic_string(), event_rel(step, "worker_0"));
    EXPECT_NE(w.problem.message().find(event_rel(step, "worker_0")), std::string::npos) << w.problem.message();
  }
  auto have = flatten(cat, step, "worker_0", false);
  auto expected = want;
  expected.erase(victim);
  EXPECT_EQ(have, expected) << "victim " << victim << " at byte " << victim_offset;
}

TEST(CatalogScan, TmpFilesAreIgnored) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  scratch_dir scratch("catalog_tmp");
  const fs::path root = copy_trial(golden, "dead_relu", scratch);
  write_text(root / (index_rel(60, "worker_0") + ".tmp"), "{\"meta\": garbage being written");
  write_text(root / "index/000000000/x.json.tmp", "partial");
  write_text(root / (event_rel(60, "worker_0") + ".tmp"), "partial record bytes");
  write_text(root / "events/000000000065/000000000065_worker_0.tfevents.tmp", "x");
  write_text(root / "claim.smd", "");
  const auto cat = catalog::open(root).value();
  EXPECT_TRUE(cat.warnings().empty()) << warnings_text(cat);
  EXPECT_EQ(cat.steps(mode::global, true), range(0, 55, 5));
  EXPECT_EQ(cat.find_step(60), nullptr);
  EXPECT_EQ(cat.find_step(65), nullptr);
}

TEST(CatalogScan, BadFileNamesWarnOnceAndAreIgnored) {
  scratch_dir scratch("catalog_bad_names");
  const fs::path root = scratch.path / "trial";
  write_text(root / "index/000000000/worker_0.json", "{}");
  write_text(root / "events/000000000000/step0_worker_0.tfevents", "x");
  auto cat = catalog::open(root).value();
  ASSERT_EQ(cat.warnings().size(), 2u) << warnings_text(cat);
  EXPECT_EQ(cat.warnings()[0].problem.code(), error_code::invalid_argument);
  EXPECT_EQ(cat.warnings()[0].problem.message(),
            "index file index/000000000/worker_0.json: name does not match <step>_<worker>.json; ignored");
  EXPECT_EQ(cat.warnings()[1].problem.code(), error_code::invalid_argument);
  EXPECT_EQ(cat.warnings()[1].problem.message(),
            "event file events/000000000000/step0_worker_0.tfevents: name does not match "
            "<step>_<worker>.tfevents; ignored");
  EXPECT_TRUE(cat.step_infos().empty());
  EXPECT_EQ(cat.refresh().value(), 0u);
  EXPECT_EQ(cat.warnings().size(), 2u) << warnings_text(cat);  // remembered: not warned again
}

TEST(CatalogScan, IndexArrivingAfterItsEventFileReplacesTheScan) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  const int64_t step = 10;
  const auto original = catalog::open(golden / "reductions_only").value();
  scratch_dir scratch("catalog_late_index");
  const fs::path root = copy_trial(golden, "reductions_only", scratch);
  const fs::path index = root / index_rel(step, "worker_0");
  const std::string text = read_text(index);
  ASSERT_TRUE(fs::remove(index));

  auto cat = catalog::open(root).value();
  EXPECT_FALSE(cat.entries_at(step).empty());
  for (const auto& e : cat.entries_at(step)) EXPECT_FALSE(e.shape.has_value());
  const auto ids_before = std::vector<std::string>(cat.tensor_names().begin(), cat.tensor_names().end());

  write_text(index, text);
  const auto loaded = cat.refresh();
  ASSERT_TRUE(loaded.has_value()) << loaded.error_status().to_string();
  EXPECT_EQ(*loaded, 1u);
  EXPECT_TRUE(cat.warnings().empty()) << warnings_text(cat);
  EXPECT_EQ(flatten(cat, step, "worker_0", true), flatten(original, step, "worker_0", true));
  EXPECT_EQ(cat.entries().size(), original.entries().size());
  // Ids are stable across refresh.
  for (std::size_t i = 0; i < ids_before.size(); ++i) EXPECT_EQ(cat.tensor_names()[i], ids_before[i]);
}

// ---- two workers, completeness and live refresh ----------------------------------------------

TEST(CatalogWorkers, SecondWorkerCompletenessAndRefresh) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  scratch_dir scratch("catalog_workers");
  const fs::path root = copy_trial(golden, "dead_relu", scratch);
  // worker_1 wrote every step but the last (55).
  for (int64_t step = 0; step < 55; step += 5) {
    const std::string idx = read_text(root / index_rel(step, "worker_0"));
    write_text(root / index_rel(step, "worker_1"), replace_all(idx, "_worker_0.tfevents", "_worker_1.tfevents"));
    fs::copy_file(root / event_rel(step, "worker_0"), root / event_rel(step, "worker_1"));
  }
  const fs::path collections = root / "collections/000000000/worker_0_collections.json";
  write_text(collections, replace_first(read_text(collections), "\"num_workers\": 1", "\"num_workers\": 2"));
  ASSERT_TRUE(fs::remove(root / "training_job_end.ts"));

  auto cat = catalog::open(root).value();
  EXPECT_TRUE(cat.warnings().empty()) << warnings_text(cat);
  EXPECT_EQ(cat.num_workers(), 2);
  EXPECT_FALSE(cat.training_ended());
  std::vector<std::string> workers;
  for (const auto w : cat.sorted_worker_ids()) workers.emplace_back(cat.workers()[w]);
  EXPECT_EQ(workers, (std::vector<std::string>{"worker_0", "worker_1"}));
  EXPECT_EQ(cat.steps(), range(0, 50, 5));
  EXPECT_EQ(cat.steps(mode::global, true), range(0, 55, 5));
  EXPECT_EQ(cat.steps(mode::train), range(0, 50, 5));
  EXPECT_EQ(cat.steps(mode::train, true), range(0, 55, 5));
  EXPECT_EQ(cat.last_complete_step(), 50);
  EXPECT_TRUE(cat.is_complete(50));
  EXPECT_FALSE(cat.is_complete(55));
  EXPECT_FALSE(cat.is_complete(57));  // never saved
  EXPECT_EQ(cat.find_step(55)->workers.size(), 1u);
  EXPECT_EQ(cat.find_step(50)->workers.size(), 2u);
  const auto w1 = cat.find_worker("worker_1").value();
  const auto fc1 = cat.find_tensor("MLP_fc1.weight").value();
  const tensor_entry* e = cat.find_entry(fc1, 10, w1);
  ASSERT_NE(e, nullptr);
  ASSERT_TRUE(e->raw.has_value());
  EXPECT_EQ(cat.event_file(e->raw->event_file).generic_string(), event_rel(10, "worker_1"));
  EXPECT_EQ(cat.find_entry(fc1, 55, w1), nullptr);
  EXPECT_EQ(cat.entries_at(10).size(), 2 * cat.entries_at(55).size());
  const std::size_t entries_before = cat.entries().size();

  // Nothing new: refresh is a no-op.
  EXPECT_EQ(cat.refresh().value(), 0u);
  EXPECT_EQ(cat.entries().size(), entries_before);

  // worker_0 saves a new step 60 (and something is still being written).
  {
    const std::string idx = read_text(root / index_rel(55, "worker_0"));
    std::string moved = replace_first(idx, "\"mode_step\": 55", "\"mode_step\": 60");
    moved = replace_all(moved, "000000000055", "000000000060");
    write_text(root / index_rel(60, "worker_0"), moved);
    fs::create_directories((root / event_rel(60, "worker_0")).parent_path());
    fs::copy_file(root / event_rel(55, "worker_0"), root / event_rel(60, "worker_0"));
    write_text(root / (index_rel(65, "worker_0") + ".tmp"), "{");
  }
  EXPECT_EQ(cat.refresh().value(), 1u);
  EXPECT_EQ(cat.steps(mode::global, true), range(0, 60, 5));
  EXPECT_EQ(cat.steps(), range(0, 50, 5));
  EXPECT_EQ(cat.global_step(mode::train, 60), 60);
  EXPECT_EQ(cat.find_tensor("MLP_fc1.weight"), fc1);  // ids stable
  EXPECT_EQ(cat.find_worker("worker_1"), w1);
  EXPECT_NE(cat.find_entry(fc1, 60, cat.find_worker("worker_0").value()), nullptr);

  // worker_1 catches up on step 55.
  {
    const std::string idx = read_text(root / index_rel(55, "worker_0"));
    write_text(root / index_rel(55, "worker_1"), replace_all(idx, "_worker_0.tfevents", "_worker_1.tfevents"));
    fs::copy_file(root / event_rel(55, "worker_0"), root / event_rel(55, "worker_1"));
  }
  EXPECT_EQ(cat.refresh().value(), 1u);
  EXPECT_EQ(cat.steps(), range(0, 55, 5));
  EXPECT_EQ(cat.last_complete_step(), 55);
  EXPECT_FALSE(cat.is_complete(60));
  EXPECT_NE(cat.find_entry(fc1, 55, w1), nullptr);
  // Entries stay in (step, worker) order after the late insert.
  const auto entries = cat.entries();
  for (std::size_t i = 1; i < entries.size(); ++i) {
    ASSERT_TRUE(entries[i - 1].step < entries[i].step ||
                (entries[i - 1].step == entries[i].step && entries[i - 1].worker <= entries[i].worker))
        << i;
  }

  // The job ends: everything saved is complete.
  write_text(root / "training_job_end.ts", "");
  EXPECT_EQ(cat.refresh().value(), 0u);
  EXPECT_TRUE(cat.training_ended());
  EXPECT_EQ(cat.steps(), range(0, 60, 5));
  EXPECT_EQ(cat.last_complete_step(), 60);
  EXPECT_TRUE(cat.is_complete(60));
  EXPECT_TRUE(cat.warnings().empty()) << warnings_text(cat);
}

TEST(CatalogWorkers, EndMarkerCompletesAMissingWorkersStep) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  // TRIAL_API §4 [run]: worker_1 stops one step early; after the end marker every step counts.
  scratch_dir scratch("catalog_end");
  const fs::path root = copy_trial(golden, "dead_relu", scratch);
  for (int64_t step = 0; step < 55; step += 5) {
    const std::string idx = read_text(root / index_rel(step, "worker_0"));
    write_text(root / index_rel(step, "worker_1"), replace_all(idx, "_worker_0.tfevents", "_worker_1.tfevents"));
  }
  const fs::path collections = root / "collections/000000000/worker_0_collections.json";
  write_text(collections, replace_first(read_text(collections), "\"num_workers\": 1", "\"num_workers\": 2"));
  ASSERT_TRUE(fs::remove(root / "training_job_end.ts"));
  auto cat = catalog::open(root).value();
  EXPECT_EQ(cat.steps(), range(0, 50, 5));
  write_text(root / "training_job_end.ts", "");
  EXPECT_EQ(cat.refresh().value(), 0u);
  EXPECT_EQ(cat.steps(), range(0, 55, 5));
  EXPECT_EQ(cat.last_complete_step(), 55);
}

TEST(CatalogRange, RangeBeginAndEnd) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(golden);
  const fs::path root = golden / "dead_relu";
  catalog_options both;
  both.range_begin = 10;
  both.range_end = 30;
  const auto cat = catalog::open(root, both).value();
  EXPECT_EQ(cat.steps(), (std::vector<int64_t>{10, 15, 20, 25}));
  EXPECT_EQ(cat.steps(mode::train), (std::vector<int64_t>{10, 15, 20, 25}));
  EXPECT_TRUE(cat.entries_at(5).empty());
  EXPECT_TRUE(cat.entries_at(30).empty());
  for (const auto& e : cat.entries()) {
    EXPECT_GE(e.step, 10);
    EXPECT_LT(e.step, 30);
  }
  catalog_options begin_only;
  begin_only.range_begin = 50;
  EXPECT_EQ(catalog::open(root, begin_only).value().steps(), (std::vector<int64_t>{50, 55}));
  catalog_options end_only;
  end_only.range_end = 6;
  EXPECT_EQ(catalog::open(root, end_only).value().steps(), (std::vector<int64_t>{0, 5}));

  // The range also limits the scan fallback.
  scratch_dir scratch("catalog_range_scan");
  const fs::path copy = copy_trial(golden, "dead_relu", scratch);
  for (int64_t step = 0; step <= 55; step += 5) fs::remove(copy / index_rel(step, "worker_0"));
  const auto scanned = catalog::open(copy, both).value();
  EXPECT_EQ(scanned.steps(), (std::vector<int64_t>{10, 15, 20, 25}));

  catalog_options bad;
  bad.range_begin = 10;
  bad.range_end = 10;
  EXPECT_EQ(catalog::open(root, bad).error_status().code(), error_code::invalid_argument);
  bad.range_begin = -1;
  bad.range_end.reset();
  EXPECT_EQ(catalog::open(root, bad).error_status().code(), error_code::invalid_argument);
}

// ---- hand-written index and collection files -------------------------------------------------

TEST(CatalogIndex, RepeatsReductionsShapesAndWorkerNames) {
  scratch_dir scratch("catalog_hand");
  const fs::path root = scratch.path / "trial";
  // Step 7, worker_0: repeated names (the last wins), a reduction of a name with '/', an
  // unknown reduction, shape records (one for a tensor with no bytes), unknown keys.
  write_text(root / index_rel(7, "worker_0"),
             R"({"meta": {"mode": "TRAIN", "mode_step": 3, "event_file_name": "events/000000000007/000000000007_worker_0.tfevents", "extra": [1]}, )"
             R"("tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 100}, )"
             R"({"tensorname": "smdebug/reductions/abs_l2/a", "start_idx": 100, "length": 50}, )"
             R"({"tensorname": "a", "start_idx": 150, "length": 120, "note": {"x": [1, 2]}}, )"
             R"({"tensorname": "smdebug/reductions/median/a", "start_idx": 270, "length": 50}, )"
             R"({"tensorname": "smdebug/reductions/abs_l2/a", "start_idx": 320, "length": 60}, )"
             R"({"tensorname": "smdebug/reductions/max/b/c", "start_idx": 380, "length": 50}, )"
             R"({"tensorname": "smdebug/reductions/l1/a", "start_idx": 430, "length": 50}], )"
             R"("shape_payload": [{"tensorname": "a", "originalname": "a:0", "shape": [2, 3]}, )"
             R"({"tensorname": "s", "originalname": "s", "shape": []}], "future_key": {"y": null}})");
  // Step 7 from a TF device worker (serialized name), shape-only: no event_file_name.
  write_text(root / "index/000000000/000000000007__job-worker_replica-0_task-1_device-GPU-0.json",
             R"({"meta": {"mode": "TRAIN", "mode_step": 3}, "tensor_payload": [], )"
             R"("shape_payload": [{"tensorname": "a", "originalname": "a", "shape": [4]}]})");
  // Step 9 saved in GLOBAL mode: maps to (GLOBAL, 9) whatever mode_step says.
  write_text(root / index_rel(9, "worker_0"),
             R"({"meta": {"mode": "GLOBAL", "mode_step": 0, "event_file_name": "events/000000000009/000000000009_worker_0.tfevents"}, )"
             R"("tensor_payload": [{"tensorname": "a", "start_idx": 0, "length": 90}]})");
  write_text(root / "index/000000000/notastep.json", "{}");
  write_text(root / "index/000000000/12_.json", "{}");

  const auto cat = catalog::open(root).value();
  // Warnings: the unknown reduction, the unknown top-level key (its content is still ignored:
  // a misspelt "tensor_Payload" must not vanish silently, issue 12) and the two badly named files.
  ASSERT_EQ(cat.warnings().size(), 4u) << warnings_text(cat);
  std::set<std::string> warned_files;
  for (const auto& w : cat.warnings()) warned_files.insert(w.file.generic_string());
  EXPECT_TRUE(warned_files.contains(index_rel(7, "worker_0")));
  EXPECT_TRUE(warned_files.contains("index/000000000/notastep.json"));
  EXPECT_TRUE(warned_files.contains("index/000000000/12_.json"));
  for (const auto& w : cat.warnings()) {
    if (w.file.generic_string() == index_rel(7, "worker_0")) {
      EXPECT_TRUE(w.problem.message().find("smdebug/reductions/median/a") != std::string::npos ||
                  w.problem.message().find("unknown key \"future_key\"") != std::string::npos)
          << w.problem.message();
    }
  }

  std::vector<std::string> workers;
  for (const auto w : cat.sorted_worker_ids()) workers.emplace_back(cat.workers()[w]);
  EXPECT_EQ(workers, (std::vector<std::string>{"/job:worker/replica:0/task:1/device:GPU:0", "worker_0"}));
  EXPECT_EQ(cat.num_workers(), 2);  // no collections file: the workers seen
  EXPECT_TRUE(cat.collections().empty());

  std::vector<std::string> names(cat.tensor_names().begin(), cat.tensor_names().end());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b/c", "s"}));  // first-seen order

  const auto w0 = cat.find_worker("worker_0").value();
  const auto tf = cat.find_worker("/job:worker/replica:0/task:1/device:GPU:0").value();
  const tensor_entry* a = cat.find_entry(cat.find_tensor("a").value(), 7, w0);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->raw.has_value());
  EXPECT_EQ(a->raw->start_bytes, 150u);
  EXPECT_EQ(a->raw->length_bytes, 120u);
  EXPECT_EQ(cat.event_file(a->raw->event_file).generic_string(), event_rel(7, "worker_0"));
  ASSERT_EQ(a->reductions.size(), 2u);
  EXPECT_EQ(a->reductions[0].op, reduction_op::l2);
  EXPECT_TRUE(a->reductions[0].abs);
  EXPECT_EQ(a->reductions[0].location.start_bytes, 320u);
  EXPECT_EQ(a->reductions[0].location.length_bytes, 60u);
  EXPECT_EQ(a->reductions[1].op, reduction_op::l1);
  EXPECT_FALSE(a->reductions[1].abs);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));

  const tensor_entry* bc = cat.find_entry(cat.find_tensor("b/c").value(), 7, w0);
  ASSERT_NE(bc, nullptr);
  EXPECT_FALSE(bc->raw.has_value());
  ASSERT_EQ(bc->reductions.size(), 1u);
  EXPECT_EQ(bc->reductions[0].op, reduction_op::max);

  const tensor_entry* s = cat.find_entry(cat.find_tensor("s").value(), 7, w0);
  ASSERT_NE(s, nullptr);
  EXPECT_FALSE(s->raw.has_value());
  EXPECT_TRUE(s->reductions.empty());
  EXPECT_EQ(s->shape, std::vector<int64_t>{});

  const tensor_entry* a_tf = cat.find_entry(cat.find_tensor("a").value(), 7, tf);
  ASSERT_NE(a_tf, nullptr);
  EXPECT_FALSE(a_tf->raw.has_value());
  EXPECT_EQ(a_tf->shape, std::vector<int64_t>{4});

  // Order inside a step: by worker id (first seen: the TF file sorts first), then index order.
  const auto at7 = cat.entries_at(7);
  ASSERT_EQ(at7.size(), 4u);
  EXPECT_EQ(at7[0].worker, tf);
  EXPECT_EQ(cat.tensor_names()[at7[1].tensor], "a");
  EXPECT_EQ(cat.tensor_names()[at7[2].tensor], "b/c");
  EXPECT_EQ(cat.tensor_names()[at7[3].tensor], "s");
  EXPECT_EQ(at7[3].worker, w0);

  // Modes: step 7 is TRAIN 3; step 9 was saved in GLOBAL mode.
  EXPECT_EQ(cat.find_step(7)->mode, mode::train);
  EXPECT_EQ(cat.find_step(7)->mode_step, 3);
  EXPECT_EQ(cat.find_step(9)->mode, mode::global);
  EXPECT_EQ(cat.find_step(9)->mode_step, 9);
  EXPECT_EQ(cat.global_step(mode::train, 3), 7);
  EXPECT_EQ(cat.global_step(mode::global, 9), 9);
  EXPECT_EQ(cat.global_step(mode::eval, 3), std::nullopt);
  EXPECT_EQ(cat.modes(), std::vector<mode>{mode::train});
  EXPECT_EQ(cat.steps(mode::train, true), std::vector<int64_t>{3});

  // Completeness: step 7 has both workers, step 9 only worker_0 and no end marker.
  EXPECT_TRUE(cat.is_complete(7));
  EXPECT_FALSE(cat.is_complete(9));
  EXPECT_EQ(cat.steps(), std::vector<int64_t>{7});
  EXPECT_EQ(cat.steps(mode::global, true), (std::vector<int64_t>{7, 9}));
  EXPECT_EQ(cat.last_complete_step(), 7);
  EXPECT_EQ(cat.tensor_steps(cat.find_tensor("a").value()), (std::vector<int64_t>{7, 9}));
  EXPECT_EQ(cat.tensor_steps(cat.find_tensor("s").value()), std::vector<int64_t>{7});
  EXPECT_EQ(cat.find_entry(cat.find_tensor("s").value(), 9, w0), nullptr);
  EXPECT_EQ(cat.find_entry(99, 7, w0), nullptr);
  EXPECT_FALSE(cat.find_tensor("smdebug/reductions/abs_l2/a").has_value());
}

TEST(CatalogCollections, FirstFileParsedWorkersFromNamesSelection) {
  scratch_dir scratch("catalog_collections");
  const fs::path root = scratch.path / "trial";
  write_text(root / "collections/000000000/worker_0_collections.json",
             R"({"collections": {"weights": {"name": "weights", "include_regex": ["^(?!gradient).*weight"], )"
             R"("tensor_names": ["fc1.weight"], "reduction_config": {"save_raw_tensor": false, "reductions": "mean,abs_l2_norm", "save_shape": true}, )"
             R"("save_config": {"TRAIN": {"save_interval": 2, "save_steps": [1, 3], "start_step": 1, "end_step": 9}, "EVAL": null}, )"
             R"("save_histogram": false}, )"
             R"("listed": {"name": "listed", "include_regex": [], "tensor_names": ["loss", "not_saved"]}, )"
             R"("broken_rx": {"name": "broken_rx", "include_regex": ["(unclosed", "bias$"], "tensor_names": []}}, )"
             R"("_meta": {"num_workers": 3}})");
  // Only the first file (sorted) is parsed; every collections file name names a worker.
  write_text(root / "collections/000000000/worker_1_collections.json", "not json at all");
  write_text(root / "collections/000000000/worker_1_collections.json.tmp", "");
  write_text(root / index_rel(0, "worker_0"),
             R"({"meta": {"mode": "TRAIN", "mode_step": 0, "event_file_name": "e"}, "tensor_payload": [)"
             R"({"tensorname": "fc1.weight", "start_idx": 0, "length": 1}, {"tensorname": "gradient/fc1.weight", "start_idx": 1, "length": 1}, )"
             R"({"tensorname": "fc1.bias", "start_idx": 2, "length": 1}, {"tensorname": "loss", "start_idx": 3, "length": 1}, )"
             R"({"tensorname": "fc2.weight", "start_idx": 4, "length": 1}]})");

  const auto cat = catalog::open(root).value();
  ASSERT_EQ(cat.warnings().size(), 1u) << warnings_text(cat);
  EXPECT_EQ(cat.warnings()[0].problem.code(), error_code::invalid_argument);
  EXPECT_NE(cat.warnings()[0].problem.message().find("(unclosed"), std::string::npos);
  EXPECT_EQ(cat.warnings()[0].file.generic_string(), "collections/000000000/worker_0_collections.json");

  std::vector<std::string> workers;
  for (const auto w : cat.sorted_worker_ids()) workers.emplace_back(cat.workers()[w]);
  EXPECT_EQ(workers, (std::vector<std::string>{"worker_0", "worker_1"}));
  // One worker of three wrote step 0: incomplete while training runs.
  EXPECT_EQ(cat.num_workers(), 3);
  EXPECT_TRUE(cat.steps().empty());
  EXPECT_EQ(cat.steps(mode::global, true), std::vector<int64_t>{0});
  EXPECT_EQ(cat.last_complete_step(), -1);

  ASSERT_EQ(cat.collections().size(), 3u);
  EXPECT_EQ(cat.collections()[0].name, "weights");  // file order
  EXPECT_EQ(cat.collections()[1].name, "listed");
  EXPECT_EQ(cat.collections()[2].name, "broken_rx");
  const collection* weights = cat.find_collection("weights");
  ASSERT_NE(weights, nullptr);
  EXPECT_EQ(weights->include_regex, std::vector<std::string>{"^(?!gradient).*weight"});
  EXPECT_EQ(weights->tensor_names, std::vector<std::string>{"fc1.weight"});
  EXPECT_FALSE(weights->save_raw_tensor);
  EXPECT_TRUE(weights->save_shape);
  EXPECT_EQ(weights->reductions, "mean,abs_l2_norm");
  EXPECT_TRUE(weights->has_reduction_config);
  EXPECT_FALSE(weights->save_histogram);
  EXPECT_TRUE(cat.has_collections_file());
  const auto& train = weights->save_configs[static_cast<int>(mode::train) - 1];
  ASSERT_TRUE(train.has_value());
  EXPECT_EQ(train->save_interval, 2);
  EXPECT_EQ(train->save_steps, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(train->start_step, 1);
  EXPECT_EQ(train->end_step, 9);
  EXPECT_FALSE(weights->save_configs[static_cast<int>(mode::eval) - 1].has_value());
  EXPECT_FALSE(weights->save_configs[static_cast<int>(mode::predict) - 1].has_value());
  const collection* listed = cat.find_collection("listed");
  ASSERT_NE(listed, nullptr);
  EXPECT_TRUE(listed->save_raw_tensor);  // defaults without reduction_config
  EXPECT_FALSE(listed->save_shape);
  EXPECT_FALSE(listed->has_reduction_config);
  EXPECT_TRUE(listed->save_histogram);
  EXPECT_EQ(cat.find_collection("nope"), nullptr);

  const auto id = [&](const char* n) { return cat.find_tensor(n).value(); };
  EXPECT_TRUE(cat.in_collection(id("fc1.weight"), "weights"));
  EXPECT_TRUE(cat.in_collection(id("fc2.weight"), "weights"));  // by regex
  EXPECT_FALSE(cat.in_collection(id("gradient/fc1.weight"), "weights"));
  EXPECT_FALSE(cat.in_collection(id("fc1.weight"), "nope"));
  EXPECT_TRUE(cat.in_collection(id("fc1.bias"), "broken_rx"));  // the valid pattern still counts

  const auto select_names = [&](std::vector<std::string> colls, std::vector<std::string> rxs) {
    auto ids = cat.select(colls, rxs);
    EXPECT_TRUE(ids.has_value()) << ids.error_status().to_string();
    std::vector<std::string> out;
    if (ids.has_value()) {
      for (const auto t : *ids) out.emplace_back(cat.tensor_names()[t]);
    }
    return out;
  };
  using names = std::vector<std::string>;
  EXPECT_EQ(select_names({"weights"}, {}), (names{"fc1.weight", "fc2.weight"}));
  EXPECT_EQ(select_names({"listed"}, {}), (names{"loss"}));
  EXPECT_EQ(select_names({"broken_rx"}, {}), (names{"fc1.bias"}));
  EXPECT_EQ(select_names({"weights", "listed"}, {"^gradient"}),
            (names{"fc1.weight", "fc2.weight", "gradient/fc1.weight", "loss"}));
  EXPECT_EQ(select_names({}, {"bias", "loss$"}), (names{"fc1.bias", "loss"}));
  EXPECT_TRUE(select_names({"nope"}, {}).empty());
  EXPECT_TRUE(select_names({}, {}).empty());
  const std::vector<std::string> bad{"fc(("};
  const auto failed = cat.select({}, bad);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error_status().code(), error_code::invalid_argument);
  EXPECT_NE(failed.error_status().message().find("fc(("), std::string::npos);
}

TEST(CatalogCollections, SerializedDeviceNameAndBadFile) {
  scratch_dir scratch("catalog_collections_tf");
  const fs::path root = scratch.path / "trial";
  write_text(root / "collections/000000000/_job-worker_replica-0_task-2_collections.json", "{}");
  const auto cat = catalog::open(root).value();
  ASSERT_EQ(cat.warnings().size(), 1u) << warnings_text(cat);
  EXPECT_EQ(cat.warnings()[0].problem.code(), error_code::data_loss);
  EXPECT_TRUE(cat.collections().empty());
  ASSERT_EQ(cat.workers().size(), 1u);
  EXPECT_EQ(cat.workers()[0], "/job:worker/replica:0/task:2");
  EXPECT_EQ(cat.num_workers(), 1);  // no _meta: the workers seen
  EXPECT_TRUE(cat.has_collections_file());  // read, if unusable
}

TEST(CatalogCollections, FileListingNoCollectionsCountsAsPresent) {
  // smdebug waits for a collections file, not for collections (issue 14).
  scratch_dir scratch("catalog_collections_none");
  const fs::path root = scratch.path / "trial";
  write_text(root / "index/000000000/placeholder", "");
  auto cat = catalog::open(root).value();
  EXPECT_FALSE(cat.has_collections_file());
  write_text(root / "collections/000000000/worker_0_collections.json",
             R"({"collections": {}, "_meta": {"num_workers": 2}})");
  ASSERT_TRUE(cat.refresh().has_value());
  EXPECT_TRUE(cat.has_collections_file()) << warnings_text(cat);
  EXPECT_TRUE(cat.collections().empty());
  EXPECT_TRUE(cat.warnings().empty()) << warnings_text(cat);
  EXPECT_EQ(cat.num_workers(), 2);
}

TEST(CatalogOpen, EmptyAndMissingFolders) {
  scratch_dir scratch("catalog_empty");
  const auto cat = catalog::open(scratch.path).value();
  EXPECT_TRUE(cat.entries().empty());
  EXPECT_TRUE(cat.steps().empty());
  EXPECT_TRUE(cat.step_infos().empty());
  EXPECT_TRUE(cat.tensor_names().empty());
  EXPECT_TRUE(cat.modes().empty());
  EXPECT_EQ(cat.last_complete_step(), -1);
  EXPECT_EQ(cat.num_workers(), 0);
  EXPECT_FALSE(cat.training_ended());
  EXPECT_FALSE(cat.has_collections_file());
  EXPECT_TRUE(cat.entries_at(0).empty());
  EXPECT_EQ(cat.find_entry(0, 0, 0), nullptr);
  EXPECT_TRUE(cat.tensor_steps(0).empty());
  EXPECT_EQ(cat.location(), scratch.path.string());

  const auto missing = catalog::open(scratch.path / "no_such_trial");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error_status().code(), error_code::not_found);
  EXPECT_NE(missing.error_status().message().find("no_such_trial"), std::string::npos);
  write_text(scratch.path / "a_file", "");
  EXPECT_EQ(catalog::open(scratch.path / "a_file").error_status().code(), error_code::not_found);
}

TEST(CatalogReductions, NamesRoundTrip) {
  for (const auto op : {reduction_op::min, reduction_op::max, reduction_op::mean, reduction_op::std,
                        reduction_op::variance, reduction_op::sum, reduction_op::prod,
                        reduction_op::l1, reduction_op::l2}) {
    EXPECT_EQ(parse_reduction(reduction_name(op)), op);
  }
  EXPECT_FALSE(parse_reduction("median").has_value());
  EXPECT_FALSE(parse_reduction("l1_norm").has_value());
  EXPECT_FALSE(parse_reduction("").has_value());
  EXPECT_EQ(reduction_name(reduction_op::variance), "variance");
}

}  // namespace
}  // namespace trialstat::trial
