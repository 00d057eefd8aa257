// SPDX-License-Identifier: Apache-2.0
// End to end against smdebug itself: every golden trial (generated or shared) is read through
// the catalog → decode → statistics pipeline, and every statistic, listing and weight-update
// ratio is compared with <trial>.expected.json (written by smdebug 1.0.34 + numpy float64).
//
// Tolerances (numpy uses pairwise float64 summation, we use blocked compensated float64 sums):
//   counts, dtype, shape, min, max, linf, histogram counts and edges: exact;
//   sum, mean, l1, mean_abs: |ours − numpy| ≤ 1e-12 · Σ|x| (resp. mean|x|): the error bound of
//     any float64 summation order is proportional to Σ|x|, so a relative-to-|sum| bound would be
//     meaningless for sums that cancel (e.g. gradients of a softmax bias sum to ~0);
//   variance, std: ≤ 1e-10 relative to max(variance, mean²) (resp. max(std, |mean|));
//   l2: 1e-12 relative; weight-update ratio: 1e-10 relative.
// Where a golden file records a smdebug bug, we assert our correct value against the golden
// `raw_decode` and name the difference (see README "Differences from smdebug").
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "tests/support/shared_trials.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/plan/read_plan.hpp"
#include "trialstat/report/statistics_writer.hpp"

namespace trialstat {
namespace {

using nlohmann::json;
using record_key = std::tuple<std::string, int64_t, std::string>;  // tensor, step, worker

double json_double(const json& v) {
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "NaN") return std::nan("");
    if (s == "Infinity") return INFINITY;
    if (s == "-Infinity") return -INFINITY;
  }
  return v.get<double>();
}

/// Compute every record of a trial the way `trialstat stats` does.
std::map<record_key, stats::statistics_record> compute_all(const trial::catalog& trial,
                                                         const pipeline::pipeline_options& options) {
  plan::read_plan plan;
  for (auto id : trial.sorted_tensor_ids()) {
    stats::statistics_request request;
    request.histogram_bins = 64;
    request.saved_reductions = true;
    if (trial.in_collection(id, "weights") || trial.in_collection(id, "biases")) {
      request.history_depth = 1;
    }
    plan.request(id, request);
  }
  std::map<record_key, stats::statistics_record> out;
  auto run = pipeline::run_statistics(trial, plan, options, [&](const stats::step_statistics& step) {
    for (const auto& r : step.records) {
      out[{trial.tensor_names()[r.tensor], r.step, trial.workers()[r.worker]}] = r;
    }
  });
  EXPECT_TRUE(run.has_value()) << run.error_status().to_string();
  return out;
}

void expect_stats_equal(const json& want, const stats::statistics_record& got, const std::string& where,
                        bool compare_dtype = true) {
  if (compare_dtype) {
    EXPECT_EQ(std::string(dtype_name(got.type)), want["dtype"].get<std::string>()) << where;
  }
  EXPECT_EQ(got.shape, want["shape"].get<std::vector<int64_t>>()) << where;
  EXPECT_EQ(got.num_elements, want["numel"].get<int64_t>()) << where;
  ASSERT_TRUE(got.moments.has_value()) << where << ": " << got.raw_status.to_string();
  const stats::moments& m = *got.moments;
  EXPECT_EQ(m.finite_count(), want["finite_count"].get<int64_t>()) << where;
  EXPECT_EQ(m.nan_count, want["nan_count"].get<int64_t>()) << where;
  EXPECT_EQ(m.pos_inf_count, want["pos_inf_count"].get<int64_t>()) << where;
  EXPECT_EQ(m.neg_inf_count, want["neg_inf_count"].get<int64_t>()) << where;
  EXPECT_EQ(m.zero_count, want["zero_count"].get<int64_t>()) << where;
  if (want["min"].is_null()) {
    EXPECT_FALSE(m.has_finite()) << where;
    EXPECT_TRUE(want["hist"].is_null()) << where;
    EXPECT_TRUE(!got.histogram || got.histogram->bins == 0) << where;
    return;
  }
  EXPECT_EQ(m.min, json_double(want["min"])) << where;
  EXPECT_EQ(m.max, json_double(want["max"])) << where;
  EXPECT_EQ(m.max_abs, json_double(want["linf"])) << where;
  const double l1 = json_double(want["l1"]);
  const double mean_abs = json_double(want["mean_abs"]);
  EXPECT_NEAR(m.sum, json_double(want["sum"]), 1e-12 * l1 + 1e-300) << where;
  EXPECT_NEAR(m.sum_abs, l1, 1e-12 * l1 + 1e-300) << where;
  EXPECT_NEAR(m.mean, json_double(want["mean"]), 1e-12 * mean_abs + 1e-300) << where;
  EXPECT_NEAR(m.mean_abs(), mean_abs, 1e-12 * mean_abs + 1e-300) << where;
  const double mean = json_double(want["mean"]);
  const double variance = json_double(want["variance"]);
  EXPECT_NEAR(m.variance(), variance, 1e-10 * std::max(variance, mean * mean) + 1e-300) << where;
  const double sd = json_double(want["std"]);
  EXPECT_NEAR(m.std_dev(), sd, 1e-10 * std::max(sd, std::abs(mean)) + 1e-300) << where;
  const double l2 = json_double(want["l2"]);
  EXPECT_NEAR(m.l2(), l2, 1e-12 * l2 + 1e-300) << where;

  const json& hist = want["hist"];
  ASSERT_TRUE(got.histogram.has_value()) << where;
  EXPECT_EQ(got.histogram->bins, hist["bins"].get<int>()) << where;
  EXPECT_EQ(got.histogram->lo, json_double(hist["lo"])) << where;
  EXPECT_EQ(got.histogram->hi, json_double(hist["hi"])) << where;
  EXPECT_EQ(got.histogram->counts, hist["counts"].get<std::vector<int64_t>>()) << where;
  EXPECT_EQ(got.histogram->degenerate, hist.value("degenerate", false)) << where;
}

class golden_statistics : public ::testing::TestWithParam<std::string> {};

TEST_P(golden_statistics, every_record_matches_smdebug) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  const std::string name = GetParam();
  std::ifstream file(dir / (name + ".expected.json"));
  const json expected = json::parse(file);
  auto catalog = trial::catalog::open(dir / name);
  ASSERT_TRUE(catalog.has_value()) << catalog.error_status().to_string();
  // Both ways of getting event-file bytes: read into a buffer, and mapped (every file, whatever
  // its size: `trialstat stats` maps files of 256 KiB and more).
  for (const bool mapped : {false, true}) {
    SCOPED_TRACE(mapped ? "event files mapped" : "event files read");
    pipeline::pipeline_options options;
    options.map_event_files = mapped;
    options.map_min_bytes = 0;
    const auto ours = compute_all(*catalog, options);

    int64_t compared = 0, compared_raw_decode = 0;
    for (const auto& [tensor, body] : expected["tensors"].items()) {
      for (const json& rec : body["records"]) {
        const int64_t step = rec["step"].get<int64_t>();
        const std::string worker = rec["worker"].get<std::string>();
        const std::string where = name + "/" + tensor + " step " + std::to_string(step);
        const auto it = ours.find({tensor, step, worker});
        ASSERT_NE(it, ours.end()) << where << ": no record";
        const stats::statistics_record& got = it->second;
        EXPECT_EQ(std::string(mode_name(got.mode)), rec["mode"].get<std::string>()) << where;
        EXPECT_EQ(got.mode_step, rec["mode_step"].get<int64_t>()) << where;

        const bool smdebug_read_it = rec.contains("stats") && !rec["stats"].is_null();
        const bool has_raw_decode = rec.contains("raw_decode") && rec["raw_decode"].contains("stats");
        if (has_raw_decode) {
          // smdebug could not read the value (KeyError for int16/uint16/uint32/uint64, empty
          // tensors, a raw tensor hidden by a shape record) or read it with the wrong dtype
          // (int8 as uint8). We read the bytes correctly: compare with the golden raw decode.
          const json& raw = rec["raw_decode"];
          expect_stats_equal(raw["stats"], got, where + " (raw_decode; smdebug: " +
                                                    rec.value("error", std::string("dtype ")) + ")");
          ++compared_raw_decode;
          if (smdebug_read_it) {
            // Only int8 reaches here: smdebug reports uint8 (-1 → 255); we report int8.
            EXPECT_EQ(rec["stats"]["dtype"].get<std::string>(), "uint8") << where;
            EXPECT_EQ(std::string(dtype_name(got.type)), "int8") << where;
          }
        } else if (smdebug_read_it) {
          expect_stats_equal(rec["stats"], got, where);
          ++compared;
        } else {
          EXPECT_FALSE(got.moments.has_value()) << where << ": smdebug found no raw value";
          EXPECT_EQ(rec["raw_saved"].get<bool>(), false) << where;
        }

        if (rec.contains("saved_reductions")) {
          std::map<std::pair<std::string, bool>, double> saved;
          for (const auto& red : got.saved_reductions) {
            saved[{std::string(trial::reduction_name(red.op)), red.abs}] = red.value;
          }
          for (const json& red : rec["saved_reductions"]) {
            const auto key = std::make_pair(red["reduction"].get<std::string>(), red["abs"].get<bool>());
            ASSERT_TRUE(saved.count(key)) << where << " reduction " << key.first;
            // Stored as float32 by the hook: both sides are that float32 widened, bit-exact.
            EXPECT_EQ(saved[key], json_double(red["value"])) << where << " reduction " << key.first;
          }
          EXPECT_EQ(saved.size(), rec["saved_reductions"].size()) << where;
        }
      }
    }
    EXPECT_GT(compared + compared_raw_decode, 0) << "no statistics compared for " << name;

    for (const json& entry : expected["weight_update_ratios"]) {
      const std::string tensor = entry["tensor"].get<std::string>();
      const int64_t step = entry["step"].get<int64_t>();
      const std::string where = name + "/" + tensor + " update ratio at step " + std::to_string(step);
      const auto it = ours.find({tensor, step, entry["worker"].get<std::string>()});
      ASSERT_NE(it, ours.end()) << where;
      ASSERT_FALSE(it->second.previous.empty()) << where;
      const auto& cmp = it->second.previous.front();
      EXPECT_EQ(cmp.previous_step, entry["prev_step"].get<int64_t>()) << where;
      const double ratio = cmp.result.diff_l2() / (cmp.result.previous_l2() + report::update_ratio_epsilon);
      const double want = json_double(entry["ratio"]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(ratio)) << where << ": got " << ratio;
      } else if (std::isinf(want)) {
        EXPECT_EQ(ratio, want) << where;
      } else {
        EXPECT_NEAR(ratio, want, 1e-10 * std::abs(want)) << where;
      }
    }
  }
}

// The fixed list: ctest lists the instances before golden.make_trials has written the trials.
INSTANTIATE_TEST_SUITE_P(trials, golden_statistics,
                         ::testing::ValuesIn(testing::golden_trial_names()),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace trialstat
