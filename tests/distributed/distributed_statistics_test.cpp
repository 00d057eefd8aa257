// SPDX-License-Identifier: Apache-2.0
// The distributed statistics run without MPI: N ranks as N threads over an in-process transport,
// each step's records compared byte for byte (through the record codec) with one process's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "tests/distributed/thread_transport.hpp"
#include "tests/support/record_with_every_field.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/distributed/distributed_statistics.hpp"
#include "trialstat/distributed/record_codec.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat::distributed {
namespace {

using testing_support::thread_network;
using testing_support::thread_transport;

/// 3 workers × 24 steps; "w" (weights) saved at every step by workers 0-1 and every 5th step by
/// worker 2, with NaN at steps 7 and 8 of worker 1; "g" saved every step; "s" every 3rd step.
std::filesystem::path write_three_worker_trial() {
  const auto root = testing::make_scratch_dir("distributed_three_workers");
  for (int worker = 0; worker < 3; ++worker) {
    writer::writer_options options;
    options.num_workers = 3;
    options.collections = writer::pytorch_default_collections(1);
    auto w = writer::trial_writer::create(root, "worker_" + std::to_string(worker), options);
    EXPECT_TRUE(w.has_value()) << w.error_status().to_string();
    for (int64_t step = 0; step < 24; ++step) {
      EXPECT_TRUE(w->begin_step(step, mode::train, step).ok());
      const auto add = [&](const std::string& name, int n, double scale) {
        std::vector<float> v(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(scale * std::sin(0.3 * i + step + worker));
        if (name == "MLP_fc1.weight" && worker == 1 && (step == 7 || step == 8) && n > 3) v[3] = NAN;
        const int64_t shape[] = {n};
        const tensor_view view{reinterpret_cast<const std::byte*>(v.data()), dtype::float32, shape, n,
                               memory_kind::host};
        EXPECT_TRUE(w->add_tensor(name, view).ok());
      };
      if (worker < 2 || step % 5 == 0) add("MLP_fc1.weight", 64, 1.0 + 0.01 * step);
      add("MLP_fc1.weight_grad", 32 + 8 * worker, 0.001);
      if (step % 3 == 0) add("loss", 1, 2.0 - 0.05 * step);
      EXPECT_TRUE(w->end_step().ok());
    }
    EXPECT_TRUE(w->close(true).ok());
  }
  return root;
}

plan::read_plan stats_plan(const trial::catalog& trial) {
  plan::read_plan plan;
  for (auto id : trial.sorted_tensor_ids()) {
    stats::statistics_request r;
    r.histogram_bins = 8;
    if (trial.tensor_names()[id] == "MLP_fc1.weight") {
      r.history_depth = 2;
      r.allclose = {stats::allclose_params{}};
    }
    plan.request(id, r);
  }
  return plan;
}

using encoded_steps = std::vector<std::vector<std::byte>>;

encoded_steps single_process(const trial::catalog& trial, const plan::read_plan& plan,
                             const pipeline::pipeline_options& options) {
  encoded_steps out;
  auto run = pipeline::run_statistics(trial, plan, options, [&](const stats::step_statistics& s) {
    pack_step(s.step, s.records, out.emplace_back());
  });
  EXPECT_TRUE(run.has_value());
  return out;
}

encoded_steps threaded(const trial::catalog& trial, const plan::read_plan& plan,
                       const pipeline::pipeline_options& options, int ranks, distributed_options how) {
  thread_network net(ranks);
  encoded_steps out;
  std::vector<std::thread> threads;
  std::vector<status> outcome(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      thread_transport t(net, r);
      auto run = run_statistics_on(t, trial, plan, options, [&](const stats::step_statistics& s) {
        pack_step(s.step, s.records, out.emplace_back());
      }, how);
      if (!run) outcome[static_cast<std::size_t>(r)] = run.error_status();
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& s : outcome) EXPECT_TRUE(s.ok()) << s.to_string();
  return out;
}

TEST(DistributedStatistics, SameRecordsInTheSameOrderForEverySplit) {
  const auto root = write_three_worker_trial();
  auto trial = trial::catalog::open(root);
  ASSERT_TRUE(trial.has_value()) << trial.error_status().to_string();
  const auto plan = stats_plan(*trial);
  pipeline::pipeline_options options;
  const auto expected = single_process(*trial, plan, options);
  ASSERT_EQ(expected.size(), 24U);

  for (int ranks = 1; ranks <= 4; ++ranks) {
    for (auto kind : {split_kind::by_worker, split_kind::by_steps}) {
      if (kind == split_kind::by_worker && ranks > 3) continue;
      for (uint64_t chunk_bytes : {uint64_t{256} << 20, uint64_t{1500}}) {
        distributed_options how;
        how.partitioning.force = kind;
        how.partitioning.chunk_bytes = chunk_bytes;
        SCOPED_TRACE(::testing::Message() << ranks << " ranks, split " << static_cast<int>(kind)
                                          << ", chunks of " << chunk_bytes << " bytes");
        const auto got = threaded(*trial, plan, options, ranks, how);
        ASSERT_EQ(got.size(), expected.size());
        for (std::size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i] == expected[i]) << "step index " << i;
      }
    }
  }
  // A step range: the same steps as one process, the halo still before the range.
  options.step_begin = 9;
  options.step_end = 20;
  const auto ranged = single_process(*trial, plan, options);
  distributed_options how;
  how.partitioning.force = split_kind::by_steps;
  how.partitioning.chunk_bytes = 1000;
  EXPECT_EQ(threaded(*trial, plan, options, 3, how), ranged);
}

TEST(DistributedStatistics, PartitionsAreBalancedAndHalosReadOnlyHistory) {
  const auto root = write_three_worker_trial();
  auto trial = trial::catalog::open(root);
  ASSERT_TRUE(trial.has_value());
  const auto plan = stats_plan(*trial);
  partition_options how;
  how.ranks = 3;
  auto by_worker = make_partition(*trial, plan, {}, how);
  ASSERT_TRUE(by_worker.has_value());
  // Worker 2 saves the weights every 5th step only: 3 ranks split 3 workers unevenly → steps.
  EXPECT_EQ(by_worker->kind, split_kind::by_steps);
  how.ranks = 2;
  how.chunk_bytes = 3000;
  auto by_steps = make_partition(*trial, plan, {}, how);
  ASSERT_TRUE(by_steps.has_value());
  ASSERT_EQ(by_steps->kind, split_kind::by_steps);  // 3 workers over 2 ranks: 2 + 1
  EXPECT_LE(by_steps->imbalance(), 1.3);  // chunks of ~2 steps: coarse
  ASSERT_GE(by_steps->chunks.size(), 4U);
  for (std::size_t c = 0; c < by_steps->chunks.size(); ++c) {
    const auto& chunk = by_steps->chunks[c];
    EXPECT_EQ(chunk.rank, static_cast<int>(c % 2));
    if (chunk.begin > 0) {
      // Depth 2 over workers 0-1 (every step): the 2 steps before; worker 2 (every 5th step)
      // may need more.
      EXPECT_LE(chunk.halo_begin, chunk.begin - 2);
      EXPECT_GE(chunk.halo_begin + 10, chunk.begin);
    }
  }
  EXPECT_GT(by_steps->halo_bytes, 0U);
}

TEST(RecordCodec, RoundTripsEveryField) {
  const std::vector<uint16_t> halves = {1, 2, 3, 4, 5, 6};
  const stats::statistics_record r = trialstat::testing_support::record_with_every_field(halves);
  const stats::previous_comparison& c = r.previous[0];
  const stats::channel_sums& sums = r.channel_sums[0];

  std::vector<std::byte> bytes;
  pack_step(17, std::span(&r, 1), bytes);
  auto decoded = unpack_step(bytes);
  ASSERT_TRUE(decoded.has_value()) << decoded.error_status().to_string();
  ASSERT_EQ(decoded->records.size(), 1U);
  const auto& d = decoded->records[0];
  EXPECT_EQ(decoded->step, 17);
  EXPECT_EQ(d.raw_status.code(), error_code::data_loss);
  EXPECT_EQ(d.raw_status.message(), r.raw_status.message());
  EXPECT_EQ(d.shape, r.shape);
  EXPECT_EQ(d.mode, mode::eval);
  EXPECT_EQ(d.histogram->counts, r.histogram->counts);
  EXPECT_EQ(d.previous[0].allclose_violations, c.allclose_violations);
  EXPECT_EQ(d.channel_sums[0].sum, sums.sum);
  EXPECT_EQ(d.wall_time, r.wall_time);
  EXPECT_EQ(d.strings, r.strings);
  ASSERT_EQ(d.reduction_problems.size(), 1U);  // a rank's unreadable reductions reach rank 0
  EXPECT_EQ(d.reduction_problems[0].location.start_bytes, 96U);
  EXPECT_EQ(d.reduction_problems[0].location.length_bytes, 40U);
  EXPECT_EQ(d.reduction_problems[0].location.event_file, 1U);
  EXPECT_EQ(d.reduction_problems[0].reason.code(), error_code::truncated_record);
  EXPECT_EQ(d.reduction_problems[0].reason.message(), r.reduction_problems[0].reason.message());
  ASSERT_NE(d.values_data, nullptr);
  EXPECT_EQ(std::memcmp(d.values_data, halves.data(), 12), 0);
  // Encoding the decoded record gives the same bytes.
  std::vector<std::byte> again;
  pack_step(17, decoded->records, again);
  EXPECT_EQ(again, bytes);
  // Cut short anywhere: data_loss, never a crash.
  for (std::size_t n = 0; n < bytes.size(); n += 7) {
    auto cut = unpack_step(std::span(bytes.data(), n));
    EXPECT_FALSE(cut.has_value());
  }
}

TEST(RecordCodec, BatchesOfStepsReadBackInOrder) {
  // Steps 5, 6 (no records) and 7, appended to one batch, come back as the same messages.
  stats::statistics_record r;
  r.tensor = 1;
  r.worker = 1;
  r.num_elements = 4;
  r.moments = stats::moments{};
  r.moments->count = 4;
  r.moments->sum = -2.5;
  std::vector<std::byte> batch, single;
  append_step(5, std::span(&r, 1), batch);
  append_step(6, {}, batch);
  r.step = 7;
  append_step(7, std::span(&r, 1), batch);
  std::size_t at = 0;
  for (const int64_t want : {5, 6, 7}) {
    auto message = next_batched_step(batch, at);
    ASSERT_TRUE(message.has_value()) << message.error_status().to_string();
    auto decoded = unpack_step(*message);
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->step, want);
    EXPECT_EQ(decoded->records.size(), want == 6 ? 0U : 1U);
    pack_step(want, decoded->records, single);
    EXPECT_TRUE(std::equal(single.begin(), single.end(), message->begin(), message->end()));
    if (want != 6) {
      EXPECT_EQ(decoded->records[0].moments->sum, -2.5);
    }
  }
  EXPECT_EQ(at, batch.size());
  EXPECT_EQ(next_batched_step(batch, at).error_status().code(), error_code::data_loss);  // past the end
  // Cut short anywhere: the step it cuts is data_loss, the ones before it read back.
  for (std::size_t n = 0; n < batch.size(); ++n) {
    const auto cut = std::span(batch).first(n);
    std::size_t pos = 0;
    int whole = 0;
    for (;;) {
      auto message = next_batched_step(cut, pos);
      if (!message) {
        EXPECT_EQ(message.error_status().code(), error_code::data_loss);
        break;
      }
      ++whole;
    }
    EXPECT_LT(whole, 3) << n;
  }
}

}  // namespace
}  // namespace trialstat::distributed
