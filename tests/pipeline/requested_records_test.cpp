// SPDX-License-Identifier: Apache-2.0
// What rules need from records is requested in the read plan and delivered in the statistics
// records (issue 23 item 4): strings (statistics_request::keep_strings), wall times without any
// statistics (statistics_request::wall_time, also for entries that saved reductions only), and
// another trial's records, read by the rule session (rule::other_trial_location).
// Trials are written by trialstat's own trial writer.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/reference/reference_stats.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/stats/float64_values.hpp"
#include "trialstat/trial/catalog.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat {
namespace {

using strings = std::vector<std::string>;

void add(writer::trial_writer& w, const std::string& name, const std::vector<double>& values,
         std::optional<double> wall_time = std::nullopt) {
  const auto bytes = reference::encode_values(dtype::float32, values);
  const std::vector<int64_t> shape{static_cast<int64_t>(values.size())};
  const tensor_view view{bytes.data(), dtype::float32, shape, static_cast<int64_t>(values.size()),
                         memory_kind::host};
  const status added = w.add_tensor(name, view, wall_time);
  ASSERT_TRUE(added.ok()) << added.to_string();
}

/// Every record of the run, copied out of the step callback, by (step, tensor name).
std::map<std::pair<int64_t, std::string>, stats::statistics_record> run(
    const trial::catalog& trial, const std::map<std::string, stats::statistics_request>& wanted) {
  plan::read_plan plan;
  for (const auto& [name, request] : wanted) {
    const auto t = trial.find_tensor(name);
    EXPECT_TRUE(t.has_value()) << name;
    if (t) plan.request(*t, request);
  }
  std::map<std::pair<int64_t, std::string>, stats::statistics_record> out;
  const auto done = pipeline::run_statistics(
      trial, plan, pipeline::pipeline_options{}, [&](const stats::step_statistics& step) {
        for (const auto& r : step.records) {
          stats::statistics_record copy = r;
          copy.values_data = nullptr;  // valid during the callback only
          out.emplace(std::pair(step.step, trial.tensor_names()[r.tensor]), std::move(copy));
        }
      });
  EXPECT_TRUE(done.has_value()) << done.error_status().to_string();
  return out;
}

TEST(RequestedRecords, KeepStringsDeliversTheStringValues) {
  const auto root = testing::make_scratch_dir("requested_strings");
  auto w = writer::trial_writer::create(root, "worker_0");
  ASSERT_TRUE(w.has_value()) << w.error_status().to_string();
  ASSERT_TRUE(w->begin_step(0, mode::train, 0).ok());
  ASSERT_TRUE(w->add_strings("trees/ID", strings{"0-0", "0-1", ""}).ok());
  add(*w, "w", {1.0, 2.0});
  ASSERT_TRUE(w->end_step().ok());
  ASSERT_TRUE(w->close(true).ok());
  auto catalog = trial::catalog::open(root);
  ASSERT_TRUE(catalog.has_value()) << catalog.error_status().to_string();

  stats::statistics_request only_strings;
  only_strings.moments = false;
  only_strings.keep_strings = true;
  stats::statistics_request numeric_too = only_strings;
  numeric_too.moments = true;
  const auto records = run(*catalog, {{"trees/ID", only_strings}, {"w", numeric_too}});
  const auto& ids = records.at({0, "trees/ID"});
  EXPECT_EQ(ids.type, dtype::string);
  EXPECT_EQ(ids.strings, (strings{"0-0", "0-1", ""}));
  // A string tensor has no numeric statistics: that is said, and it is not an unreadable record.
  EXPECT_EQ(ids.raw_status.code(), error_code::unsupported_dtype);
  EXPECT_FALSE(pipeline::is_unreadable(ids.raw_status));
  EXPECT_TRUE(ids.wall_time.has_value());
  const auto& numeric = records.at({0, "w"});
  EXPECT_TRUE(numeric.raw_status.ok()) << numeric.raw_status.to_string();
  EXPECT_TRUE(numeric.strings.empty());
  ASSERT_TRUE(numeric.moments.has_value());
  EXPECT_EQ(numeric.moments->count, 2);
  // Not requested: no strings.
  stats::statistics_request plain;
  EXPECT_TRUE(run(*catalog, {{"trees/ID", plain}}).at({0, "trees/ID"}).strings.empty());
}

TEST(RequestedRecords, WallTimeWithoutStatisticsAlsoForReductionsOnly) {
  const auto root = testing::make_scratch_dir("requested_wall_time");
  auto w = writer::trial_writer::create(root, "worker_0");
  ASSERT_TRUE(w.has_value()) << w.error_status().to_string();
  for (int64_t s = 0; s < 2; ++s) {
    ASSERT_TRUE(w->begin_step(s, mode::train, s).ok());
    add(*w, "loss", {0.5}, 1000.5 + static_cast<double>(s));
    // "g" saves reductions only (no raw record): its wall time comes from the first one.
    ASSERT_TRUE(w->add_reduction("g", "l2", false, 2.0f, 2000.25 + static_cast<double>(s)).ok());
    ASSERT_TRUE(w->add_reduction("g", "max", true, 3.0f, 3000.0).ok());
    ASSERT_TRUE(w->end_step().ok());
  }
  ASSERT_TRUE(w->close(true).ok());
  auto catalog = trial::catalog::open(root);
  ASSERT_TRUE(catalog.has_value()) << catalog.error_status().to_string();

  stats::statistics_request wall_time_only;
  wall_time_only.moments = false;
  wall_time_only.wall_time = true;
  ASSERT_FALSE(wall_time_only.needs_raw());
  const auto records = run(*catalog, {{"loss", wall_time_only}, {"g", wall_time_only}});
  for (int64_t s = 0; s < 2; ++s) {
    const auto& loss = records.at({s, "loss"});
    EXPECT_EQ(loss.wall_time, 1000.5 + static_cast<double>(s));
    EXPECT_TRUE(loss.raw_status.ok()) << loss.raw_status.to_string();
    EXPECT_FALSE(loss.moments.has_value());  // no statistics were asked for
    const auto& g = records.at({s, "g"});
    EXPECT_EQ(g.wall_time, 2000.25 + static_cast<double>(s));
    EXPECT_TRUE(g.saved_reductions.empty());
    EXPECT_TRUE(g.reduction_problems.empty());
  }
  // Without the request the wall time of a record read for nothing is absent.
  stats::statistics_request nothing;
  nothing.moments = false;
  EXPECT_FALSE(run(*catalog, {{"loss", nothing}}).at({0, "loss"}).wall_time.has_value());
}

/// A rule that records what the session delivers from its other trial.
class other_trial_probe final : public rules::rule {
 public:
  explicit other_trial_probe(std::string location) : location_(std::move(location)) {}
  std::string_view name() const override { return "OtherTrialProbe"; }
  std::string other_trial_location() const override { return location_; }
  status prepare_other_trial(const trial::catalog& /*trial*/, const trial::catalog& other,
                             plan::read_plan& other_plan) override {
    stats::statistics_request request;
    request.keep_values = true;
    if (const auto t = other.find_tensor("w")) other_plan.request(*t, request);
    return status::success();
  }
  status prepare(const trial::catalog& /*trial*/, plan::read_plan& /*plan*/) override {
    return status::success();
  }
  void evaluate_other_step(const trial::catalog& other, const stats::step_statistics& step) override {
    for (const auto& r : step.records) {
      std::vector<double> v;
      ASSERT_TRUE(stats::append_as_float64(r.values(), v).ok());
      delivered_[step.step] = {other.tensor_names()[r.tensor], v};
    }
    pending_ = step.step;
  }
  void evaluate_step(const trial::catalog& /*trial*/, const stats::step_statistics& step,
                     std::vector<rules::finding>& /*findings*/) override {
    // Delivered just before the evaluation of the same step, or not at all.
    if (pending_) {
      EXPECT_EQ(*pending_, step.step);
    }
    pending_.reset();
    evaluated_.push_back(step.step);
  }
  std::map<int64_t, std::pair<std::string, std::vector<double>>> delivered_;
  std::vector<int64_t> evaluated_;

 private:
  std::string location_;
  std::optional<int64_t> pending_;
};

TEST(RequestedRecords, TheSessionReadsTheOtherTrialForTheRule) {
  const auto write = [](const std::string& label, std::vector<int64_t> steps, double offset) {
    const auto root = testing::make_scratch_dir(label);
    auto w = writer::trial_writer::create(root, "worker_0");
    EXPECT_TRUE(w.has_value());
    for (const int64_t s : steps) {
      EXPECT_TRUE(w->begin_step(s, mode::train, s).ok());
      add(*w, "w", {static_cast<double>(s) + offset, 1.0});
      EXPECT_TRUE(w->end_step().ok());
    }
    EXPECT_TRUE(w->close(true).ok());
    return root;
  };
  const auto base = write("requested_base", {0, 1, 2, 3}, 0.0);
  const auto other = write("requested_other", {0, 2, 3, 5}, 0.5);  // no step 1; a step 5
  auto catalog = trial::catalog::open(base);
  ASSERT_TRUE(catalog.has_value());
  std::vector<pipeline::rule_invocation> invocations(2);
  invocations[0].rule = std::make_unique<other_trial_probe>(other.string());
  invocations[1].rule = std::make_unique<other_trial_probe>("/no/such/trial");
  auto results = pipeline::evaluate_rules(*catalog, invocations, pipeline::pipeline_options{});
  ASSERT_TRUE(results.has_value()) << results.error_status().to_string();
  EXPECT_EQ((*results)[0].status, rules::rule_status::no_issues_found) << (*results)[0].status_details;
  const auto& probe = static_cast<const other_trial_probe&>(*invocations[0].rule);
  EXPECT_EQ(probe.evaluated_, (std::vector<int64_t>{0, 1, 2, 3}));
  ASSERT_EQ(probe.delivered_.size(), 3u);  // steps 0, 2, 3: the other trial's step 5 is not read
  EXPECT_EQ(probe.delivered_.at(2), (std::pair<std::string, std::vector<double>>{"w", {2.5, 1.0}}));
  EXPECT_EQ(probe.delivered_.at(3).second, (std::vector<double>{3.5, 1.0}));
  // An other trial that cannot be opened is that rule's Error, naming it.
  EXPECT_EQ((*results)[1].status, rules::rule_status::error);
  EXPECT_NE((*results)[1].status_details.find("cannot open other_trials '/no/such/trial'"),
            std::string::npos)
      << (*results)[1].status_details;
}

}  // namespace
}  // namespace trialstat
