// SPDX-License-Identifier: Apache-2.0
// read_plan: merging the requests added for the later rules (percentiles, equality counts,
// channel sums, kept values) and the record's lookup helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "trialstat/plan/read_plan.hpp"
#include "trialstat/stats/statistics_record.hpp"

namespace trialstat::plan {
namespace {

TEST(ReadPlanRuleStats, MergesAsSortedSetsInAnyOrder) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  stats::statistics_request a;
  a.moments = false;
  a.percentiles = {95, 5, 95, nan};
  a.equal_values = {0, 2};
  a.channel_axes = {1};
  stats::statistics_request b;
  b.moments = false;
  b.percentiles = {50, 5};
  b.equal_values = {-0.0, 1};
  b.channel_axes = {-1, 1};
  b.keep_values = true;

  read_plan ab;
  ab.request(1, a);
  ab.request(1, b);
  read_plan ba;
  ba.request(1, b);
  ba.request(1, a);
  for (const read_plan* plan : {&ab, &ba}) {
    const stats::statistics_request* r = plan->find(1);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->percentiles, (std::vector<double>{5, 50, 95}));  // NaN dropped, duplicates merged
    EXPECT_EQ(r->equal_values, (std::vector<double>{0, 1, 2}));    // −0.0 == 0
    EXPECT_EQ(r->channel_axes, (std::vector<int64_t>{-1, 1}));
    EXPECT_TRUE(r->keep_values);
    EXPECT_FALSE(r->moments);
    EXPECT_TRUE(r->needs_raw());
  }
  // A single request is normalised too.
  read_plan single;
  single.request(2, a);
  EXPECT_EQ(single.find(2)->percentiles, (std::vector<double>{5, 95}));
  EXPECT_FALSE(single.find(2)->keep_values);
}

TEST(ReadPlanRuleStats, NeedsRaw) {
  stats::statistics_request r;
  r.moments = false;
  EXPECT_FALSE(r.needs_raw());
  r.saved_reductions = true;
  EXPECT_FALSE(r.needs_raw());
  r.equal_values = {3};
  EXPECT_TRUE(r.needs_raw());
  stats::statistics_request k;
  k.moments = false;
  k.keep_values = true;
  EXPECT_TRUE(k.needs_raw());
}

TEST(ReadPlanRuleStats, RecordLookups) {
  stats::statistics_record record;
  record.shape = {4, 3, 2};
  record.percentiles = {{5, 0.25}, {95, 9.5}};
  record.equal_counts = {{0, 7}};
  stats::channel_sums c;
  c.axis = 2;
  c.sum = {1, 2};
  record.channel_sums.push_back(c);
  EXPECT_EQ(record.percentile(95), 9.5);
  EXPECT_FALSE(record.percentile(50).has_value());
  EXPECT_EQ(record.equal_count_of(0), 7);
  EXPECT_FALSE(record.equal_count_of(1).has_value());
  ASSERT_NE(record.channel_sums_along(-1), nullptr);
  EXPECT_EQ(record.channel_sums_along(2)->sum[1], 2.0);
  EXPECT_EQ(record.channel_sums_along(1), nullptr);
  EXPECT_EQ(record.values().data, nullptr);
}

}  // namespace
}  // namespace trialstat::plan
