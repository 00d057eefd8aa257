// SPDX-License-Identifier: Apache-2.0
// A catalog loaded by a group of ranks (each parsing its share of the index files, issue 10) is
// the catalog one process loads: names, steps, entries, warnings — on every golden trial and on
// a trial with bad index files, for groups of 1 to 4 ranks run as threads.
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "host/trial/index_share.hpp"
#include "tests/distributed/thread_transport.hpp"
#include "tests/support/catalog_description.hpp"
#include "tests/support/forwarding_source.hpp"
#include "tests/support/shared_trials.hpp"
#include "tests/support/small_trial.hpp"
#include "trialstat/distributed/catalog_group.hpp"

namespace trialstat::distributed {
namespace {

using testing_support::thread_network;
using testing_support::thread_transport;
using ::trialstat::testing_support::describe;

/// The catalog of `root` loaded by `ranks` threads as one group, described by each rank; each
/// rank reads it through `wrap(its local source)` when given.
using source_wrapper = std::function<std::shared_ptr<const io::trial_source>(std::shared_ptr<const io::trial_source>)>;
std::vector<std::string> load_as_group(const std::filesystem::path& root, int ranks,
                                       trial::catalog_options options = {}, const source_wrapper& wrap = {}) {
  thread_network net(ranks);
  std::vector<std::string> out(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      thread_transport t(net, r);
      trial::catalog_options mine = options;
      mine.group = catalog_group(t);
      auto local = io::open_trial_source(root.string());
      if (!local) {
        out[static_cast<std::size_t>(r)] = "error: " + local.error_status().to_string();
        return;
      }
      auto c = trial::catalog::open(wrap ? wrap(*local) : *local, mine);
      out[static_cast<std::size_t>(r)] = c ? describe(*c) : "error: " + c.error_status().to_string();
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

void expect_group_loads_the_same(const std::filesystem::path& root, const source_wrapper& wrap = {}) {
  auto alone = trial::catalog::open(root.string());
  ASSERT_TRUE(alone.has_value()) << alone.error_status().to_string();
  const std::string want = describe(*alone);
  ASSERT_FALSE(alone->entries().empty()) << root;
  for (int ranks = 1; ranks <= 4; ++ranks) {
    const auto got = load_as_group(root, ranks, {}, wrap);
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(got[static_cast<std::size_t>(r)], want) << root << ": rank " << r << " of " << ranks;
    }
  }
}

TEST(CatalogGroup, GoldenTrialsLoadAsOneProcessDoes) {
  TRIALSTAT_REQUIRE_SHARED_TRIALS(dir);
  for (const auto& name : testing::shared_trial_names()) {
    SCOPED_TRACE(name);
    expect_group_loads_the_same(dir / name);
  }
}

/// 3 workers × 10 steps with shapes and reductions, then index files made bad in several ways.
std::filesystem::path write_damaged_trial() {
  const auto root = testing::make_scratch_dir("catalog_group_damaged");
  ::trialstat::testing_support::write_small_trial(root, 3, 10);
  const auto index = [&](int step, int worker) {
    return root / "index" / "000000000" / fmt::format("{:012d}_worker_{}.json", step, worker);
  };
  std::ofstream(index(2, 1), std::ios::trunc) << "{\"meta\": ";                        // not JSON
  std::ofstream(index(5, 0), std::ios::trunc) << "{\"meta\": {\"mode\": \"TRAIN\"}}";  // no payload
  std::filesystem::remove(index(7, 2));  // scanned from its event file instead
  std::ofstream(root / "index" / "000000000" / "oops.json") << "{}";  // a bad name
  // A second index file for step 3, worker 0 (another spelling of the step).
  std::filesystem::copy_file(index(3, 0), root / "index" / "000000000" / "3_worker_0.json");
  return root;
}

TEST(CatalogGroup, DamagedTrialLoadsAsOneProcessDoes) {
  const auto root = write_damaged_trial();
  auto alone = trial::catalog::open(root.string());
  ASSERT_TRUE(alone.has_value());
  EXPECT_GE(alone->warnings().size(), 4u);  // the damage is seen
  expect_group_loads_the_same(root);
}

TEST(CatalogGroup, SourceWithoutItsOwnListingSplitLoadsTheSame) {
  // The base class's listing share (S3's): rank 0 lists each folder for the group.
  const auto root = write_damaged_trial();
  expect_group_loads_the_same(root, [](std::shared_ptr<const io::trial_source> local) {
    return std::make_shared<::trialstat::testing_support::forwarding_source>(std::move(local));
  });
}

/// A local source whose listing share `failing_share` of `failing_sub` fails.
class failing_listing final : public ::trialstat::testing_support::forwarding_source {
 public:
  failing_listing(std::shared_ptr<const io::trial_source> inner, std::string sub, int share)
      : forwarding_source(std::move(inner)), sub_(std::move(sub)), share_(share) {}
  status list_share(std::string_view sub, std::string_view start_after, int share, int shares,
                    std::vector<io::object_info>& out, const io::folder_filter& skip_folder) const override {
    if (sub == sub_ && share == share_) return status(error_code::io_error, "cannot list " + sub_ + ": injected");
    return inner().list_share(sub, start_after, share, shares, out, skip_folder);
  }

 private:
  std::string sub_;
  int share_;
};

TEST(CatalogGroup, ListingFailureOnOneRankFailsEveryRankAlike) {
  // Rank 1 alone cannot list its share of events/ (index/): every rank ends with its error, none
  // waits for the others forever, none loads a catalog without those files.
  const auto root = write_damaged_trial();
  for (const std::string sub : {"index", "events"}) {
    const auto got = load_as_group(root, 3, {}, [&](std::shared_ptr<const io::trial_source> local) {
      return std::make_shared<failing_listing>(std::move(local), sub, 1);
    });
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(got[static_cast<std::size_t>(r)], "error: io_error: cannot list " + sub + ": injected")
          << sub << ", rank " << r;
    }
  }
}

TEST(CatalogGroup, MalformedListingShareIsDataLoss) {
  const std::vector<io::object_info> listed{{"index/a.json", 0}, {"index/b.json", 0}};
  const auto bytes = trial::detail::write_listing_share(status::success(), listed);
  std::vector<std::string> keys;
  ASSERT_TRUE(trial::detail::read_listing_share(bytes, 2, keys).ok());
  EXPECT_EQ(keys, (std::vector<std::string>{"index/a.json", "index/b.json"}));
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    keys.clear();
    const status s = trial::detail::read_listing_share(std::span(bytes).first(cut), 2, keys);
    EXPECT_EQ(s.code(), error_code::data_loss) << cut;
    EXPECT_NE(s.message().find("rank 2"), std::string::npos) << s.message();
  }
  const auto failed = trial::detail::write_listing_share(status(error_code::io_error, "cannot list x"), {});
  EXPECT_EQ(trial::detail::read_listing_share(failed, 1, keys).to_string(), "io_error: cannot list x");
}

TEST(CatalogGroup, RanksThatListOtherFilesFail) {
  const auto root = write_damaged_trial();
  thread_network net(2);
  std::vector<std::optional<status>> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      thread_transport t(net, r);
      trial::catalog_options options;
      if (r == 1) options.range_begin = 4;  // rank 1 lists fewer index files
      options.group = catalog_group(t);
      auto c = trial::catalog::open(root.string(), options);
      if (!c) errors[static_cast<std::size_t>(r)] = c.error_status();
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(errors[static_cast<std::size_t>(r)].has_value()) << "rank " << r;
    EXPECT_EQ(errors[static_cast<std::size_t>(r)]->code(), error_code::invalid_argument);
    EXPECT_NE(errors[static_cast<std::size_t>(r)]->message().find("the ranks see different files"), std::string::npos)
        << errors[static_cast<std::size_t>(r)]->message();
  }
}

TEST(CatalogGroup, ShareSlicesCoverTheListingOnce) {
  for (std::size_t files : {0u, 1u, 5u, 64000u}) {
    for (int size = 1; size <= 5; ++size) {
      std::size_t next = 0;
      for (int rank = 0; rank < size; ++rank) {
        const auto slice = trial::detail::share_of(files, rank, size);
        EXPECT_EQ(slice.first, next);
        EXPECT_LE(slice.count, files / static_cast<std::size_t>(size) + 1);
        next += slice.count;
      }
      EXPECT_EQ(next, files);
    }
  }
}

TEST(CatalogGroup, MalformedShareIsDataLoss) {
  trial::detail::parsed_index parsed;
  parsed.add_tensor("a", 0, 10);
  parsed.event_file_name = "events/x.tfevents";
  parsed.has_event_file_name = true;
  trial::detail::share_writer writer(1, 42, {0, 1});
  writer.add({}, parsed);
  const auto bytes = writer.take();
  // Whole: reads back.
  auto reader = trial::detail::share_reader::open(bytes, 1, 1, 42, {0, 1});
  ASSERT_TRUE(reader.has_value());
  trial::detail::index_outcome outcome;
  trial::detail::parsed_index back;
  ASSERT_TRUE(reader->next(outcome, back).ok());
  EXPECT_EQ(back.name(back.tensors[0].name_offset, back.tensors[0].name_length), "a");
  EXPECT_EQ(back.event_file_name, "events/x.tfevents");
  EXPECT_TRUE(reader->finish().ok());
  // Cut anywhere after the header: data_loss naming the rank, never a crash.
  for (std::size_t cut = 36; cut < bytes.size(); ++cut) {
    auto partial = trial::detail::share_reader::open(std::span(bytes).first(cut), 1, 1, 42, {0, 1});
    ASSERT_TRUE(partial.has_value()) << cut;
    const status s = partial->next(outcome, back);
    ASSERT_FALSE(s.ok()) << cut;
    EXPECT_EQ(s.code(), error_code::data_loss);
    EXPECT_NE(s.message().find("rank 1"), std::string::npos) << s.message();
  }
  // Another listing: invalid_argument.
  EXPECT_EQ(trial::detail::share_reader::open(bytes, 1, 2, 42, {0, 1}).error_status().code(),
            error_code::invalid_argument);
}

}  // namespace
}  // namespace trialstat::distributed
