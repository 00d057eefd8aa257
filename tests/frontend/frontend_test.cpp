// SPDX-License-Identifier: Apache-2.0
// The glue the CLI, the C API and Python share (host/frontend): device options, rules from
// names, the statistics plan's update-ratio selection, statistics rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/shared_trials.hpp"
#include "trialstat/frontend/device_options.hpp"
#include "trialstat/frontend/open_catalog.hpp"
#include "trialstat/frontend/rule_invocations.hpp"
#include "trialstat/frontend/statistics_row.hpp"
#include "trialstat/report/statistics_writer.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat {
namespace {

// ---- device options ----------------------------------------------------------------------

TEST(DeviceOptions, BadDeviceIsNamedInTheError) {
  const auto resolved = frontend::resolve_device("gpu");
  ASSERT_FALSE(resolved);
  EXPECT_EQ(resolved.error_status().code(), error_code::invalid_argument);
  EXPECT_NE(resolved.error_status().message().find("'gpu'"), std::string::npos)
      << resolved.error_status().to_string();

  const auto options = frontend::make_pipeline_options(frontend::device_options{"CPU", 64});
  ASSERT_FALSE(options);
  EXPECT_NE(options.error_status().message().find("'CPU'"), std::string::npos);
}

TEST(DeviceOptions, CpuWithStagingSize) {
  const auto options = frontend::make_pipeline_options(frontend::device_options{"cpu", 64});
  ASSERT_TRUE(options) << options.error_status().to_string();
  EXPECT_EQ(options->backend, stats::backend::cpu);
  EXPECT_EQ(options->pinned_pool_bytes, std::size_t{64} << 20);
  EXPECT_FALSE(options->step_begin.has_value());
  EXPECT_FALSE(options->strict);

  const auto defaults = frontend::make_pipeline_options("cpu");
  ASSERT_TRUE(defaults);
  EXPECT_EQ(frontend::default_pinned_mb, 256);
  EXPECT_EQ(defaults->pinned_pool_bytes, std::size_t{256} << 20);

  const auto resolved = frontend::resolve_device("cpu");
  ASSERT_TRUE(resolved);
  EXPECT_EQ(resolved->backend, stats::backend::cpu);
  EXPECT_FALSE(resolved->reason.empty());
}

TEST(DeviceOptions, StagingSizeOutOfRange) {
  for (const int64_t mb : {int64_t{0}, int64_t{-5}, frontend::max_pinned_mb + 1}) {
    const auto options = frontend::make_pipeline_options(frontend::device_options{"cpu", mb});
    ASSERT_FALSE(options) << mb;
    EXPECT_EQ(options.error_status().code(), error_code::invalid_argument);
    EXPECT_EQ(options.error_status().message(), "--pinned-mb must be in [1, 1048576]");
  }
  EXPECT_TRUE(frontend::make_pipeline_options(frontend::device_options{"cpu", 1}));
  EXPECT_TRUE(frontend::make_pipeline_options(frontend::device_options{"cpu", frontend::max_pinned_mb}));
}

// ---- rules ---------------------------------------------------------------------------------

// --verify-device, and TRIALSTAT_VERIFY_DEVICE as the default of every front end.
TEST(DeviceOptions, VerifyDeviceFromTheFlagOrTheEnvironment) {
  ::unsetenv("TRIALSTAT_VERIFY_DEVICE");
  EXPECT_EQ(frontend::make_pipeline_options("cpu")->verify_device, trialstat::pipeline::device_verification::sampled);
  frontend::device_options o;
  o.device = "cpu";
  o.verify_device = "first";
  EXPECT_EQ(frontend::make_pipeline_options(o)->verify_device, trialstat::pipeline::device_verification::first);
  o.verify_device = "never";
  auto bad = frontend::make_pipeline_options(o);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error_status().message().find("never"), std::string::npos);
  ::setenv("TRIALSTAT_VERIFY_DEVICE", "off", 1);
  EXPECT_EQ(frontend::make_pipeline_options("cpu")->verify_device, trialstat::pipeline::device_verification::off);
  o.verify_device = "sampled";  // the flag wins
  EXPECT_EQ(frontend::make_pipeline_options(o)->verify_device, trialstat::pipeline::device_verification::sampled);
  ::setenv("TRIALSTAT_VERIFY_DEVICE", "sometimes", 1);
  auto from_env = frontend::make_pipeline_options("cpu");
  ASSERT_FALSE(from_env.has_value());
  EXPECT_NE(from_env.error_status().message().find("TRIALSTAT_VERIFY_DEVICE"), std::string::npos);
  ::unsetenv("TRIALSTAT_VERIFY_DEVICE");
}

TEST(RuleInvocations, DefaultRuleList) {
  // What `trialstat rules --help` and Python `default_rules()` print.
  const auto names = frontend::default_rule_names();
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.end()),
            (std::vector<std::string>{"VanishingGradient", "ExplodingTensor", "WeightUpdateRatio",
                                      "LossNotDecreasing", "DeadRelu"}));
  const auto configs = frontend::default_rule_configs();
  ASSERT_EQ(configs.size(), names.size());
  const auto invocations = frontend::make_rule_invocations(configs);
  for (std::size_t i = 0; i < invocations.size(); ++i) {
    EXPECT_EQ(configs[i].configuration_name, names[i]);
    EXPECT_TRUE(configs[i].parameters.empty());
    EXPECT_TRUE(configs[i].actions.empty());
    EXPECT_EQ(invocations[i].configuration_name, names[i]);
    ASSERT_NE(invocations[i].rule, nullptr) << names[i] << ": " << invocations[i].error.to_string();
    EXPECT_EQ(invocations[i].rule->name(), names[i]);
  }
}

TEST(RuleInvocations, ConfigurationNameDefaultsToTheRule) {
  const auto named = frontend::make_rule_invocation("mine", "ExplodingTensor", {});
  EXPECT_EQ(named.configuration_name, "mine");
  ASSERT_NE(named.rule, nullptr);
  const auto unnamed = frontend::make_rule_invocation("", "ExplodingTensor", {});
  EXPECT_EQ(unnamed.configuration_name, "ExplodingTensor");
  ASSERT_NE(unnamed.rule, nullptr);
}

TEST(RuleInvocations, FailureIsKeptInTheInvocation) {
  const auto unknown = frontend::make_rule_invocation("", "NoSuchRule", {});
  EXPECT_EQ(unknown.configuration_name, "NoSuchRule");
  EXPECT_EQ(unknown.rule, nullptr);
  EXPECT_FALSE(unknown.error.ok());
  EXPECT_NE(unknown.error.message().find("NoSuchRule"), std::string::npos) << unknown.error.to_string();

  const auto bad = frontend::make_rule_invocation("v", "VanishingGradient", {{"threshold", "abc"}});
  EXPECT_EQ(bad.rule, nullptr);
  EXPECT_EQ(bad.error.code(), error_code::invalid_argument);
  EXPECT_NE(bad.error.message().find("threshold"), std::string::npos) << bad.error.to_string();
}

// ---- statistics rows ------------------------------------------------------------------------

/// A record of the values {-2, 0, 3, NaN}, compared with a previous step whose l2 is 4 and
/// whose difference has l2 3: update ratio 3 / (4 + 1e-9) ≈ 0.75.
stats::statistics_record known_record() {
  stats::statistics_record r;
  stats::moments m;
  m.count = 4;
  m.nan_count = 1;
  m.zero_count = 1;
  m.min = -2;
  m.max = 3;
  m.sum = 1;
  m.sum_abs = 5;
  m.sum_squares = 13;
  m.max_abs = 3;
  m.mean = 1.0 / 3.0;
  m.m2 = 114.0 / 9.0;  // (−7/3)² + (−1/3)² + (8/3)²
  r.moments = m;
  stats::previous_comparison p;
  p.previous_step = 7;
  p.result.count = 3;
  p.result.diff_sum_squares = 9;      // ‖W_s − W_p‖₂ = 3
  p.result.previous_sum_squares = 16; // ‖W_p‖₂ = 4
  r.previous.push_back(p);
  return r;
}

TEST(StatisticsRow, UpdateRatioOfKnownNorms) {
  const auto row = frontend::make_statistics_row(known_record());
  ASSERT_TRUE(row.has_raw);
  EXPECT_NEAR(row.update_ratio, 0.75, 1e-9);
  EXPECT_EQ(row.update_ratio, 3.0 / (4.0 + report::update_ratio_epsilon));
  EXPECT_EQ(row.prev_step, 7);
  EXPECT_EQ(row.nan_count, 1);
  EXPECT_EQ(row.zero_count, 1);
  EXPECT_EQ(row.min, -2);
  EXPECT_EQ(row.max, 3);
  EXPECT_EQ(row.sum, 1);
  EXPECT_EQ(row.l1, 5);
  EXPECT_EQ(row.l2, std::sqrt(13.0));
  EXPECT_EQ(row.linf, 3);
  EXPECT_DOUBLE_EQ(row.mean_abs, 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(row.variance, 38.0 / 9.0);
  EXPECT_DOUBLE_EQ(row.std_dev, std::sqrt(38.0 / 9.0));
}

TEST(StatisticsRow, ZeroPreviousNormAndShapeChange) {
  auto r = known_record();
  r.previous.front().result.previous_sum_squares = 0;  // W_p = 0: 3 / 1e-9
  EXPECT_NEAR(frontend::make_statistics_row(r).update_ratio, 3e9, 1e-3);
  r.previous.front().shape_matches = false;
  const auto row = frontend::make_statistics_row(r);
  EXPECT_TRUE(std::isnan(row.update_ratio));
  EXPECT_EQ(row.prev_step, -1);
  r.previous.clear();
  EXPECT_TRUE(std::isnan(frontend::make_statistics_row(r).update_ratio));
}

TEST(StatisticsRow, NoRawValue) {
  auto r = known_record();
  r.raw_status = status(error_code::data_loss, "corrupt");
  const auto row = frontend::make_statistics_row(r);
  EXPECT_FALSE(row.has_raw);
  EXPECT_EQ(row.nan_count, -1);
  EXPECT_EQ(row.zero_count, -1);
  EXPECT_TRUE(std::isnan(row.min));
  EXPECT_TRUE(std::isnan(row.mean_abs));
  EXPECT_TRUE(std::isnan(row.update_ratio));  // no ratio without a raw value
  EXPECT_EQ(row.prev_step, -1);
}

TEST(StatisticsRow, OnlyNonFiniteValues) {
  stats::statistics_record r;
  stats::moments m;
  m.count = 2;
  m.nan_count = 1;
  m.pos_inf_count = 1;
  r.moments = m;
  const auto row = frontend::make_statistics_row(r);
  EXPECT_TRUE(row.has_raw);
  EXPECT_EQ(row.nan_count, 1);
  EXPECT_EQ(row.pos_inf_count, 1);
  EXPECT_EQ(row.neg_inf_count, 0);
  EXPECT_TRUE(std::isnan(row.min));
  EXPECT_TRUE(std::isnan(row.l2));
}

TEST(StatisticsRow, LogHistogramCells) {
  std::vector<int64_t> cells(frontend::log_histogram_row_cells, 99);
  const std::span<int64_t, frontend::log_histogram_row_cells> view(cells.data(), cells.size());
  auto r = known_record();
  EXPECT_FALSE(frontend::fill_log_histogram_row(r, view));
  EXPECT_EQ(cells[0], 0);
  EXPECT_EQ(cells[stats::log_histogram_bins - 1], 0);
  EXPECT_EQ(cells[frontend::log_histogram_nan_cell], -1);
  EXPECT_EQ(cells[frontend::log_histogram_above_cell], -1);

  stats::log_histogram h;
  h.counts.assign(stats::log_histogram_bins, 0);
  h.counts[774] = 1;  // the zero
  h.counts[10] = 2;
  h.nan_count = 1;
  h.pos_inf_count = 2;
  h.neg_inf_count = 3;
  h.below_count = 4;
  h.above_count = 5;
  r.log_histogram = h;
  EXPECT_TRUE(frontend::fill_log_histogram_row(r, view));
  EXPECT_EQ(cells[774], 1);
  EXPECT_EQ(cells[10], 2);
  EXPECT_EQ(cells[0], 0);
  EXPECT_EQ(cells[frontend::log_histogram_nan_cell], 1);
  EXPECT_EQ(cells[frontend::log_histogram_pos_inf_cell], 2);
  EXPECT_EQ(cells[frontend::log_histogram_neg_inf_cell], 3);
  EXPECT_EQ(cells[frontend::log_histogram_below_cell], 4);
  EXPECT_EQ(cells[frontend::log_histogram_above_cell], 5);
  EXPECT_EQ(frontend::log_histogram_above_cell + 1, frontend::log_histogram_row_cells);
}

// ---- statistics plan and catalog ------------------------------------------------------------

/// One step of "fc.weight" (collection weights), "fc.bias" (biases) and "loss".
std::filesystem::path write_small_trial() {
  const auto root = testing::make_scratch_dir("frontend_plan");
  writer::writer_options options;
  writer::collection_spec weights, biases;
  weights.name = "weights";
  weights.tensor_names = {"fc.weight"};
  biases.name = "biases";
  biases.tensor_names = {"fc.bias"};
  options.collections = {weights, biases};
  auto w = writer::trial_writer::create(root, "worker_0", options);
  EXPECT_TRUE(w.has_value()) << w.error_status().to_string();
  const float values[2] = {1.0f, -2.0f};
  const std::vector<int64_t> shape = {2};
  const tensor_view view{reinterpret_cast<const std::byte*>(values), dtype::float32, shape, 2,
                         memory_kind::host};
  EXPECT_TRUE(w->begin_step(0, mode::train, 0).ok());
  for (const char* name : {"fc.weight", "fc.bias", "loss"}) EXPECT_TRUE(w->add_tensor(name, view).ok());
  EXPECT_TRUE(w->end_step().ok());
  EXPECT_TRUE(w->close(true).ok());
  return root;
}

TEST(StatisticsPlan, UpdateRatioSelection) {
  auto catalog = frontend::open_catalog(write_small_trial().string());
  ASSERT_TRUE(catalog) << catalog.error_status().to_string();
  EXPECT_TRUE(catalog->warnings().empty());
  const auto ids = catalog->sorted_tensor_ids();
  ASSERT_EQ(ids.size(), 3u);
  const auto depth = [&](const plan::read_plan& plan, const char* name) {
    const auto* request = plan.find(*catalog->find_tensor(name));
    return request ? request->history_depth : -1;
  };
  using report::update_ratio_tensors;
  const auto plan = report::statistics_plan(*catalog, ids, {.histogram_bins = 8});
  EXPECT_EQ(depth(plan, "fc.weight"), 1);
  EXPECT_EQ(depth(plan, "fc.bias"), 1);
  EXPECT_EQ(depth(plan, "loss"), 0);
  EXPECT_EQ(plan.find(ids[0])->histogram_bins, 8);
  EXPECT_TRUE(plan.find(ids[0])->saved_reductions);
  EXPECT_TRUE(plan.find(ids[0])->moments);

  const auto all = report::statistics_plan(*catalog, ids, {.update_ratio = update_ratio_tensors::all});
  EXPECT_EQ(depth(all, "loss"), 1);
  const auto none = report::statistics_plan(*catalog, ids, {.update_ratio = update_ratio_tensors::none});
  EXPECT_EQ(depth(none, "fc.weight"), 0);

  // Python's two lists: a tensor asked for with and without the ratio merges to "with".
  plan::read_plan merged;
  const std::vector<trial::tensor_id> loss = {*catalog->find_tensor("loss")};
  report::add_statistics_requests(merged, *catalog, ids, {.update_ratio = update_ratio_tensors::none});
  report::add_statistics_requests(merged, *catalog, loss, {.update_ratio = update_ratio_tensors::all});
  EXPECT_EQ(depth(merged, "loss"), 1);
  EXPECT_EQ(depth(merged, "fc.weight"), 0);
}

TEST(OpenCatalog, MissingFolderAndWarningText) {
  const auto missing = frontend::open_catalog((testing::make_scratch_dir("frontend_missing") / "nope").string());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error_status().code(), error_code::not_found);

  const trial::load_warning warning{"index/000000000000/000000000000_worker_0.json",
                                    status(error_code::data_loss, "bad JSON at byte 3")};
  EXPECT_EQ(frontend::load_warning_text(warning),
            "index/000000000000/000000000000_worker_0.json: data_loss: bad JSON at byte 3");
}

}  // namespace
}  // namespace trialstat
