// SPDX-License-Identifier: Apache-2.0
// Verified batches (issue 25, pipeline_options::verify_device) through the fault-injection switch
// (stats/fault_injection.hpp): without a GPU a CPU executor stands in for the device and the CPU
// twin checks it. A wrong result or a failed launch — in the first batch, mid-run, in a live
// trial between polls — gives one warning, and every record equals a plain CPU run's, bit for
// bit (pairwise history included, also for tensors saved less often than every step).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "tests/support/files.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/stats/fault_injection.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/stats/result_comparison.hpp"
#include "trialstat/trial/catalog.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace fs = std::filesystem;
namespace tw = trialstat::writer;
namespace stats = trialstat::stats;
namespace pipeline = trialstat::pipeline;
using trialstat::dtype;
using trialstat::memory_kind;
using trialstat::tensor_view;

namespace {

/// Sets TRIALSTAT_FAULT_INJECT for one scope.
class fault_switch {
 public:
  explicit fault_switch(const char* value) {
    if (value == nullptr) {
      ::unsetenv("TRIALSTAT_FAULT_INJECT");
    } else {
      ::setenv("TRIALSTAT_FAULT_INJECT", value, 1);
    }
  }
  ~fault_switch() { ::unsetenv("TRIALSTAT_FAULT_INJECT"); }
  fault_switch(const fault_switch&) = delete;
  fault_switch& operator=(const fault_switch&) = delete;
};

/// Writes step `step` of a worker: weights every step, `sparse` only every 7th step (pairwise
/// history across gaps), a vector with NaN and Inf at some steps.
void write_step(tw::trial_writer& w, int64_t step) {
  std::mt19937_64 rng(static_cast<uint64_t>(step) * 7919u + w.worker().size());
  std::normal_distribution<float> normal(0.0f, 0.2f);
  const auto add = [&](const std::string& name, std::vector<int64_t> shape, bool poison) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> values(static_cast<std::size_t>(n));
    for (float& v : values) v = normal(rng);
    if (poison) {
      values[1] = std::numeric_limits<float>::quiet_NaN();
      values[2] = std::numeric_limits<float>::infinity();
    }
    const tensor_view view{reinterpret_cast<const std::byte*>(values.data()), dtype::float32, shape, n,
                           memory_kind::host};
    ASSERT_TRUE(w.add_tensor(name, view).ok());
  };
  ASSERT_TRUE(w.begin_step(step, trialstat::mode::train, step).ok());
  add("fc.weight", {16, 8}, false);
  add("relu_output", {4, 32}, step % 5 == 3);
  if (step % 7 == 0) add("sparse.weight", {8, 8}, false);
  ASSERT_TRUE(w.end_step().ok());
}

fs::path write_trial(const std::string& name, int64_t steps, int workers = 2) {
  const fs::path root = trialstat::testing::make_scratch_dir(name) / "t";
  for (int k = 0; k < workers; ++k) {
    auto w = tw::trial_writer::create(root, "worker_" + std::to_string(k), {});
    EXPECT_TRUE(w.has_value());
    for (int64_t s = 0; s < steps; ++s) write_step(*w, s);
  }
  return root;
}

trialstat::trial::catalog open_trial(const fs::path& root) {
  auto c = trialstat::trial::catalog::open(root);
  EXPECT_TRUE(c.has_value()) << c.error_status().to_string();
  return std::move(*c);
}

/// Every statistic the executors compute, pairwise against the previous saved step included.
trialstat::plan::read_plan full_plan(const trialstat::trial::catalog& c) {
  stats::statistics_request r;
  r.histogram_bins = 64;
  r.log_histogram = true;
  r.history_depth = 1;
  r.allclose = {stats::allclose_params{}};
  r.axis0 = {stats::axis0_predicate{}};
  r.percentiles = {5.0, 50.0, 95.0};
  r.equal_values = {0.0};
  r.channel_axes = {-1};
  r.keep_values = true;
  r.normalise();
  trialstat::plan::read_plan plan;
  for (trialstat::trial::tensor_id t = 0; t < c.tensor_names().size(); ++t) plan.request(t, r);
  return plan;
}

/// The records of a run, copied out of the callback (kept values as bytes).
struct run_copy {
  std::vector<int64_t> steps;
  std::vector<stats::statistics_record> records;
  std::vector<std::vector<std::byte>> values;
  std::vector<std::string> warnings;
  int64_t verified_steps = 0;
  bool fell_back = false;

  pipeline::step_callback callback() {
    return [this](const stats::step_statistics& s) {
      steps.push_back(s.step);
      for (const auto& r : s.records) {
        records.push_back(r);
        const std::size_t bytes = r.values_data == nullptr
                                      ? 0
                                      : static_cast<std::size_t>(r.num_elements) * trialstat::dtype_size_bytes(r.type);
        values.emplace_back(r.values_data, r.values_data + bytes);
        records.back().values_data = nullptr;
      }
    };
  }
  void note(const pipeline::pipeline_counters& counters) {
    verified_steps += counters.verified_steps;
    fell_back = fell_back || counters.device_fallback.has_value();
  }
};

pipeline::pipeline_options options_for(run_copy& out) {
  pipeline::pipeline_options o;
  o.warn = [&out](const std::string& w) { out.warnings.push_back(w); };
  return o;
}

run_copy run_once(const trialstat::trial::catalog& c, const trialstat::plan::read_plan& plan,
                  pipeline::pipeline_options o = {}) {
  run_copy out;
  if (!o.warn) o.warn = [&out](const std::string& w) { out.warnings.push_back(w); };
  auto counters = pipeline::run_statistics(c, plan, o, out.callback());
  EXPECT_TRUE(counters.has_value()) << counters.error_status().to_string();
  if (counters) out.note(*counters);
  return out;
}

/// Bit for bit: every field of every record, and the kept values.
void expect_identical(const run_copy& expected, const run_copy& got) {
  ASSERT_EQ(expected.steps, got.steps);
  ASSERT_EQ(expected.records.size(), got.records.size());
  for (std::size_t i = 0; i < expected.records.size(); ++i) {
    stats::comparison_outcome outcome;
    stats::result_comparer c(outcome, "cpu", "verified", /*exact_floats=*/true);
    c.at("record " + std::to_string(i));
    stats::compare_records(c, expected.records[i], got.records[i]);
    ASSERT_TRUE(outcome.passed) << outcome.mismatch;
    ASSERT_EQ(expected.values[i], got.values[i]) << "kept values of record " << i;
  }
}

class DeviceVerification : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { root_ = new fs::path(write_trial("device_verification", 150)); }
  static void TearDownTestSuite() {
    delete root_;
    root_ = nullptr;
  }
  static fs::path* root_;
};
fs::path* DeviceVerification::root_ = nullptr;

}  // namespace

TEST(FaultInjection, ParsesKindsAndBatches) {
  auto result = stats::parse_fault_injection("cuda-result@3");
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->kind, stats::fault_kind::result);
  EXPECT_EQ(result->first_batch, 3);
  auto launch = stats::parse_fault_injection("cuda-launch");
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->kind, stats::fault_kind::launch);
  EXPECT_EQ(launch->first_batch, 1);
  EXPECT_FALSE(stats::parse_fault_injection("").value().active());
  for (const char* bad : {"cuda", "cuda-result@0", "cuda-result@", "cuda-result@2x", "cuda-launch@-1"}) {
    auto parsed = stats::parse_fault_injection(bad);
    ASSERT_FALSE(parsed.has_value()) << bad;
    EXPECT_EQ(parsed.error_status().code(), trialstat::error_code::invalid_argument);
    EXPECT_NE(parsed.error_status().message().find("cuda-result"), std::string::npos);
  }
  fault_switch set("bogus");
  auto from_env = stats::fault_injection_from_environment();
  ASSERT_FALSE(from_env.has_value());
  EXPECT_NE(from_env.error_status().message().find("TRIALSTAT_FAULT_INJECT"), std::string::npos);
}

TEST(DeviceVerificationOptions, ParsesModes) {
  EXPECT_EQ(pipeline::parse_device_verification("off").value(), pipeline::device_verification::off);
  EXPECT_EQ(pipeline::parse_device_verification("first").value(), pipeline::device_verification::first);
  EXPECT_EQ(pipeline::parse_device_verification("sampled").value(), pipeline::device_verification::sampled);
  auto bad = pipeline::parse_device_verification("always");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error_status().message().find("off, first or sampled"), std::string::npos);
}

// Without the switch a CPU run verifies nothing and holds nothing back.
TEST_F(DeviceVerification, CpuRunIsNotVerified) {
  fault_switch none(nullptr);
  const auto catalog = open_trial(*root_);
  const run_copy plain = run_once(catalog, full_plan(catalog));
  EXPECT_EQ(plain.steps.size(), 150u);
  EXPECT_EQ(plain.verified_steps, 0);
  EXPECT_TRUE(plain.warnings.empty());
  EXPECT_FALSE(plain.fell_back);
}

// A wrong count or a failed launch, from the first batch or mid-run: one warning naming the
// difference, and the records equal the CPU run's bit for bit.
TEST_F(DeviceVerification, FaultsFallBackToTheCpuAndMatchIt) {
  const auto catalog = open_trial(*root_);
  const auto plan = full_plan(catalog);
  run_copy plain;
  {
    fault_switch none(nullptr);
    plain = run_once(catalog, plan);
  }
  // 2 batches per step (one per worker's event file): batch 151 is step 75's first.
  const struct {
    const char* fault;
    const char* says;
    int64_t redo_from;  // the first step recomputed on the CPU
  } cases[] = {
      {"cuda-result", "nan_count: stand-in 1 vs cpu 0", 0},
      {"cuda-result@151", "nan_count: stand-in 1 vs cpu 0", 65},
      {"cuda-launch", "kernel launch failed", 0},
      {"cuda-launch@151", "kernel launch failed", 65},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.fault);
    fault_switch set(c.fault);
    const run_copy verified = run_once(catalog, plan);
    expect_identical(plain, verified);
    ASSERT_EQ(verified.warnings.size(), 1u);
    const std::string& w = verified.warnings[0];
    EXPECT_NE(w.find(c.says), std::string::npos) << w;
    EXPECT_NE(w.find("recomputing from step " + std::to_string(c.redo_from) + " on the CPU"), std::string::npos) << w;
    EXPECT_TRUE(verified.fell_back);
    if (std::string(c.fault).find("result") != std::string::npos) {
      EXPECT_NE(w.find("tensor "), std::string::npos) << w;
      EXPECT_NE(w.find("worker worker_"), std::string::npos) << w;
    }
    // Mid-run: the steps before the last passed check (0 and 64, and the prime step 63) came
    // from the device and were verified; nothing after the fault was.
    EXPECT_EQ(verified.verified_steps, c.redo_from);
  }
}

// With `first`, only the first step is checked: a fault that starts later is not seen (the mode
// trades safety for speed), and nothing is held back after the first step.
TEST_F(DeviceVerification, FirstChecksOnlyTheFirstStep) {
  const auto catalog = open_trial(*root_);
  fault_switch set("cuda-result@11");
  run_copy out;
  auto o = options_for(out);
  o.verify_device = pipeline::device_verification::first;
  auto counters = pipeline::run_statistics(catalog, full_plan(catalog), o, out.callback());
  ASSERT_TRUE(counters.has_value());
  EXPECT_EQ(counters->verified_steps, 1);
  EXPECT_FALSE(counters->device_fallback.has_value());
  EXPECT_TRUE(out.warnings.empty());
  EXPECT_EQ(out.steps.size(), 150u);
}

// The held records' budget closes windows early: with no budget every step is a check.
TEST_F(DeviceVerification, HeldBytesBudgetForcesChecks) {
  fault_switch set("cuda-launch@100000");  // never fires: the stand-in only
  const auto catalog = open_trial(*root_);
  run_copy out;
  auto o = options_for(out);
  o.verify_held_bytes = 0;
  auto counters = pipeline::run_statistics(catalog, full_plan(catalog), o, out.callback());
  ASSERT_TRUE(counters.has_value());
  EXPECT_EQ(counters->verified_steps, 150);
  EXPECT_EQ(counters->steps, 150);
  // Sampled, default budget: every step is still emitted once the last check passes.
  run_copy sampled;
  auto counted = pipeline::run_statistics(catalog, full_plan(catalog), options_for(sampled), sampled.callback());
  ASSERT_TRUE(counted.has_value());
  EXPECT_EQ(counted->verified_steps, 150);
  EXPECT_EQ(sampled.steps.size(), 150u);
}

// Live: a stream advanced while steps are written — each poll ends with a check, so every
// complete step is emitted in the poll that saw it; a fault between polls falls back once and
// the records equal a CPU stream's.
TEST(DeviceVerificationLive, EveryPollIsCheckedAndTheFallbackMatchesTheCpu) {
  const fs::path root = trialstat::testing::make_scratch_dir("device_verification_live") / "t";
  auto writer = tw::trial_writer::create(root, "worker_0", {});
  ASSERT_TRUE(writer.has_value());
  const auto run_live = [&](const char* fault, std::vector<std::vector<int64_t>>& per_poll) {
    fault_switch set(fault);
    run_copy out;
    trialstat::trial::catalog_options co;
    co.scan_missing_index = false;
    auto catalog = trialstat::trial::catalog::open(root, co);
    EXPECT_TRUE(catalog.has_value());
    pipeline::pipeline_options o = options_for(out);
    o.stop_at_unfinished_records = true;
    pipeline::statistics_stream stream(*catalog, full_plan(*catalog), o);
    int64_t written = 0;
    for (int64_t poll_end : {1, 9, 30, 31, 80, 90}) {
      while (written < poll_end) write_step(*writer, written++);
      EXPECT_TRUE(catalog->refresh().has_value());
      stream.set_plan(full_plan(*catalog));
      const std::size_t before = out.steps.size();
      auto counters = stream.advance(out.callback(), /*include_incomplete=*/true);
      EXPECT_TRUE(counters.has_value());
      if (counters) out.note(*counters);
      per_poll.emplace_back(out.steps.begin() + static_cast<std::ptrdiff_t>(before), out.steps.end());
      EXPECT_EQ(stream.last_step(), written - 1) << "a step was held past its poll";
    }
    return out;
  };
  // The live stream writes the trial as it goes: the CPU run reads the finished one.
  std::vector<std::vector<int64_t>> polls;
  const run_copy verified = run_live("cuda-result@40", polls);
  ASSERT_EQ(polls.size(), 6u);
  EXPECT_EQ(polls[1].front(), 1);
  EXPECT_EQ(polls[1].back(), 8);
  ASSERT_EQ(verified.warnings.size(), 1u) << "one warning";
  EXPECT_TRUE(verified.fell_back);
  fault_switch none(nullptr);
  const auto catalog = open_trial(root);
  expect_identical(run_once(catalog, full_plan(catalog)), verified);
}
