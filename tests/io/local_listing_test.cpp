// SPDX-License-Identifier: Apache-2.0
// Local listings and their shares (trial_source::list_share, issue 10): the shares of a group,
// concatenated in order, are the whole sorted listing — whatever the number of shares, with
// files and folders whose names sort around each other, links, empty folders and start_after.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/forwarding_source.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/io/trial_source.hpp"

namespace trialstat::io {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> keys_of(const std::vector<object_info>& listed) {
  std::vector<std::string> keys;
  for (const auto& object : listed) keys.push_back(object.key);
  return keys;
}

/// A folder whose names sort tightly: a file `a.json` and a folder `a` (its keys `a/...` sort
/// after `a.json`), `a-b` (between `a.json` and `a/`), nested and empty folders, a link to a
/// file (listed) and one to a folder (not followed), and a step-bucket layout.
fs::path write_tree() {
  const fs::path root = testing::make_scratch_dir("local_listing");
  const fs::path sub = root / "index";
  const auto touch = [](const fs::path& p) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "x";
  };
  touch(sub / "a.json");
  touch(sub / "a" / "1.json");
  touch(sub / "a" / "deep" / "2.json");
  touch(sub / "a-b" / "3.json");
  touch(sub / "b");
  fs::create_directories(sub / "empty");
  for (int bucket = 0; bucket < 3; ++bucket) {
    for (int step = 0; step < 4; ++step) {
      touch(sub / ("00000000" + std::to_string(bucket)) / ("00000000000" + std::to_string(step) + "_worker_0.json"));
    }
  }
  fs::create_symlink(sub / "b", sub / "link-to-file");
  fs::create_directory_symlink(sub / "a", sub / "link-to-folder");
  return root;
}

TEST(LocalListing, SharesConcatenateToTheSortedListing) {
  const fs::path root = write_tree();
  auto source = open_trial_source(root.string());
  ASSERT_TRUE(source.has_value()) << source.error_status().to_string();
  for (const std::string start_after : {"", "index/a.json", "index/000000001/000000000002_worker_0.json"}) {
    std::vector<object_info> whole;
    ASSERT_TRUE((*source)->list("index", start_after, whole).ok());
    const auto want = keys_of(whole);
    ASSERT_TRUE(std::is_sorted(want.begin(), want.end()));
    if (start_after.empty()) {
      ASSERT_EQ(want.size(), 18u);  // 12 bucketed, a.json, a/1, a/deep/2, a-b/3, b, link-to-file
      EXPECT_EQ(want.front(), "index/000000000/000000000000_worker_0.json");
      EXPECT_EQ(want.back(), "index/link-to-file");
    }
    for (int shares = 1; shares <= 12; ++shares) {  // more shares than entries too
      std::vector<std::string> joined;
      for (int share = 0; share < shares; ++share) {
        std::vector<object_info> part;
        const status listed = (*source)->list_share("index", start_after, share, shares, part, {});
        ASSERT_TRUE(listed.ok()) << listed.to_string();
        const auto keys = keys_of(part);
        EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
        joined.insert(joined.end(), keys.begin(), keys.end());
      }
      EXPECT_EQ(joined, want) << shares << " shares, start_after '" << start_after << "'";
    }
  }
}

TEST(LocalListing, StartAfterListsExactlyTheKeysAfterIt) {
  // Folders wholly before start_after are skipped unread; what is listed must still be every key
  // after it — including around folder names that are prefixes of start_after or of each other.
  const fs::path root = write_tree();
  auto source = open_trial_source(root.string());
  ASSERT_TRUE(source.has_value());
  std::vector<object_info> whole;
  ASSERT_TRUE((*source)->list("index", "", whole).ok());
  for (const std::string start_after :
       {"index/", "index/0", "index/000000001", "index/000000001/", "index/000000001/000000000003_worker_0.json",
        "index/000000001/zzz", "index/0000000010", "index/a", "index/a.json", "index/a/", "index/a/1.json",
        "index/a/deep", "index/a/deep/", "index/a-b/3.json", "index/b", "index/z", "index0"}) {
    std::vector<std::string> want;
    for (const auto& object : whole) {
      if (object.key > start_after) want.push_back(object.key);
    }
    std::vector<object_info> after;
    ASSERT_TRUE((*source)->list("index", start_after, after).ok());
    EXPECT_EQ(keys_of(after), want) << "start_after '" << start_after << "'";
  }
}

TEST(LocalListing, MissingFolderListsNothingAndBadSharesAreErrors) {
  const fs::path root = write_tree();
  auto source = open_trial_source(root.string());
  ASSERT_TRUE(source.has_value());
  std::vector<object_info> out{{"stale", 0}};
  EXPECT_TRUE((*source)->list_share("events", "", 1, 2, out, {}).ok());
  EXPECT_TRUE(out.empty());
  for (const auto& [share, shares] : {std::pair{2, 2}, std::pair{-1, 2}, std::pair{0, 0}}) {
    const status bad = (*source)->list_share("index", "", share, shares, out, {});
    EXPECT_EQ(bad.code(), error_code::invalid_argument) << share << "/" << shares;
  }
}

TEST(LocalListing, DefaultShareIsTheWholeListingOnShareZero) {
  // What a source without its own split does (S3): share 0 lists everything, the rest nothing.
  const fs::path root = write_tree();
  auto local = open_trial_source(root.string());
  ASSERT_TRUE(local.has_value());
  const testing_support::forwarding_source source(*local);
  std::vector<object_info> whole;
  ASSERT_TRUE(source.list("index", "", whole).ok());
  std::vector<object_info> part;
  ASSERT_TRUE(source.list_share("index", "", 0, 3, part, {}).ok());
  EXPECT_EQ(keys_of(part), keys_of(whole));
  for (int share = 1; share < 3; ++share) {
    ASSERT_TRUE(source.list_share("index", "", share, 3, part, {}).ok());
    EXPECT_TRUE(part.empty());
  }
  EXPECT_EQ(source.list_share("index", "", 3, 3, part, {}).code(), error_code::invalid_argument);
}

}  // namespace
}  // namespace trialstat::io
