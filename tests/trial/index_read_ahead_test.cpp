// SPDX-License-Identifier: Apache-2.0
// Index files read and parsed on threads of their own (host/trial/index_read_ahead.*,
// catalog_options::parse_thread_min_files) give the catalog one thread gives — names, steps,
// entries, warnings and their order — on every golden trial, on a trial with bad index files,
// and on one with more files than the read-ahead's ring holds; files come in order whatever the
// number of parsing threads; a read-ahead dropped early stops.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <span>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "host/trial/index_read_ahead.hpp"
#include "tests/support/catalog_description.hpp"
#include "tests/support/forwarding_source.hpp"
#include "tests/support/shared_trials.hpp"
#include "tests/support/small_trial.hpp"
#include "trialstat/io/trial_source.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::trial {
namespace {

using testing_support::describe;

std::string load(const std::filesystem::path& root, std::size_t parse_thread_min_files) {
  catalog_options options;
  options.parse_thread_min_files = parse_thread_min_files;
  auto c = catalog::open(root.string(), options);
  return c ? describe(*c) : "error: " + c.error_status().to_string();
}

void expect_both_ways_the_same(const std::filesystem::path& root) {
  const std::string one_thread = load(root, 0);
  ASSERT_EQ(one_thread.rfind("error", 0), std::string::npos) << one_thread;
  EXPECT_EQ(load(root, 1), one_thread) << root;
}

/// A fresh small trial (testing_support::write_small_trial) under a scratch folder.
std::filesystem::path write_trial(const std::string& label, int workers, int steps) {
  const auto root = testing::make_scratch_dir(label);
  testing_support::write_small_trial(root, workers, steps);
  return root;
}

std::filesystem::path index_file(const std::filesystem::path& root, int step, int worker) {
  return root / "index" / "000000000" / fmt::format("{:012d}_worker_{}.json", step, worker);
}

TEST(IndexReadAhead, GoldenTrialsLoadAsOneThreadDoes) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  for (const auto& name : testing::shared_trial_names()) {
    SCOPED_TRACE(name);
    expect_both_ways_the_same(dir / name);
  }
}

TEST(IndexReadAhead, DamagedTrialLoadsAsOneThreadDoesWithTheSameWarnings) {
  // 2 workers × 150 steps: more index files than the ring's 64 slots, so both sides wait.
  const auto root = write_trial("index_read_ahead_damaged", 2, 150);
  std::ofstream(index_file(root, 2, 1), std::ios::trunc) << "{\"meta\": ";                        // not JSON
  std::ofstream(index_file(root, 77, 0), std::ios::trunc) << "{\"meta\": {\"mode\": \"TRAIN\"}}";  // no payload
  std::filesystem::remove(index_file(root, 140, 1));  // scanned from its event file instead
  std::filesystem::copy_file(index_file(root, 3, 0), root / "index" / "000000000" / "3_worker_0.json");
  const std::string one_thread = load(root, 0);
  EXPECT_NE(one_thread.find("warning index/000000000/000000000002_worker_1.json"), std::string::npos);
  EXPECT_NE(one_thread.find("entry t0 s149 w1"), std::string::npos);  // the last step is there
  EXPECT_EQ(load(root, 1), one_thread);
  EXPECT_EQ(load(root, 300), one_thread);  // at the threshold (300 files to load, the second spelling skipped as a duplicate)
}

TEST(IndexReadAhead, HandsOverEveryFileInOrderAndStopsWhenDroppedEarly) {
  const auto root = write_trial("index_read_ahead_order", 1, 100);
  auto source = io::open_trial_source(root.string());
  ASSERT_TRUE(source.has_value());
  std::vector<std::string> keys;
  for (int step = 0; step < 100; ++step) {
    keys.push_back(fmt::format("index/000000000/{:012d}_worker_0.json", step));
  }
  keys.emplace_back("index/000000000/missing.json");
  detail::parsed_index parsed;
  for (const unsigned threads : {1u, 2u, 4u}) {
    detail::index_read_ahead ahead(**source, keys, 16, threads);
    const std::size_t blocks = (keys.size() + ahead.block_keys() - 1) / ahead.block_keys();
    EXPECT_EQ(ahead.threads(), std::min<std::size_t>(threads, blocks));  // never more threads than blocks
    for (int step = 0; step < 100; ++step) {
      const detail::index_outcome outcome = ahead.next(parsed);
      ASSERT_EQ(outcome.what, detail::index_outcome::kind::parsed) << step << ": " << outcome.problem.to_string();
      ASSERT_EQ(parsed.tensors.size(), 2u) << step;
      EXPECT_EQ(parsed.mode_step, step);
    }
    const detail::index_outcome missing = ahead.next(parsed);
    EXPECT_EQ(missing.what, detail::index_outcome::kind::read_failed);
    EXPECT_NE(missing.problem.message().find("missing.json"), std::string::npos) << missing.problem.to_string();
  }
  {
    detail::index_read_ahead dropped(**source, keys, 16);
    EXPECT_EQ(dropped.next(parsed).what, detail::index_outcome::kind::parsed);
  }  // destroyed with 100 files not taken: returns (joins its threads)
}

/// A local source whose read_objects stops after `limit` keys of each call (breaking its contract).
class short_reading_source final : public testing_support::forwarding_source {
 public:
  short_reading_source(std::shared_ptr<const io::trial_source> inner, std::size_t limit)
      : forwarding_source(std::move(inner)), limit_(limit) {}
  void read_objects(std::span<const std::string> keys, const io::object_callback& on_object,
                    uint64_t max_bytes) const override {
    inner().read_objects(keys.first(std::min(limit_, keys.size())), on_object, max_bytes);
  }

 private:
  std::size_t limit_;
};

TEST(IndexReadAhead, SourceThatSkipsKeysGivesReadFailuresNotAHang) {
  const auto root = write_trial("index_read_ahead_short", 1, 40);
  auto local = io::open_trial_source(root.string());
  ASSERT_TRUE(local.has_value());
  // The threads read blocks of keys with one read_objects call each: this source hands over the
  // first 10 of every block.
  constexpr std::size_t limit = 10;
  static_assert(limit < detail::index_read_ahead_min_block_keys);
  const short_reading_source source(*local, limit);
  std::vector<std::string> keys;
  for (int step = 0; step < 40; ++step) keys.push_back(fmt::format("index/000000000/{:012d}_worker_0.json", step));
  for (const unsigned threads : {1u, 2u, 3u}) {
    detail::index_read_ahead ahead(source, keys, 16, threads);
    detail::parsed_index parsed;
    for (std::size_t step = 0; step < keys.size(); ++step) {
      const detail::index_outcome outcome = ahead.next(parsed);
      const bool handed_over = step % ahead.block_keys() < limit;
      EXPECT_EQ(outcome.what, handed_over ? detail::index_outcome::kind::parsed : detail::index_outcome::kind::read_failed)
          << step << " threads=" << threads;
      if (!handed_over) {
        EXPECT_NE(outcome.problem.message().find("did not read it"), std::string::npos);
      }
    }
  }
}

}  // namespace
}  // namespace trialstat::trial
