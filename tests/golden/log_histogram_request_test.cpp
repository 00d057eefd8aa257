// SPDX-License-Identifier: Apache-2.0
// The fixed log-scale histogram as a requestable statistic, end to end: statistics_request merging,
// the CPU pipeline's records on a generated trial (NaN, ±Inf, ±0, negatives, values beyond
// ±9.92e19, float16, int32, bool, an empty and a 0-d tensor) equal both
// stats::compute_log_histograms on the same bytes and a naive reference (edges by smdebug's loop
// at run time, numpy.histogram's rule by binary search), the golden trials (counts beside the
// bins equal expected.json's nan/inf counts, min and max fall in the first/last non-empty bins),
// and the JSON Lines writer's `log_hist` object parsed back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/reference/reference_stats.hpp"
#include "tests/support/record_equality.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/plan/read_plan.hpp"
#include "trialstat/report/statistics_writer.hpp"
#include "trialstat/stats/log_histogram.hpp"
#include "trialstat/trial/catalog.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat {
namespace {

using nlohmann::json;

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

// ---- naive reference -------------------------------------------------------------------------

/// smdebug's `_get_default_bins` at run time: v = 1e-12; while v < 1e20: edge v; v *= 1.1.
std::vector<double> reference_edges() {
  std::vector<double> positive;
  for (double v = 1e-12; v < 1e20; v *= 1.1) positive.push_back(v);
  std::vector<double> edges;
  for (auto it = positive.rbegin(); it != positive.rend(); ++it) edges.push_back(-*it);
  edges.push_back(0.0);
  edges.insert(edges.end(), positive.begin(), positive.end());
  return edges;
}

/// numpy.histogram(x, bins=edges) plus the counts beside the bins.
stats::log_histogram reference_log_histogram(const std::vector<double>& values) {
  static const std::vector<double> edges = reference_edges();
  stats::log_histogram h;
  h.counts.assign(edges.size() - 1, 0);
  for (const double x : values) {
    if (std::isnan(x)) {
      ++h.nan_count;
    } else if (x == inf) {
      ++h.pos_inf_count;
    } else if (x == -inf) {
      ++h.neg_inf_count;
    } else if (x < edges.front()) {
      ++h.below_count;
    } else if (x > edges.back()) {
      ++h.above_count;
    } else {
      // Last i with edge[i] ≤ x; x == edge[last] belongs to the last (closed) bin.
      auto i = static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end(), x) - edges.begin()) - 1;
      i = std::min(i, h.counts.size() - 1);
      ++h.counts[i];
    }
  }
  return h;
}

void expect_same(const stats::log_histogram& got, const stats::log_histogram& want, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(got.counts.size(), static_cast<std::size_t>(stats::log_histogram_bins));
  testing::expect_same_log_histogram(got, want);
}

int64_t total_of(const stats::log_histogram& h) {
  return h.binned_count() + h.nan_count + h.pos_inf_count + h.neg_inf_count + h.below_count +
         h.above_count;
}

// ---- request merging -------------------------------------------------------------------------

TEST(log_histogram_request, MergesWithOrAndNeedsTheRawTensor) {
  stats::statistics_request plain;
  EXPECT_FALSE(plain.log_histogram);  // off unless asked for
  stats::statistics_request only_log;
  only_log.moments = false;
  EXPECT_FALSE(only_log.needs_raw());
  only_log.log_histogram = true;
  EXPECT_TRUE(only_log.needs_raw());

  stats::statistics_request merged = plain;
  merged.merge(only_log);
  EXPECT_TRUE(merged.log_histogram);
  EXPECT_TRUE(merged.moments);
  merged.merge(plain);  // a later request without it does not turn it off
  EXPECT_TRUE(merged.log_histogram);

  plan::read_plan plan;
  plan.request(3, plain);
  ASSERT_NE(plan.find(3), nullptr);
  EXPECT_FALSE(plan.find(3)->log_histogram);
  plan.request(3, only_log);
  EXPECT_TRUE(plan.find(3)->log_histogram);
  plan.request(3, plain);
  EXPECT_TRUE(plan.find(3)->log_histogram);
  plan.request(4, only_log);
  EXPECT_TRUE(plan.find(4)->log_histogram);
  EXPECT_FALSE(plan.find(4)->moments);
}

// ---- a generated trial through the CPU pipeline ----------------------------------------------

struct written_tensor {
  std::string name;
  dtype type;
  std::vector<int64_t> shape;
  std::vector<double> values;  ///< as decoded (after encoding to `type`)
};

/// Values with every special case: ±0, NaN, ±Inf, the zero bin's neighbours, an exact edge,
/// values beyond ±p₇₇₃, negatives, and seeded normal values over many decades.
std::vector<double> special_values(uint64_t seed, std::size_t n) {
  const auto edges = stats::log_histogram_edges();
  std::vector<double> v = {0.0,   -0.0,       nan_value, inf,       -inf,     1e-13,  -1e-13,
                           1e-12, -1e-12,     1.0,       -1.0,      1e30,     -1e30,  edges[1000],
                           edges[1548], edges[0], 3.5e19, -7.25e19, nan_value, 42.0, 1e20};
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> decade(-14, 22);
  while (v.size() < n) v.push_back(normal(rng) * std::pow(10.0, decade(rng)));
  v.resize(n);
  return v;
}

struct generated_trial {
  std::filesystem::path root;
  std::map<std::pair<std::string, int64_t>, written_tensor> tensors;  // (name, step)
};

generated_trial write_trial(uint64_t seed) {
  generated_trial out;
  out.root = testing::make_scratch_dir("log_hist_request");
  auto w = writer::trial_writer::create(out.root, "worker_0", {.num_workers = 1});
  EXPECT_TRUE(w) << w.error_status().to_string();
  if (!w) return out;
  for (int64_t step = 0; step < 3; ++step) {
    EXPECT_TRUE(w->begin_step(step, mode::train, step).ok());
    const uint64_t s = seed + 101 * static_cast<uint64_t>(step);
    std::vector<written_tensor> tensors = {
        {"w_f64", dtype::float64, {40, 50}, special_values(s, 2000)},
        {"w_f32", dtype::float32, {3000}, special_values(s + 1, 3000)},
        {"w_f16", dtype::float16, {16, 16}, special_values(s + 2, 256)},
        {"counts_i32", dtype::int32, {500}, {}},
        {"mask", dtype::boolean, {7, 9}, {}},
        {"loss", dtype::float32, {}, {step == 1 ? -0.0 : 0.25 * static_cast<double>(step + 1)}},
        {"empty", dtype::float32, {0, 4}, {}},
        {"not_requested", dtype::float32, {10}, special_values(s + 3, 10)},
    };
    std::mt19937_64 rng(s);
    for (int i = 0; i < 500; ++i) tensors[3].values.push_back(static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000));
    for (int i = 0; i < 63; ++i) tensors[4].values.push_back(static_cast<double>(rng() % 2));
    for (auto& t : tensors) {
      const auto bytes = reference::encode_values(t.type, t.values);
      const auto n = static_cast<int64_t>(t.values.size());
      t.values = reference::element_values(bytes.data(), t.type, n);  // float32/float16 rounding
      EXPECT_TRUE(w->add_tensor(t.name, tensor_view{bytes.data(), t.type, t.shape, n}).ok()) << t.name;
      out.tensors[{t.name, step}] = t;
    }
    EXPECT_TRUE(w->end_step().ok());
  }
  EXPECT_TRUE(w->close(true).ok());
  return out;
}

struct collected {
  std::vector<stats::statistics_record> records;
  std::vector<stats::log_histogram> direct;  ///< compute_log_histograms on the kept values
};

collected run_cpu(const trial::catalog& trial, const plan::read_plan& plan) {
  collected out;
  pipeline::pipeline_options options;
  options.backend = stats::backend::cpu;
  auto run = pipeline::run_statistics(trial, plan, options, [&](const stats::step_statistics& step) {
    for (const auto& r : step.records) {
      out.records.push_back(r);
      out.records.back().values_data = nullptr;  // valid during the callback only
      stats::log_histogram direct;
      if (r.values_data != nullptr) {
        const stats::segment segment{0, r.num_elements, r.type};
        EXPECT_TRUE(stats::compute_log_histograms(r.values_data, {&segment, 1}, {&direct, 1},
                                                  stats::backend::cpu).ok());
      }
      out.direct.push_back(std::move(direct));
    }
  });
  EXPECT_TRUE(run) << run.error_status().to_string();
  return out;
}

TEST(log_histogram_request, CpuPipelineRecordsEqualDirectCallAndReference) {
  const uint64_t seed = 20240611;
  SCOPED_TRACE("seed " + std::to_string(seed));
  const generated_trial written = write_trial(seed);
  auto trial = trial::catalog::open(written.root);
  ASSERT_TRUE(trial) << trial.error_status().to_string();
  plan::read_plan plan;
  for (const trial::tensor_id id : trial->sorted_tensor_ids()) {
    stats::statistics_request request;
    request.histogram_bins = 64;
    request.keep_values = true;  // to call compute_log_histograms on the very same bytes
    request.log_histogram = trial->tensor_names()[id] != "not_requested";
    plan.request(id, request);
  }
  const collected got = run_cpu(*trial, plan);
  ASSERT_EQ(got.records.size(), written.tensors.size());
  int64_t nonfinite_seen = 0, beyond_seen = 0, binned_seen = 0;
  for (std::size_t i = 0; i < got.records.size(); ++i) {
    const stats::statistics_record& r = got.records[i];
    const std::string name(trial->tensor_names()[r.tensor]);
    const std::string what = name + " step " + std::to_string(r.step);
    ASSERT_TRUE(r.raw_status.ok()) << what << ": " << r.raw_status.to_string();
    ASSERT_TRUE(r.histogram.has_value()) << what;  // the [min, max] histogram is unaffected
    if (name == "not_requested") {
      EXPECT_FALSE(r.log_histogram.has_value()) << what;
      continue;
    }
    ASSERT_TRUE(r.log_histogram.has_value()) << what;
    const written_tensor& t = written.tensors.at({name, r.step});
    ASSERT_EQ(r.num_elements, static_cast<int64_t>(t.values.size())) << what;
    expect_same(*r.log_histogram, got.direct[i], what + " vs compute_log_histograms");
    const stats::log_histogram want = reference_log_histogram(t.values);
    expect_same(*r.log_histogram, want, what + " vs reference");
    EXPECT_EQ(total_of(*r.log_histogram), r.num_elements) << what;
    ASSERT_TRUE(r.moments.has_value());
    EXPECT_EQ(r.log_histogram->nan_count, r.moments->nan_count) << what;
    EXPECT_EQ(r.log_histogram->pos_inf_count, r.moments->pos_inf_count) << what;
    EXPECT_EQ(r.log_histogram->neg_inf_count, r.moments->neg_inf_count) << what;
    nonfinite_seen += want.nan_count + want.pos_inf_count + want.neg_inf_count;
    beyond_seen += want.below_count + want.above_count;
    binned_seen += want.binned_count();
  }
  // The data really exercised the counts beside the bins (not an all-zero pass).
  EXPECT_GT(nonfinite_seen, 0);
  EXPECT_GT(beyond_seen, 0);
  EXPECT_GT(binned_seen, 10000);

  // Hand-checked cells of the float64 tensor at step 0 (its first 21 values are fixed).
  for (const auto& r : got.records) {
    if (trial->tensor_names()[r.tensor] != "w_f64" || r.step != 0) continue;
    const auto& h = *r.log_histogram;
    const auto edges = stats::log_histogram_edges();
    EXPECT_EQ(edges[774], 0.0);
    EXPECT_GE(h.counts[774], 3);   // 0, −0.0, 1e-13 in [0, 1e-12)
    EXPECT_GE(h.counts[773], 1);   // −1e-13 in [−1e-12, 0)
    EXPECT_GE(h.counts[1547], 1);  // edge[1548] itself: the last bin is closed
    EXPECT_GE(h.counts[0], 1);     // edge[0] itself
    EXPECT_GE(h.nan_count, 2);
    EXPECT_GE(h.pos_inf_count, 1);
    EXPECT_GE(h.neg_inf_count, 1);
    EXPECT_GE(h.above_count, 2);   // 1e30, 1e20
    EXPECT_GE(h.below_count, 1);   // −1e30
  }
}

// ---- JSON writer -----------------------------------------------------------------------------

std::string write_json(const trial::catalog& trial, const std::vector<stats::statistics_record>& records,
                       report::output_format format = report::output_format::json) {
  std::FILE* out = std::tmpfile();
  EXPECT_NE(out, nullptr);
  if (out == nullptr) return {};
  auto writer = report::statistics_writer::create(format, out);
  stats::step_statistics step;
  step.records = records;
  writer->write_step(trial, step);
  writer->finish();
  std::string text;
  std::rewind(out);
  char chunk[4096];
  std::size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof(chunk), out)) > 0) text.append(chunk, got);
  std::fclose(out);
  return text;
}

TEST(log_histogram_request, JsonWriterEmitsSparseObjectThatParsesBack) {
  const generated_trial written = write_trial(77);
  auto trial = trial::catalog::open(written.root);
  ASSERT_TRUE(trial) << trial.error_status().to_string();
  plan::read_plan plan;
  for (const trial::tensor_id id : trial->sorted_tensor_ids()) {
    stats::statistics_request request;
    request.log_histogram = trial->tensor_names()[id] != "not_requested";
    plan.request(id, request);
  }
  const collected got = run_cpu(*trial, plan);
  ASSERT_FALSE(got.records.empty());
  const std::string text = write_json(*trial, got.records);
  std::istringstream lines(text);
  std::string line;
  std::size_t i = 0;
  for (; std::getline(lines, line); ++i) {
    ASSERT_LT(i, got.records.size());
    const stats::statistics_record& r = got.records[i];
    const json row = json::parse(line);
    SCOPED_TRACE(row["tensor"].get<std::string>() + " step " + std::to_string(r.step));
    if (!r.log_histogram) {
      EXPECT_FALSE(row.contains("log_hist"));
      continue;
    }
    ASSERT_TRUE(row.contains("log_hist")) << line;
    const json& lh = row["log_hist"];
    EXPECT_EQ(lh.size(), 7u) << lh.dump();  // bins, nonzero and the five counts, nothing else
    EXPECT_EQ(lh["bins"].get<int>(), stats::log_histogram_bins);
    std::vector<int64_t> counts(stats::log_histogram_bins, 0);
    int64_t previous = -1;
    for (const json& pair : lh["nonzero"]) {
      ASSERT_EQ(pair.size(), 2u);
      const auto bin = pair[0].get<int64_t>();
      const auto count = pair[1].get<int64_t>();
      EXPECT_GT(bin, previous) << "ascending, no repeats";
      ASSERT_LT(bin, stats::log_histogram_bins);
      EXPECT_GT(count, 0) << "only non-empty bins";
      counts[static_cast<std::size_t>(bin)] = count;
      previous = bin;
    }
    EXPECT_EQ(counts, r.log_histogram->counts);
    EXPECT_EQ(lh["nan"].get<int64_t>(), r.log_histogram->nan_count);
    EXPECT_EQ(lh["pos_inf"].get<int64_t>(), r.log_histogram->pos_inf_count);
    EXPECT_EQ(lh["neg_inf"].get<int64_t>(), r.log_histogram->neg_inf_count);
    EXPECT_EQ(lh["below"].get<int64_t>(), r.log_histogram->below_count);
    EXPECT_EQ(lh["above"].get<int64_t>(), r.log_histogram->above_count);
    // The other keys are still there and the row is complete.
    EXPECT_EQ(row["numel"].get<int64_t>(), r.num_elements);
    EXPECT_TRUE(row.contains("hist"));
  }
  EXPECT_EQ(i, got.records.size());

  // A hand-made record: exact text (the documented shape), empty histogram too.
  stats::statistics_record r = got.records.front();
  r.moments.reset();
  r.histogram.reset();
  r.previous.clear();
  r.saved_reductions.clear();
  stats::log_histogram h;
  h.counts.assign(stats::log_histogram_bins, 0);
  h.counts[0] = 1;
  h.counts[774] = 1234567;
  h.counts[1547] = 5;
  h.nan_count = 2;
  h.pos_inf_count = 3;
  h.neg_inf_count = 4;
  h.below_count = 6;
  h.above_count = 7;
  r.log_histogram = h;
  const std::string one = write_json(*trial, {r});
  EXPECT_NE(one.find(",\"log_hist\":{\"bins\":1548,\"nonzero\":[[0,1],[774,1234567],[1547,5]],"
                     "\"nan\":2,\"pos_inf\":3,\"neg_inf\":4,\"below\":6,\"above\":7}"),
            std::string::npos)
      << one;
  r.log_histogram->counts.assign(stats::log_histogram_bins, 0);
  const std::string none = write_json(*trial, {r});
  EXPECT_NE(none.find("\"nonzero\":[],"), std::string::npos) << none;
  const json none_row = json::parse(none);  // throws (fails the test) on malformed text
  EXPECT_EQ(none_row["log_hist"]["nonzero"].size(), 0u);
  // Table and CSV do not carry it (documented: JSON only).
  EXPECT_EQ(write_json(*trial, {r}, report::output_format::csv).find("1548"), std::string::npos);
}

// ---- golden trials ---------------------------------------------------------------------------

TEST(log_histogram_request, GoldenTrialsCountsBesideBinsAndExtremes) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  const auto edges = stats::log_histogram_edges();
  for (const std::string& name : {std::string("dtypes"), std::string("exploding")}) {
    SCOPED_TRACE(name);
    auto trial = trial::catalog::open(dir / name);
    ASSERT_TRUE(trial) << trial.error_status().to_string();
    std::ifstream in(dir / (name + ".expected.json"));
    const json expected = json::parse(in);
    std::map<std::pair<std::string, int64_t>, json> want;
    for (const auto& [tensor, body] : expected["tensors"].items()) {
      for (const auto& rec : body["records"]) want[{tensor, rec["step"].get<int64_t>()}] = rec["stats"];
    }
    plan::read_plan plan;
    for (const trial::tensor_id id : trial->sorted_tensor_ids()) {
      stats::statistics_request request;
      request.log_histogram = true;
      request.keep_values = true;
      plan.request(id, request);
    }
    const collected got = run_cpu(*trial, plan);
    int64_t checked = 0, with_nonfinite = 0;
    for (std::size_t i = 0; i < got.records.size(); ++i) {
      const auto& r = got.records[i];
      if (!r.raw_status.ok()) continue;
      const std::string tensor(trial->tensor_names()[r.tensor]);
      const auto it = want.find({tensor, r.step});
      if (it == want.end()) continue;
      const json& s = it->second;
      // Records smdebug could not read (null stats) and its int8-as-uint8 bug (README
      // "Differences from smdebug") have no comparable golden values.
      if (!s.is_object() || s.value("dtype", std::string()) != dtype_name(r.type)) continue;
      SCOPED_TRACE(tensor + " step " + std::to_string(r.step));
      ASSERT_TRUE(r.log_histogram.has_value());
      const auto& h = *r.log_histogram;
      expect_same(h, got.direct[i], "vs compute_log_histograms");
      EXPECT_EQ(total_of(h), s["numel"].get<int64_t>());
      EXPECT_EQ(h.nan_count, s["nan_count"].get<int64_t>());
      EXPECT_EQ(h.pos_inf_count, s["pos_inf_count"].get<int64_t>());
      EXPECT_EQ(h.neg_inf_count, s["neg_inf_count"].get<int64_t>());
      with_nonfinite += h.nan_count + h.pos_inf_count + h.neg_inf_count > 0 ? 1 : 0;
      if (s["min"].is_number() && h.below_count == 0 && h.above_count == 0) {
        // numpy's float64 min/max land in the first / last non-empty bins.
        const double lo = s["min"].get<double>(), hi = s["max"].get<double>();
        std::size_t first = 0, last = h.counts.size() - 1;
        while (h.counts[first] == 0) ++first;
        while (h.counts[last] == 0) --last;
        EXPECT_LE(edges[first], lo);
        EXPECT_TRUE(lo < edges[first + 1] || first == h.counts.size() - 1) << lo;
        EXPECT_LE(edges[last], hi);
        EXPECT_TRUE(hi < edges[last + 1] || (last == h.counts.size() - 1 && hi == edges[last + 1])) << hi;
      }
      ++checked;
    }
    EXPECT_GT(checked, 20);
    EXPECT_GT(with_nonfinite, 0);  // both trials hold NaN/Inf
  }
}

}  // namespace
}  // namespace trialstat
