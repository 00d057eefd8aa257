// SPDX-License-Identifier: Apache-2.0
// Test harness for rules: tiny trial folders on disk (collections + index JSON only; the catalog
// needs no event files to list tensors and steps), naive long-double references for the
// statistics records, and a reference "pipeline" that feeds a rule the records its read plan
// asks for, step by step, from values the test supplies.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tests/reference/reference_rule_stats.hpp"
#include "tests/reference/reference_stats.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/plan/read_plan.hpp"
#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::rule_testing {

// ---- trial folders ---------------------------------------------------------------------------

/// One tensor saved at a step: its raw value (when `raw`) and saved reductions such as
/// "abs_mean", "variance" (record names `smdebug/reductions/<r>/<tensor>`).
struct saved_tensor {
  std::string name;
  bool raw = true;
  std::vector<std::string> reductions = {};
};

/// Writes `collections/000000000/<worker>_collections.json` and one
/// `index/<B9>/<S12>_<worker>.json` per (step, worker); no event files.
class trial_folder {
 public:
  explicit trial_folder(const std::string& label) : root_(testing::make_scratch_dir(label)) {}

  /// A collection with explicit tensor names and include regexes.
  trial_folder& collection(const std::string& name, std::vector<std::string> tensor_names,
                           std::vector<std::string> include_regex = {}) {
    nlohmann::json c;
    c["name"] = name;
    c["include_regex"] = include_regex;
    c["tensor_names"] = tensor_names;
    c["reduction_config"] = {{"save_raw_tensor", true}, {"reductions", ""}, {"save_shape", false}};
    collections_[name] = c;
    return *this;
  }

  /// A saved step for `worker`.
  trial_folder& step(int64_t global_step, trialstat::mode m, int64_t mode_step,
                     const std::vector<saved_tensor>& tensors,
                     const std::string& worker = "worker_0") {
    const std::string s12 = fmt::format("{:012d}", global_step);
    const std::string event_file = fmt::format("events/{}/{}_{}.tfevents", s12, s12, worker);
    nlohmann::json payload = nlohmann::json::array();
    uint64_t offset = 0;
    const auto add = [&](const std::string& tag) {
      payload.push_back({{"tensorname", tag}, {"start_idx", offset}, {"length", 100}});
      offset += 100;
    };
    for (const saved_tensor& t : tensors) {
      if (t.raw) add(t.name);
      for (const std::string& r : t.reductions) add(fmt::format("smdebug/reductions/{}/{}", r, t.name));
    }
    nlohmann::json index;
    index["meta"] = {{"mode", std::string(mode_name(m))}, {"mode_step", mode_step},
                     {"event_file_name", event_file}};
    index["tensor_payload"] = payload;
    index["shape_payload"] = nlohmann::json::array();
    const auto dir = root_ / "index" / fmt::format("{:09d}", global_step / 1000);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / fmt::format("{}_{}.json", s12, worker)) << index.dump();
    workers_[worker] = true;
    return *this;
  }

  /// Write the collections file(s) and open the catalog.
  trial::catalog open() {
    nlohmann::json doc;
    doc["collections"] = collections_.empty() ? nlohmann::json::object() : collections_;
    doc["_meta"] = {{"num_workers", static_cast<int>(workers_.empty() ? 1 : workers_.size())}};
    const auto dir = root_ / "collections" / "000000000";
    std::filesystem::create_directories(dir);
    const std::string first = workers_.empty() ? "worker_0" : workers_.begin()->first;
    std::ofstream(dir / fmt::format("{}_collections.json", first)) << doc.dump();
    auto c = trial::catalog::open(root_);
    EXPECT_TRUE(c.has_value()) << c.error_status().to_string();
    return std::move(c).value();
  }

  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
  nlohmann::json collections_ = nlohmann::json::object();
  std::map<std::string, bool> workers_;
};

// ---- naive references ------------------------------------------------------------------------

struct tensor_value {
  std::vector<int64_t> shape;
  std::vector<double> data;
};

/// Moments of `x` in long double, with the definitions of stats/moments.hpp.
inline stats::moments reference_moments(const std::vector<double>& x) {
  stats::moments m;
  long double sum = 0, sum_abs = 0, sum_sq = 0;
  int64_t finite = 0;
  for (const double v : x) {
    ++m.count;
    if (std::isnan(v)) { ++m.nan_count; continue; }
    if (std::isinf(v)) { (v > 0 ? m.pos_inf_count : m.neg_inf_count)++; continue; }
    if (v == 0) ++m.zero_count;
    if (v > 0) ++m.positive_count;
    if (v < 0) ++m.negative_count;
    m.min = std::min(m.min, v);
    m.max = std::max(m.max, v);
    m.max_abs = std::max(m.max_abs, std::fabs(v));
    sum += v;
    sum_abs += std::fabs(v);
    sum_sq += static_cast<long double>(v) * v;
    ++finite;
  }
  m.sum = static_cast<double>(sum);
  m.sum_abs = static_cast<double>(sum_abs);
  m.sum_squares = static_cast<double>(sum_sq);
  const long double mean = finite > 0 ? sum / finite : 0;
  long double m2 = 0;
  for (const double v : x) {
    if (std::isfinite(v)) m2 += (v - mean) * (v - mean);
  }
  m.mean = static_cast<double>(mean);
  m.m2 = static_cast<double>(m2);
  return m;
}

/// numpy.isclose(a, b) with b the current value.
inline bool reference_isclose(double a, double b, const stats::allclose_params& p) {
  if (std::isnan(a) || std::isnan(b)) return p.equal_nan && std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= p.atol + p.rtol * std::fabs(b);
}

inline stats::pairwise reference_pairwise(const std::vector<double>& a, const std::vector<double>& b,
                                          const stats::allclose_params& p) {
  stats::pairwise r;
  long double diff_sq = 0, prev_sq = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ++r.count;
    const long double d = static_cast<long double>(b[i]) - a[i];
    diff_sq += d * d;
    prev_sq += static_cast<long double>(a[i]) * a[i];
    if (!std::isnan(static_cast<double>(d))) r.diff_max_abs = std::max(r.diff_max_abs, static_cast<double>(std::fabs(d)));
    if (!reference_isclose(a[i], b[i], p)) ++r.allclose_violations;
  }
  r.diff_sum_squares = static_cast<double>(diff_sq);
  r.previous_sum_squares = static_cast<double>(prev_sq);
  return r;
}

inline stats::axis0_counts reference_axis0(const tensor_value& v, const stats::axis0_predicate& p) {
  stats::axis0_counts c;
  const auto n = static_cast<int64_t>(v.data.size());
  c.batch = v.shape.size() >= 2 ? v.shape[0] : 1;
  const int64_t nodes = c.batch > 0 ? n / c.batch : 0;
  c.per_node.assign(static_cast<std::size_t>(nodes), 0);
  for (int64_t i = 0; i < c.batch; ++i) {
    for (int64_t j = 0; j < nodes; ++j) {
      const double x = v.data[static_cast<std::size_t>(i * nodes + j)];
      const bool hit = p.what == stats::axis0_predicate::kind::positive ? x > 0 : (p.lo < x && x < p.hi);
      if (hit) ++c.per_node[static_cast<std::size_t>(j)];
    }
  }
  return c;
}

/// A saved reduction's value with numpy definitions (name like "abs_mean", "variance").
inline double reference_reduction(const std::string& name, const std::vector<double>& x) {
  const bool abs = name.rfind("abs_", 0) == 0;
  const std::string op = abs ? name.substr(4) : name;
  std::vector<long double> v;
  for (const double d : x) v.push_back(abs ? std::fabs(static_cast<long double>(d)) : d);
  long double sum = 0, sq = 0, mn = std::numeric_limits<double>::infinity(),
              mx = -std::numeric_limits<double>::infinity();
  for (const auto d : v) {
    sum += d;
    sq += d * d;
    mn = std::isnan(static_cast<double>(d)) ? d : std::min(mn, d);
    mx = std::isnan(static_cast<double>(d)) ? d : std::max(mx, d);
  }
  const long double n = static_cast<long double>(v.size());
  const long double mean = sum / n;
  long double m2 = 0;
  for (const auto d : v) m2 += (d - mean) * (d - mean);
  if (op == "mean") return static_cast<double>(mean);
  if (op == "sum") return static_cast<double>(sum);
  if (op == "min") return static_cast<double>(mn);
  if (op == "max") return static_cast<double>(mx);
  if (op == "variance") return static_cast<double>(m2 / n);
  if (op == "std") return static_cast<double>(std::sqrt(m2 / n));
  if (op == "l2") return static_cast<double>(std::sqrt(sq));
  if (op == "l1") {
    long double s = 0;
    for (const auto d : v) s += std::fabs(d);
    return static_cast<double>(s);
  }
  ADD_FAILURE() << "unknown reduction " << name;
  return std::numeric_limits<double>::quiet_NaN();
}

// ---- reference pipeline ----------------------------------------------------------------------

/// The value of (tensor, global step, worker), or nullopt to make the raw record unusable
/// (as a corrupt record would be).
using value_source =
    std::function<std::optional<tensor_value>(std::string_view tensor, int64_t step,
                                              std::string_view worker)>;

struct run_result {
  status prepared;
  plan::read_plan plan;
  std::vector<trialstat::rules::finding> findings;
};

/// How `run_rule` drives the rule.
struct run_options {
  bool tell_plan = true;                 ///< call plan_ready with the merged plan
  std::optional<int64_t> step_begin;     ///< skip global steps before this (invoke_rule start)
  /// Requests of other rules merged into the plan (tensor name → request).
  std::vector<std::pair<std::string, stats::statistics_request>> others = {};
  /// Saved reduction values; unset: computed from the tensor's value with numpy definitions.
  std::function<std::optional<double>(const trial::tensor_entry&, const trial::saved_reduction&)>
      reductions = {};
};

/// Per-channel sums of `v` along `axis` (Python-style) from the long-double reference; nullopt
/// when the axis is not valid for the value's rank.
inline std::optional<stats::channel_sums> reference_channel_sums(const tensor_value& v, int64_t axis) {
  const auto rank = static_cast<int64_t>(v.shape.size());
  if (rank == 0 || axis < -rank || axis >= rank) return std::nullopt;
  const int64_t a = axis < 0 ? axis + rank : axis;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < a; ++d) outer *= v.shape[static_cast<std::size_t>(d)];
  for (int64_t d = a + 1; d < rank; ++d) inner *= v.shape[static_cast<std::size_t>(d)];
  const int64_t channels = v.shape[static_cast<std::size_t>(a)];
  const auto ref = reference::channel_sums_ref(v.data, outer, channels, inner);
  stats::channel_sums c;
  c.axis = a;
  for (std::size_t i = 0; i < static_cast<std::size_t>(channels); ++i) c.sum.push_back(static_cast<double>(ref.sum[i]));
  c.count = ref.count;
  c.nan_count = ref.nan_count;
  c.pos_inf_count = ref.pos_inf_count;
  c.neg_inf_count = ref.neg_inf_count;
  return c;
}

/// prepare → (plan_ready) → evaluate_step for every saved global step → finish, with records
/// computed by the naive references above from `values`, honouring the plan: moments (+ scalar)
/// when the raw value is needed, axis-0 counts per predicate, pairwise comparisons against the
/// last `history_depth` raw saves of the same (tensor, worker), newest first, one allclose count
/// per parameter set, saved reductions listed in the index, percentiles (numpy reference),
/// equality counts, channel sums per requested axis, and kept values (float64 bytes alive
/// during the step's evaluate_step).
inline run_result run_rule(trialstat::rules::rule& rule, const trial::catalog& trial, const value_source& values,
                           const run_options& options = {}) {
  run_result out;
  out.prepared = rule.prepare(trial, out.plan);
  if (!out.prepared.ok()) return out;
  // Merge through a second plan, as the pipeline does with several rules.
  plan::read_plan merged;
  for (const auto& [name, request] : options.others) {
    const auto t = trial.find_tensor(name);
    EXPECT_TRUE(t.has_value()) << name;
    if (t) merged.request(*t, request);
  }
  for (const auto& [t, request] : out.plan.requests()) merged.request(t, request);
  if (options.tell_plan) rule.plan_ready(merged);

  struct kept {
    int64_t step;
    tensor_value value;
  };
  std::map<std::pair<trial::tensor_id, trial::worker_id>, std::deque<kept>> history;
  const stats::allclose_params default_params{};
  std::vector<stats::statistics_record> records;
  std::deque<std::vector<std::byte>> kept_bytes;  // stable addresses for values_data
  for (const trial::step_info& info : trial.step_infos()) {
    if (options.step_begin && info.step < *options.step_begin) continue;
    records.clear();
    kept_bytes.clear();
    for (const trial::tensor_entry& entry : trial.entries_at(info.step)) {
      const stats::statistics_request* request = merged.find(entry.tensor);
      if (request == nullptr) continue;
      const std::string& name = trial.tensor_names()[entry.tensor];
      const std::string& worker = trial.workers()[entry.worker];
      stats::statistics_record& r = records.emplace_back();
      r.tensor = entry.tensor;
      r.worker = entry.worker;
      r.step = info.step;
      r.mode = info.mode;
      r.mode_step = info.mode_step;
      const auto value = values(name, info.step, worker);
      if (request->saved_reductions) {
        for (const auto& red : entry.reductions) {
          std::optional<double> saved;
          if (options.reductions) {
            saved = options.reductions(entry, red);
          } else if (value) {
            const std::string red_name =
                std::string(red.abs ? "abs_" : "") + std::string(trial::reduction_name(red.op));
            saved = reference_reduction(red_name, value->data);
          }
          if (saved) r.saved_reductions.push_back({red.op, red.abs, *saved, dtype::float32});
        }
      }
      if (!request->needs_raw()) continue;
      if (!entry.raw || !value) {
        r.raw_status = status(error_code::not_found, "no raw value");
        continue;
      }
      r.type = dtype::float64;
      r.shape = value->shape;
      r.num_elements = static_cast<int64_t>(value->data.size());
      r.moments = reference_moments(value->data);
      if (r.num_elements == 1) r.scalar = value->data[0];
      for (const auto& p : request->axis0) r.axis0.push_back(reference_axis0(*value, p));
      for (const double q : request->percentiles) {
        r.percentiles.push_back({q, reference::percentile_numpy(value->data, q)});
      }
      const auto equal = reference::count_equal_ref(value->data, request->equal_values);
      for (std::size_t i = 0; i < equal.size(); ++i) {
        r.equal_counts.push_back({request->equal_values[i], equal[i]});
      }
      for (const int64_t axis : request->channel_axes) {
        auto sums = reference_channel_sums(*value, axis);
        if (sums && r.channel_sums_along(sums->axis) == nullptr) r.channel_sums.push_back(std::move(*sums));
      }
      if (request->keep_values) {
        kept_bytes.push_back(reference::encode_values(dtype::float64, value->data));
        r.values_data = kept_bytes.back().data();
      }
      if (request->history_depth > 0) {
        auto& kept_values = history[{entry.tensor, entry.worker}];
        for (auto it = kept_values.rbegin(); it != kept_values.rend(); ++it) {
          stats::previous_comparison c;
          c.previous_step = it->step;
          c.shape_matches = it->value.shape == value->shape;
          if (c.shape_matches) {
            const auto& first = request->allclose.empty() ? default_params : request->allclose[0];
            c.result = reference_pairwise(it->value.data, value->data, first);
            for (const auto& p : request->allclose) {
              c.allclose_violations.push_back(
                  reference_pairwise(it->value.data, value->data, p).allclose_violations);
            }
            if (request->allclose.empty()) c.allclose_violations.push_back(c.result.allclose_violations);
          }
          r.previous.push_back(std::move(c));
        }
        kept_values.push_back({info.step, *value});
        while (static_cast<int>(kept_values.size()) > request->history_depth) kept_values.pop_front();
      }
    }
    rule.evaluate_step(trial, stats::step_statistics{info.step, info.mode, info.mode_step, records},
                       out.findings);
  }
  rule.finish(trial, out.findings);
  return out;
}

/// A constant tensor of `n` elements (shape [n]).
inline tensor_value filled(std::size_t n, double v) { return {{static_cast<int64_t>(n)}, std::vector<double>(n, v)}; }

/// (step, tensor) pairs of findings, for compact assertions.
inline std::vector<std::pair<int64_t, std::string>> where(const std::vector<trialstat::rules::finding>& f) {
  std::vector<std::pair<int64_t, std::string>> out;
  for (const auto& x : f) out.emplace_back(x.step, x.tensor);
  return out;
}

}  // namespace trialstat::rule_testing

namespace trialstat::rule_testing {

/// make_rule, failing the test on error.
inline std::unique_ptr<trialstat::rules::rule> make(std::string_view name,
                                                    const trialstat::rules::rule_parameters& p = {}) {
  auto r = trialstat::rules::make_rule(name, p);
  EXPECT_TRUE(r.has_value()) << r.error_status().to_string();
  return r.has_value() ? std::move(*r) : nullptr;
}

}  // namespace trialstat::rule_testing
