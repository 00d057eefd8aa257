// SPDX-License-Identifier: Apache-2.0
// report::make_background_writer: the rows it writes are byte-for-byte those of the wrapped
// writer (JSON with histograms, update ratios and log histograms; CSV) on a real trial of many
// steps, with the queue budget at 1 record (every step waits) and at the default; the copies are
// the writer's own (the producer's records overwritten after write_step do not change the
// output); a failure of the wrapped writer reaches the producer; steps after finish() are written.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "tests/report/writer_output.hpp"
#include "tests/support/files.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/report/background_writer.hpp"
#include "trialstat/report/statistics_writer.hpp"
#include "trialstat/trial/catalog.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat {
namespace {

/// 40 steps of three weights (sizes 1, 7 and 300, one with a NaN and an Inf at some steps) and a
/// scalar loss: rows of every length, update ratios, non-finite values.
std::filesystem::path write_trial() {
  const auto root = testing::make_scratch_dir("background_writer");
  writer::writer_options options;
  writer::collection_spec weights;
  weights.name = "weights";
  weights.tensor_names = {"a.weight", "b.weight", "c.weight"};
  options.collections = {weights};
  auto w = writer::trial_writer::create(root, "worker_0", options);
  EXPECT_TRUE(w.has_value()) << w.error_status().to_string();
  for (int s = 0; s < 40; ++s) {
    EXPECT_TRUE(w->begin_step(s, mode::train, s).ok());
    const int sizes[3] = {1, 7, 300};
    const char* names[3] = {"a.weight", "b.weight", "c.weight"};
    for (int t = 0; t < 3; ++t) {
      std::vector<float> values(static_cast<std::size_t>(sizes[t]));
      for (std::size_t i = 0; i < values.size(); ++i) {
        values[i] = std::sin(0.37f * static_cast<float>(i + 1) + 0.11f * static_cast<float>(s * (t + 1))) *
                    (1.0f + 0.5f * static_cast<float>(t));
      }
      if (t == 1 && s % 9 == 4) values[3] = NAN;
      if (t == 2 && s % 11 == 5) values[17] = INFINITY;
      const std::vector<int64_t> shape = {sizes[t]};
      const tensor_view view{reinterpret_cast<const std::byte*>(values.data()), dtype::float32, shape, sizes[t],
                             memory_kind::host};
      EXPECT_TRUE(w->add_tensor(names[t], view).ok());
    }
    const float loss = 1.0f / static_cast<float>(s + 1);
    const tensor_view scalar{reinterpret_cast<const std::byte*>(&loss), dtype::float32, {}, 1, memory_kind::host};
    EXPECT_TRUE(w->add_tensor("loss", scalar).ok());
    EXPECT_TRUE(w->end_step().ok());
  }
  EXPECT_TRUE(w->close(true).ok());
  return root;
}

/// The whole output of `format` over the trial at `root` (16 bins, log histograms for JSON),
/// written directly or through a background writer with `queue` records at most (0: direct).
std::string output(const std::filesystem::path& root, report::output_format format, std::size_t queue) {
  testing::writer_wrapper wrap;
  if (queue > 0) {
    wrap = [queue](std::unique_ptr<report::statistics_writer> inner) {
      return report::make_background_writer(std::move(inner), queue);
    };
  }
  return testing::writer_output(root, format,
                                {.histogram_bins = 16, .log_histogram = format == report::output_format::json},
                                "out-" + std::to_string(queue) + ".txt", wrap);
}

TEST(BackgroundWriter, WritesExactlyWhatTheWrappedWriterWrites) {
  const auto root = write_trial();
  for (const auto format : {report::output_format::json, report::output_format::csv, report::output_format::table}) {
    const std::string direct = output(root, format, 0);
    ASSERT_GT(direct.size(), 10000u);
    EXPECT_EQ(output(root, format, 1), direct) << "queue of 1 record";
    EXPECT_EQ(output(root, format, report::default_background_queue_records), direct) << "default queue";
  }
}

/// Records what it is given, as text, one line per record; throws at its `fail_at`-th step.
class recording_writer final : public report::statistics_writer {
 public:
  recording_writer(std::string* text, int fail_at) : text_(text), fail_at_(fail_at) {}
  void write_step(const trial::catalog&, const stats::step_statistics& step) override {
    if (++steps_ == fail_at_) throw std::bad_alloc();
    for (const auto& r : step.records) {
      *text_ += std::to_string(step.step) + ":" + std::to_string(r.tensor) + ":" +
                std::to_string(r.moments ? r.moments->sum : -1.0) + ":" +
                std::to_string(r.histogram ? r.histogram->counts.size() : 0) + "\n";
    }
  }
  void finish() override { *text_ += "finished\n"; }

 private:
  std::string* text_;
  int fail_at_;
  int steps_ = 0;
};

/// A step of `n` records whose sums and histogram sizes are `seed`-dependent.
std::vector<stats::statistics_record> records_of(int64_t seed, std::size_t n) {
  std::vector<stats::statistics_record> records(n);
  for (std::size_t i = 0; i < n; ++i) {
    records[i].step = seed;
    records[i].tensor = static_cast<trial::tensor_id>(i);
    records[i].moments.emplace();
    records[i].moments->sum = static_cast<double>(seed * 10 + static_cast<int64_t>(i)) + 0.5;
    records[i].histogram.emplace();
    records[i].histogram->counts.assign(static_cast<std::size_t>(seed % 5 + 1), seed);
  }
  return records;
}

TEST(BackgroundWriter, CopiesTheRecordsItIsGiven) {
  auto trial = trial::catalog::open(write_trial().string());
  ASSERT_TRUE(trial.has_value());
  std::string expected;
  std::string got;
  recording_writer direct(&expected, -1);
  auto background = report::make_background_writer(std::make_unique<recording_writer>(&got, -1), 3);
  std::vector<stats::statistics_record> producer;  // reused and overwritten, as the pipeline does
  for (int64_t s = 0; s < 200; ++s) {
    producer = records_of(s, static_cast<std::size_t>(s % 4 + 1));
    const stats::step_statistics step{s, mode::train, s, producer};
    direct.write_step(*trial, step);
    background->write_step(*trial, step);
    for (auto& r : producer) {  // the producer moves on at once
      r.moments->sum = -7;
      r.histogram->counts.assign(9, -7);
    }
  }
  direct.finish();
  background->finish();
  EXPECT_EQ(got, expected);
  // After finish(), a late step is written in place (nothing drains the queue any more).
  producer = records_of(500, 2);
  background->write_step(*trial, {500, mode::train, 500, producer});
  EXPECT_NE(got.find("500:1:5001.5"), std::string::npos);
}

TEST(BackgroundWriter, AFailureOfTheWrappedWriterReachesTheProducer) {
  auto trial = trial::catalog::open(write_trial().string());
  ASSERT_TRUE(trial.has_value());
  std::string got;
  auto background = report::make_background_writer(std::make_unique<recording_writer>(&got, 5), 1);
  bool thrown = false;
  try {
    for (int64_t s = 0; s < 50; ++s) {
      const auto records = records_of(s, 2);
      background->write_step(*trial, {s, mode::train, s, records});
    }
    background->finish();
  } catch (const std::bad_alloc&) {
    thrown = true;
  }
  EXPECT_TRUE(thrown);
  EXPECT_EQ(got.find("finished"), std::string::npos);  // the wrapped writer was not finished
  EXPECT_EQ(got.find("\n4:"), std::string::npos);     // steps after the failure were dropped
}

}  // namespace
}  // namespace trialstat
