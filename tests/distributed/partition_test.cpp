// SPDX-License-Identifier: Apache-2.0
// The partitioning arithmetic of MPI runs (host/distributed/common/partition.cpp), no MPI.
#include <gtest/gtest.h>

#include <numeric>

#include "trialstat/distributed/partition.hpp"
#include "trialstat/distributed/world.hpp"

namespace trialstat::distributed {
namespace {

TEST(AssignWorkers, LongestFirstToTheLeastLoaded) {
  // 9 8 7 6 5 4 over 3 ranks: 9→0, 8→1, 7→2, 6→2 (13), 5→1 (13), 4→0 (13).
  const std::vector<uint64_t> bytes = {9, 8, 7, 6, 5, 4};
  EXPECT_EQ(assign_workers_by_bytes(bytes, 3), (std::vector<int>{0, 1, 2, 2, 1, 0}));
  // Ties: lower worker id first, lower rank first.
  const std::vector<uint64_t> equal = {1, 1, 1, 1};
  EXPECT_EQ(assign_workers_by_bytes(equal, 2), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(assign_workers_by_bytes(equal, 1), (std::vector<int>{0, 0, 0, 0}));
}

TEST(SplitContiguous, EqualWeightsGiveEqualParts) {
  const std::vector<uint64_t> w(12, 10);
  EXPECT_EQ(split_contiguous_by_weight(w, 3), (std::vector<std::size_t>{0, 4, 8, 12}));
  EXPECT_EQ(split_contiguous_by_weight(w, 1), (std::vector<std::size_t>{0, 12}));
  EXPECT_EQ(split_contiguous_by_weight(w, 12), (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
}

TEST(SplitContiguous, BalancesBytesNotCounts) {
  // One heavy step: 100 | 1 1 1 ... the first part is the heavy step alone.
  std::vector<uint64_t> w = {100};
  for (int i = 0; i < 100; ++i) w.push_back(1);
  const auto b = split_contiguous_by_weight(w, 2);
  EXPECT_EQ(b, (std::vector<std::size_t>{0, 1, 101}));
  // The straddling element goes to the nearer side: 3 3 3 3 over 2 → 2 + 2; 5 1 1 1 1 1 → [5] [1 ×5].
  EXPECT_EQ(split_contiguous_by_weight(std::vector<uint64_t>{3, 3, 3, 3}, 2), (std::vector<std::size_t>{0, 2, 4}));
  EXPECT_EQ(split_contiguous_by_weight(std::vector<uint64_t>{5, 1, 1, 1, 1, 1}, 2), (std::vector<std::size_t>{0, 1, 6}));
}

TEST(SplitContiguous, MorePartsThanElementsAndEmptyInput) {
  EXPECT_EQ(split_contiguous_by_weight(std::vector<uint64_t>{7, 7}, 4), (std::vector<std::size_t>{0, 0, 1, 1, 2}));
  EXPECT_EQ(split_contiguous_by_weight(std::vector<uint64_t>{}, 3), (std::vector<std::size_t>{0, 0, 0, 0}));
  // All-zero weights: boundaries stay ordered.
  const auto b = split_contiguous_by_weight(std::vector<uint64_t>{0, 0, 0}, 2);
  EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
  EXPECT_EQ(b.front(), 0U);
  EXPECT_EQ(b.back(), 3U);
}

TEST(HaloBegin, DepthLastSavedStepsOfEachSeries) {
  // Series A saved every step, B every 5th step (0, 5, 10, 15), C only after the chunk.
  std::vector<std::size_t> a(20);
  std::iota(a.begin(), a.end(), std::size_t{0});
  const std::vector<std::vector<std::size_t>> series = {a, {0, 5, 10, 15}, {18, 19}};
  // Chunk [12, 16): A needs 11 (depth 1) or 10 (depth 2); B has 15 in the chunk, needs 10 / 5.
  EXPECT_EQ(halo_begin(series, 12, 16, 1), 10U);
  EXPECT_EQ(halo_begin(series, 12, 16, 2), 5U);
  // Depth larger than the saved steps before the chunk: from the series' first step.
  EXPECT_EQ(halo_begin(series, 12, 16, 9), 0U);
  // No history: no halo. A chunk at the start: nothing before it.
  EXPECT_EQ(halo_begin(series, 12, 16, 0), 12U);
  EXPECT_EQ(halo_begin(series, 0, 4, 3), 0U);
  // Chunk [16, 18): B has no step in it, A needs 15 (depth 1).
  EXPECT_EQ(halo_begin(series, 16, 18, 1), 15U);
}

TEST(VisibleDevice, LocalRankModuloTheVisibleDevices) {
  const std::vector<std::string> none;
  EXPECT_EQ(visible_device_for_rank(0, none, 4), "0");
  EXPECT_EQ(visible_device_for_rank(5, none, 4), "1");
  EXPECT_EQ(visible_device_for_rank(3, none, 1), std::nullopt);  // one GPU: nothing to choose
  EXPECT_EQ(visible_device_for_rank(3, none, 0), std::nullopt);
  const std::vector<std::string> listed = {"2", "3", "GPU-abc"};
  EXPECT_EQ(visible_device_for_rank(0, listed, 8), "2");
  EXPECT_EQ(visible_device_for_rank(2, listed, 8), "GPU-abc");
  EXPECT_EQ(visible_device_for_rank(4, listed, 8), "3");
  const std::vector<std::string> one = {"7"};
  EXPECT_EQ(visible_device_for_rank(1, one, 8), std::nullopt);
}

}  // namespace
}  // namespace trialstat::distributed
