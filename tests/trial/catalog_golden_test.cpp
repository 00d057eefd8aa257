// SPDX-License-Identifier: Apache-2.0
// The catalog against what smdebug 1.0.34 read back from the golden trials
// (<golden trials>/<name>.expected.json; spec/TRIAL_API.md §2-§4, §9; FORMAT.md §6-§8).
#include "trialstat/trial/catalog.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/shared_trials.hpp"

namespace trialstat::trial {
namespace {

using json = nlohmann::json;

json load_expected(const std::filesystem::path& dir, const std::string& name) {
  std::ifstream in(dir / (name + ".expected.json"));
  return json::parse(in);
}

std::vector<std::string> names_of(const catalog& cat, const std::vector<tensor_id>& ids) {
  std::vector<std::string> out;
  for (const tensor_id t : ids) out.emplace_back(cat.tensor_names()[t]);
  return out;
}

trialstat::mode mode_of(const std::string& name) {
  const auto m = parse_mode_name(name);
  EXPECT_TRUE(m.has_value()) << name;
  return m.value_or(trialstat::mode::global);
}

/// Every golden trial, one test each, so a failure names the trial.
class CatalogGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(CatalogGolden, MatchesSmdebug) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  const std::string name = GetParam();
  const json expected = load_expected(dir, name);
  auto opened = catalog::open(dir / name);
  ASSERT_TRUE(opened.has_value()) << opened.error_status().to_string();
  const catalog& cat = *opened;

  for (const auto& w : cat.warnings()) ADD_FAILURE() << "warning: " << w.problem.to_string();

  // ---- workers, completeness ----
  std::vector<std::string> workers;
  for (const worker_id w : cat.sorted_worker_ids()) workers.emplace_back(cat.workers()[w]);
  EXPECT_EQ(workers, expected["workers"].get<std::vector<std::string>>());
  EXPECT_EQ(cat.num_workers(), expected["num_workers_in_collection_file"].get<int>());
  EXPECT_EQ(cat.training_ended(), expected["training_ended"].get<bool>());
  EXPECT_EQ(cat.last_complete_step(), expected["last_complete_step"].get<int64_t>());

  // ---- steps and modes ----
  for (const auto& [mode_name, steps] : expected["steps"].items()) {
    EXPECT_EQ(cat.steps(mode_of(mode_name)), steps.get<std::vector<int64_t>>()) << mode_name;
  }
  for (const auto& [mode_name, steps] : expected["steps_including_incomplete"].items()) {
    EXPECT_EQ(cat.steps(mode_of(mode_name), true), steps.get<std::vector<int64_t>>()) << mode_name;
  }
  for (const auto& [mode_name, map] : expected["mode_step_to_global_step"].items()) {
    const trialstat::mode m = mode_of(mode_name);
    EXPECT_EQ(cat.steps(m, true).size(), map.size()) << mode_name;
    for (const auto& [mode_step, global] : map.items()) {
      EXPECT_EQ(cat.global_step(m, std::stoll(mode_step)), global.get<int64_t>())
          << mode_name << " " << mode_step;
    }
  }
  const json& g2m = expected["global_step_to_mode"];
  EXPECT_EQ(cat.step_infos().size(), g2m.size());
  for (const auto& [global, pair] : g2m.items()) {
    const step_info* info = cat.find_step(std::stoll(global));
    ASSERT_NE(info, nullptr) << "global step " << global;
    EXPECT_EQ(mode_name(info->mode), pair[0].get<std::string>()) << "global step " << global;
    EXPECT_EQ(info->mode_step, pair[1].get<int64_t>()) << "global step " << global;
    EXPECT_TRUE(cat.is_complete(info->step));
  }
  // smdebug lists modes in first-seen order, the catalog in enum order: compare as sets.
  std::set<std::string> modes_present;
  for (const auto m : cat.modes()) modes_present.emplace(mode_name(m));
  const auto want_modes = expected["modes_present"].get<std::vector<std::string>>();
  EXPECT_EQ(modes_present, std::set<std::string>(want_modes.begin(), want_modes.end()));

  // ---- tensor names (all and per mode) ----
  EXPECT_EQ(names_of(cat, cat.sorted_tensor_ids()),
            expected["tensor_names"].get<std::vector<std::string>>());
  std::map<std::string, std::set<std::string>> by_mode;
  for (const auto& e : cat.entries()) {
    const step_info* info = cat.find_step(e.step);
    ASSERT_NE(info, nullptr);
    by_mode[std::string(mode_name(info->mode))].insert(cat.tensor_names()[e.tensor]);
  }
  for (const auto& [mode_name, names] : expected["tensor_names_by_mode"].items()) {
    const auto want = names.get<std::vector<std::string>>();
    EXPECT_EQ(std::vector<std::string>(by_mode[mode_name].begin(), by_mode[mode_name].end()), want)
        << mode_name;
  }
  EXPECT_EQ(by_mode.size(), expected["tensor_names_by_mode"].size());

  // ---- collections ----
  EXPECT_EQ(cat.collections().size(), expected["collections"].size());
  for (const auto& [cname, want] : expected["collections"].items()) {
    SCOPED_TRACE("collection " + cname);
    const collection* c = cat.find_collection(cname);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->include_regex, want["include_regex"].get<std::vector<std::string>>());
    EXPECT_EQ(c->tensor_names, want["tensor_names_in_collection_file"].get<std::vector<std::string>>());
    const std::vector<std::string> one{cname};
    auto selected = cat.select(one, {});
    ASSERT_TRUE(selected.has_value());
    EXPECT_EQ(names_of(cat, *selected), want["tensor_names_in_trial"].get<std::vector<std::string>>());
    for (const tensor_id t : *selected) EXPECT_TRUE(cat.in_collection(t, cname));
    const json& rc = want["reduction_config"];
    EXPECT_EQ(c->save_raw_tensor, rc["save_raw_tensor"].get<bool>());
    EXPECT_EQ(c->save_shape, rc["save_shape"].get<bool>());
    EXPECT_EQ(c->reductions, rc["reductions"].get<std::string>());
    for (const auto& [mode_name, cfg] : want["save_config"].items()) {
      const auto& have = c->save_configs[static_cast<int>(mode_of(mode_name)) - 1];
      if (cfg.is_null()) {
        EXPECT_FALSE(have.has_value()) << mode_name;
        continue;
      }
      ASSERT_TRUE(have.has_value()) << mode_name;
      EXPECT_EQ(have->save_interval, cfg["save_interval"].get<int64_t>());
      EXPECT_EQ(have->save_steps, cfg["save_steps"].get<std::vector<int64_t>>());
      EXPECT_EQ(have->start_step, cfg["start_step"].get<int64_t>());
      if (cfg["end_step"].is_null()) {
        EXPECT_FALSE(have->end_step.has_value());
      } else {
        EXPECT_EQ(have->end_step, cfg["end_step"].get<int64_t>());
      }
    }
  }

  // ---- per tensor: steps per mode, and every (step, worker) record ----
  std::size_t records = 0;
  for (const auto& [tname, want] : expected["tensors"].items()) {
    SCOPED_TRACE("tensor " + tname);
    const auto t = cat.find_tensor(tname);
    ASSERT_TRUE(t.has_value());
    const std::vector<int64_t> global_steps = cat.tensor_steps(*t);
    for (const auto& [mode_name, steps] : want["steps"].items()) {
      const trialstat::mode m = mode_of(mode_name);
      std::vector<int64_t> have;
      for (const int64_t g : global_steps) {
        if (m == trialstat::mode::global) {
          have.push_back(g);
        } else if (const step_info* info = cat.find_step(g); info->mode == m) {
          have.push_back(info->mode_step);
        }
      }
      EXPECT_EQ(have, steps.get<std::vector<int64_t>>()) << mode_name;
    }
    for (const json& rec : want["records"]) {
      ++records;
      const int64_t step = rec["step"].get<int64_t>();
      SCOPED_TRACE("step " + std::to_string(step));
      const auto w = cat.find_worker(rec["worker"].get<std::string>());
      ASSERT_TRUE(w.has_value());
      const tensor_entry* e = cat.find_entry(*t, step, *w);
      ASSERT_NE(e, nullptr);
      EXPECT_EQ(e->tensor, *t);
      EXPECT_EQ(e->step, step);
      EXPECT_EQ(e->worker, *w);
      EXPECT_EQ(e->raw.has_value(), rec["raw_saved"].get<bool>());
      // The json's shape_from_index is smdebug's tensor.shape(): the shape record when the
      // index has one, else the shape of the value it read.
      if (e->shape.has_value()) {
        ASSERT_TRUE(rec.contains("shape_from_index"));
        EXPECT_EQ(*e->shape, rec["shape_from_index"].get<std::vector<int64_t>>());
      } else if (rec.contains("shape_from_index")) {
        EXPECT_TRUE(e->raw.has_value());
        ASSERT_TRUE(rec.contains("stats") && rec["stats"].is_object());
        EXPECT_EQ(rec["stats"]["shape"], rec["shape_from_index"]);
      }
      std::set<std::pair<std::string, bool>> want_reductions;
      if (rec.contains("saved_reductions")) {
        for (const json& r : rec["saved_reductions"]) {
          want_reductions.emplace(r["reduction"].get<std::string>(), r["abs"].get<bool>());
        }
      }
      std::set<std::pair<std::string, bool>> have_reductions;
      for (const auto& r : e->reductions) {
        EXPECT_TRUE(have_reductions.emplace(std::string(reduction_name(r.op)), r.abs).second)
            << "reduction listed twice";
      }
      EXPECT_EQ(have_reductions, want_reductions);
      // Where the json decoded the record from the index's byte range, it is ours too.
      if (rec.contains("raw_decode") && rec["raw_decode"].contains("start_idx")) {
        const json& rd = rec["raw_decode"];
        ASSERT_TRUE(e->raw.has_value());
        EXPECT_EQ(cat.event_file(e->raw->event_file).generic_string(), rd["event_file"].get<std::string>());
        EXPECT_EQ(e->raw->start_bytes, rd["start_idx"].get<uint64_t>());
        EXPECT_EQ(e->raw->length_bytes, rd["length"].get<uint64_t>());
      }
    }
  }
  // Every entry is one of smdebug's records: nothing extra.
  EXPECT_EQ(cat.entries().size(), records);

  // ---- structural invariants of the entry order ----
  const auto entries = cat.entries();
  for (std::size_t i = 1; i < entries.size(); ++i) {
    ASSERT_TRUE(entries[i - 1].step < entries[i].step ||
                (entries[i - 1].step == entries[i].step && entries[i - 1].worker <= entries[i].worker))
        << "entries out of (step, worker) order at " << i;
  }
  std::size_t covered = 0;
  for (const auto& info : cat.step_infos()) {
    const auto at = cat.entries_at(info.step);
    covered += at.size();
    for (const auto& e : at) EXPECT_EQ(e.step, info.step);
  }
  EXPECT_EQ(covered, entries.size());
  EXPECT_TRUE(cat.entries_at(-5).empty());
}

// The fixed list: ctest lists the instances before golden.make_trials has written the trials.
INSTANTIATE_TEST_SUITE_P(Trials, CatalogGolden,
                         ::testing::ValuesIn(::trialstat::testing::golden_trial_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

TEST(CatalogGoldenDetails, OverfitSpansTwoIndexFolders) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  auto cat = catalog::open(dir / "overfit").value();
  const auto steps = cat.steps();
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.front(), 0);
  EXPECT_EQ(steps.back(), 1040);
  // Steps >= 1000 live in index/000000001/: one saved step per file there.
  std::size_t files_in_second_folder = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir / "overfit" / "index" / "000000001")) {
    if (f.path().extension() == ".json") ++files_in_second_folder;
  }
  EXPECT_GT(files_in_second_folder, 0u);
  EXPECT_EQ(static_cast<std::size_t>(std::count_if(steps.begin(), steps.end(),
                                                   [](int64_t s) { return s >= 1000; })),
            files_in_second_folder);
  EXPECT_FALSE(cat.entries_at(1040).empty());
}

TEST(CatalogGoldenDetails, ReductionsAttachToTheirBaseTensor) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  auto cat = catalog::open(dir / "reductions_only").value();
  for (const auto& n : cat.tensor_names()) {
    EXPECT_EQ(n.find("smdebug/reductions"), std::string::npos) << n;
  }
  const auto t = cat.find_tensor("MLP_fc1.weight");
  ASSERT_TRUE(t.has_value());
  const tensor_entry* e = cat.find_entry(*t, 5, *cat.find_worker("worker_0"));
  ASSERT_NE(e, nullptr);
  EXPECT_FALSE(e->raw.has_value());
  ASSERT_EQ(e->reductions.size(), 13u);
  // Index order: min, max, mean, std, variance, sum, l1, l2, then the abs_ ones.
  EXPECT_EQ(e->reductions[0].op, reduction_op::min);
  EXPECT_FALSE(e->reductions[0].abs);
  EXPECT_EQ(e->reductions[0].location.start_bytes, 0u);
  EXPECT_EQ(e->reductions[0].location.length_bytes, 111u);
  EXPECT_EQ(cat.event_file(e->reductions[0].location.event_file).generic_string(),
            "events/000000000005/000000000005_worker_0.tfevents");
  EXPECT_EQ(e->shape, (std::vector<int64_t>{32, 64}));
  // smdebug hides raw relu outputs behind their shape record; the catalog keeps both.
  const auto relu = cat.find_entry(*cat.find_tensor("relu1_output_0"), 5, *cat.find_worker("worker_0"));
  ASSERT_NE(relu, nullptr);
  EXPECT_TRUE(relu->raw.has_value());
  EXPECT_TRUE(relu->shape.has_value());
}

}  // namespace
}  // namespace trialstat::trial
