// SPDX-License-Identifier: Apache-2.0
// The host side of the batched rule statistics (issue 25 item 3, host/stats/rule_statistics_tasks):
// the task tables the CUDA executor launches over a whole batch. Each task is run here on the CPU
// exactly where the device would read it — from the input the executor stages (the batch range,
// or the wanted tensors packed), at the task's offset, with its parameters and output slots —
// and the filled records must equal compute_rule_statistics per tensor, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "host/stats/rule_statistics.hpp"
#include "host/stats/rule_statistics_tasks.hpp"
#include "kernels/common/chunk_plan.hpp"
#include "kernels/value_counts/value_counts_op.hpp"
#include "trialstat/stats/channel_sums.hpp"
#include "trialstat/stats/order_statistics.hpp"
#include "trialstat/stats/result_comparison.hpp"
#include "trialstat/stats/value_counts.hpp"

namespace stats = trialstat::stats;
namespace kernels = trialstat::kernels;
using trialstat::dtype;

namespace {

/// A batch buffer of several tensors at unaligned offsets, with gaps, and their requests.
struct batch_fixture {
  std::vector<std::byte> bytes;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<stats::statistics_request> requests;
  std::vector<stats::statistics_record> records;
  stats::tensor_batch batch;

  /// Appends a float32 tensor of `shape` after `gap` bytes; values normal(0, 1) with some exact
  /// zeros, ones, NaN or Inf.
  void add(std::vector<int64_t> shape, stats::statistics_request request, std::size_t gap, bool poison = false) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::mt19937_64 rng(bytes.size() + static_cast<std::size_t>(n));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    bytes.resize(bytes.size() + gap, std::byte{0x5a});
    const std::size_t offset = bytes.size();
    std::vector<float> values(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = i % 7 == 0 ? 0.0f : i % 11 == 0 ? 1.0f : normal(rng);
    if (poison && n > 3) {
      values[1] = std::numeric_limits<float>::quiet_NaN();
      values[2] = std::numeric_limits<float>::infinity();
    }
    bytes.resize(offset + values.size() * sizeof(float));
    if (!values.empty()) std::memcpy(bytes.data() + offset, values.data(), values.size() * sizeof(float));
    batch.segments.push_back({offset, n, dtype::float32});
    shapes.push_back(std::move(shape));
    request.normalise();
    requests.push_back(std::move(request));
  }
  void finish() {
    records.resize(shapes.size());
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      records[i].type = dtype::float32;
      records[i].shape = shapes[i];
      records[i].num_elements = batch.segments[i].num_elements;
      batch.records.push_back(&records[i]);
      batch.requests.push_back(&requests[i]);
    }
    batch.base = bytes.data();
  }
};

/// What the device does with a plan, done on the CPU from the staged input.
void run_plan_on_cpu(const stats::detail::rule_task_plan& plan, const stats::tensor_batch& batch) {
  std::vector<std::byte> input;
  if (plan.packed) {
    input.assign(static_cast<std::size_t>(plan.input_bytes), std::byte{0});
    for (const auto& c : plan.copies) {
      if (c.bytes > 0) std::memcpy(input.data() + c.to, batch.base + c.from, static_cast<std::size_t>(c.bytes));
    }
  } else {
    input.assign(batch.base + plan.range_first, batch.base + plan.range_first + plan.input_bytes);
  }
  const auto view = [&](const kernels::tensor_task& t, std::vector<int64_t> shape) {
    EXPECT_LE(t.offset_bytes + t.num_elements * 4, static_cast<int64_t>(input.size()));
    return trialstat::tensor_view{input.data() + t.offset_bytes, t.type, std::move(shape), t.num_elements,
                                  trialstat::memory_kind::host};
  };
  std::vector<int64_t> counts(static_cast<std::size_t>(plan.counts), -1);
  for (std::size_t i = 0; i < plan.equal_tasks.size(); ++i) {
    const auto& t = plan.equal_tasks[i];
    ASSERT_LE(t.params_count, kernels::values_per_pass);
    const std::span<const double> values(plan.values.data() + t.params_first, static_cast<std::size_t>(t.params_count));
    auto got = stats::count_equal(view(t, {t.num_elements}), values, stats::backend::cpu);
    ASSERT_TRUE(got.has_value());
    for (int64_t k = 0; k < t.params_count; ++k) counts[static_cast<std::size_t>(t.out_first + k)] = (*got)[static_cast<std::size_t>(k)];
  }
  std::vector<kernels::channel_state> states(static_cast<std::size_t>(plan.states), kernels::channel_identity());
  for (const auto& t : plan.channel_tasks) {
    const int64_t outer = t.num_elements / (t.channels * t.inner);
    auto got = stats::compute_channel_sums(view(t, {outer, t.channels, t.inner}), 1, stats::backend::cpu);
    ASSERT_TRUE(got.has_value());
    for (int64_t c = 0; c < t.channels; ++c) {
      const auto k = static_cast<std::size_t>(c);
      states[static_cast<std::size_t>(t.out_first + c)] = {got->sum[k], got->count[k], got->nan_count[k],
                                                            got->pos_inf_count[k], got->neg_inf_count[k]};
    }
  }
  std::vector<double> percentiles(static_cast<std::size_t>(plan.percentiles), -1.0);
  int64_t keys = 0;
  for (const auto& t : plan.percentile_tasks) {
    EXPECT_EQ(t.keys_first, keys) << "consecutive key ranges";
    keys += t.num_elements;
    const std::span<const double> q(plan.q.data() + t.params_first, static_cast<std::size_t>(t.params_count));
    auto got = stats::compute_percentiles(view(t, {t.num_elements}), q, stats::backend::cpu);
    ASSERT_TRUE(got.has_value());
    for (int64_t j = 0; j < t.params_count; ++j) percentiles[static_cast<std::size_t>(t.out_first + j)] = (*got)[static_cast<std::size_t>(j)];
  }
  EXPECT_EQ(keys, plan.keys);
  for (int64_t c : counts) EXPECT_GE(c, 0) << "every count slot written";
  stats::detail::fill_rule_statistics(plan, batch, counts, states, percentiles);
}

/// The per-tensor reference: compute_rule_statistics on each record.
std::vector<stats::statistics_record> per_tensor(const batch_fixture& f) {
  std::vector<stats::statistics_record> out(f.records.size());
  for (std::size_t i = 0; i < f.records.size(); ++i) {
    out[i] = f.records[i];
    const auto& s = f.batch.segments[i];
    const trialstat::tensor_view view{f.bytes.data() + s.offset_bytes, s.type, f.shapes[i], s.num_elements,
                                      trialstat::memory_kind::host};
    EXPECT_TRUE(stats::detail::compute_rule_statistics(f.requests[i], view, out[i], stats::backend::cpu, nullptr).ok());
  }
  return out;
}

void expect_same_records(const std::vector<stats::statistics_record>& expected,
                         const std::vector<stats::statistics_record>& got) {
  ASSERT_EQ(expected.size(), got.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    stats::comparison_outcome outcome;
    stats::result_comparer c(outcome, "per tensor", "batched", /*exact_floats=*/true);
    c.at("record " + std::to_string(i));
    stats::compare_records(c, expected[i], got[i]);
    EXPECT_TRUE(outcome.passed) << outcome.mismatch;
    EXPECT_EQ(expected[i].values_data, got[i].values_data) << "record " << i;
    ASSERT_EQ(expected[i].percentiles.size(), got[i].percentiles.size());
    for (std::size_t k = 0; k < expected[i].percentiles.size(); ++k) {
      EXPECT_EQ(expected[i].percentiles[k].q, got[i].percentiles[k].q);
    }
    ASSERT_EQ(expected[i].equal_counts.size(), got[i].equal_counts.size());
    for (std::size_t k = 0; k < expected[i].equal_counts.size(); ++k) {
      EXPECT_EQ(expected[i].equal_counts[k].value, got[i].equal_counts[k].value);
    }
  }
}

stats::statistics_request rule_request(bool percentiles, std::size_t equal_values, std::vector<int64_t> axes,
                                       bool keep = false) {
  stats::statistics_request r;
  if (percentiles) r.percentiles = {0.0, 5.0, 50.0, 95.0, 100.0};
  for (std::size_t k = 0; k < equal_values; ++k) r.equal_values.push_back(k == 0 ? 0.0 : static_cast<double>(k));
  r.channel_axes = std::move(axes);
  r.keep_values = keep;
  return r;
}

batch_fixture mixed_batch() {
  batch_fixture f;
  f.add({8, 3, 5, 4}, rule_request(true, 3, {1, -3, 7}), 3);          // axis 1 twice, 7 not an axis
  f.add({64}, stats::statistics_request{}, 5);                          // no rule statistics
  f.add({2, 700}, rule_request(true, 19, {0, -1}, true), 1, true);      // 19 values: 3 tasks; NaN/Inf
  f.add({1}, rule_request(true, 1, {0}), 7);                            // one element
  f.add({0, 4}, rule_request(true, 2, {1, 0}), 2);                      // empty: outer 0, channels 0
  f.add({3, 0, 2}, rule_request(false, 0, {2}), 6);                     // inner 0
  f.add({4, 16, 16}, rule_request(false, 9, {}), 1);
  f.finish();
  return f;
}

}  // namespace

TEST(RuleStatisticsTasks, OneGroupEqualsPerTensor) {
  batch_fixture f = mixed_batch();
  const auto expected = per_tensor(f);
  auto plans = stats::detail::plan_rule_statistics(f.batch);
  ASSERT_TRUE(plans.has_value()) << plans.error_status().to_string();
  ASSERT_EQ(plans->size(), 1u);
  const auto& plan = plans->front();
  EXPECT_EQ(plan.segments.size(), 6u) << "the segment without rule statistics is left out";
  EXPECT_EQ(plan.equal_tasks.size(), 1u + 3u + 1u + 1u + 2u);
  EXPECT_FALSE(plan.packed) << "the wanted tensors fill most of the range";
  run_plan_on_cpu(plan, f.batch);
  expect_same_records(expected, f.records);
}

TEST(RuleStatisticsTasks, GroupsPackAndSplitWithinLimits) {
  batch_fixture f = mixed_batch();
  const auto expected = per_tensor(f);
  stats::detail::rule_task_limits limits;
  limits.max_device_bytes = 1024;    // the [2, 700] tensor (5600 bytes) is a group of its own
  limits.max_percentile_keys = 500;
  auto plans = stats::detail::plan_rule_statistics(f.batch, limits);
  ASSERT_TRUE(plans.has_value());
  EXPECT_GE(plans->size(), 3u);
  for (const auto& plan : *plans) run_plan_on_cpu(plan, f.batch);
  expect_same_records(expected, f.records);
}

TEST(RuleStatisticsTasks, SparseWantedTensorsArePacked) {
  batch_fixture f;
  f.add({16}, rule_request(true, 2, {0}), 1);
  f.add({100000}, stats::statistics_request{}, 3);  // a large tensor in between, not wanted
  f.add({5, 3}, rule_request(true, 1, {1}, true), 5);
  f.finish();
  const auto expected = per_tensor(f);
  auto plans = stats::detail::plan_rule_statistics(f.batch);
  ASSERT_TRUE(plans.has_value());
  ASSERT_EQ(plans->size(), 1u);
  const auto& plan = plans->front();
  EXPECT_TRUE(plan.packed);
  EXPECT_EQ(plan.input_bytes, 64 + 64) << "two tensors, each at an 8-byte-aligned offset";
  for (const auto& t : plan.equal_tasks) EXPECT_EQ(t.offset_bytes % 8, 0);
  run_plan_on_cpu(plan, f.batch);
  expect_same_records(expected, f.records);
}

TEST(RuleStatisticsTasks, BadRequestsAreErrors) {
  batch_fixture f;
  stats::statistics_request r;
  r.percentiles = {101.0};
  f.add({4}, r, 0);
  f.finish();
  auto plans = stats::detail::plan_rule_statistics(f.batch);
  ASSERT_FALSE(plans.has_value());
  EXPECT_EQ(plans.error_status().code(), trialstat::error_code::invalid_argument);
  EXPECT_NE(plans.error_status().message().find("101"), std::string::npos);
  batch_fixture g;
  g.add({4}, stats::statistics_request{}, 0);
  g.finish();
  auto none = stats::detail::plan_rule_statistics(g.batch);
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
}

TEST(TaskGrid, SharesResidentBlocksAmongTasks) {
  // One large tensor: every resident block; many tiny ones: a block each, 65535 rows at most.
  auto g = kernels::choose_task_grid(528, int64_t{1} << 24, 1, 256);
  EXPECT_EQ(g.x, 528);
  EXPECT_EQ(g.y, 1);
  g = kernels::choose_task_grid(528, 16, 10000, 256);
  EXPECT_EQ(g.x, 1);
  EXPECT_EQ(g.y, 10000);
  g = kernels::choose_task_grid(528, int64_t{1} << 20, 100, 256);
  EXPECT_EQ(g.x, 5);
  EXPECT_EQ(g.y, 100);
  g = kernels::choose_task_grid(528, 1000, 2, 256);
  EXPECT_EQ(g.x, 4) << "no more blocks than the largest task's elements fill";
  g = kernels::choose_task_grid(528, 0, 100000, 256);
  EXPECT_EQ(g.x, 1);
  EXPECT_EQ(g.y, 65535);
}
