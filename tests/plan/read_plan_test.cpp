// SPDX-License-Identifier: Apache-2.0
// read_plan / stats::statistics_request::merge: the union of several rules' needs.
#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "trialstat/plan/read_plan.hpp"

namespace trialstat::plan {
namespace {

using kind = stats::axis0_predicate::kind;

TEST(ReadPlan, MergesRequestsPerTensor) {
  read_plan plan;
  EXPECT_EQ(plan.find(3), nullptr);
  EXPECT_EQ(plan.max_history_depth(), 0);

  stats::statistics_request a;
  a.moments = false;
  a.history_depth = 2;
  a.allclose = {{1e-5, 1e-8, false}};
  a.axis0 = {{kind::open_interval, -1.0, 1.0}};
  plan.request(3, a);

  stats::statistics_request b;
  b.moments = true;
  b.histogram_bins = 64;
  b.history_depth = 1;
  b.saved_reductions = true;
  b.allclose = {{1e-3, 0.0, true}, {1e-5, 1e-8, false}};
  b.axis0 = {{kind::positive, 7.0, 9.0}, {kind::open_interval, -1.0, 1.0}};
  plan.request(3, b);
  plan.request(5, a);

  const stats::statistics_request* r = plan.find(3);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->moments);
  EXPECT_EQ(r->histogram_bins, 64);
  EXPECT_EQ(r->history_depth, 2);
  EXPECT_TRUE(r->saved_reductions);
  // Sorted, duplicate-free sets.
  ASSERT_EQ(r->allclose.size(), 2u);
  EXPECT_EQ(r->allclose[0], (stats::allclose_params{1e-5, 1e-8, false}));
  EXPECT_EQ(r->allclose[1], (stats::allclose_params{1e-3, 0.0, true}));
  ASSERT_EQ(r->axis0.size(), 2u);
  EXPECT_EQ(r->axis0[0].what, kind::positive);  // positive counts first, bounds dropped
  EXPECT_EQ(r->axis0[0].lo, 0.0);
  EXPECT_EQ(r->axis0[1].what, kind::open_interval);

  EXPECT_EQ(plan.requests().size(), 2u);
  EXPECT_EQ(plan.max_history_depth(), 2);
  EXPECT_FALSE(plan.find(5)->moments);
}

TEST(ReadPlan, CopiesAndMovesFindTheirOwnRequests) {
  stats::statistics_request a;
  a.histogram_bins = 16;
  stats::statistics_request b;
  b.histogram_bins = 32;
  auto original = std::make_unique<read_plan>();
  original->request(7, a);
  original->request(2, b);
  original->step_begin = 4;

  read_plan copy(*original);
  read_plan assigned;
  assigned.request(100, a);  // replaced by the assignment
  assigned = *original;
  original->request(7, b);  // merged into the original only
  EXPECT_EQ(original->find(7)->histogram_bins, 32);
  original.reset();         // the copies' look-ups must not point into it

  for (const read_plan* p : {&copy, &assigned}) {
    ASSERT_NE(p->find(7), nullptr);
    EXPECT_EQ(p->find(7)->histogram_bins, 16);
    EXPECT_EQ(p->find(2)->histogram_bins, 32);
    EXPECT_EQ(p->find(3), nullptr);
    EXPECT_EQ(p->find(100), nullptr);
    EXPECT_EQ(p->find(1u << 30), nullptr);
    EXPECT_EQ(p->step_begin, 4);
  }
  read_plan moved(std::move(copy));
  EXPECT_EQ(moved.find(2)->histogram_bins, 32);
  read_plan move_assigned;
  move_assigned = std::move(moved);
  EXPECT_EQ(move_assigned.find(7)->histogram_bins, 16);
  EXPECT_EQ(move_assigned.find(2), &move_assigned.requests().at(2));
}

TEST(ReadPlan, MergeDoesNotDependOnOrder) {
  stats::statistics_request a;
  a.allclose = {{0.1, 0.0, false}};
  a.axis0 = {{kind::open_interval, -2.0, 2.0}};
  stats::statistics_request b;
  b.allclose = {{0.01, 0.0, false}, {0.1, 0.0, false}};
  b.axis0 = {{kind::positive, 0.0, 0.0}};
  read_plan ab;
  ab.request(0, a);
  ab.request(0, b);
  read_plan ba;
  ba.request(0, b);
  ba.request(0, a);
  EXPECT_EQ(ab.find(0)->allclose, ba.find(0)->allclose);
  ASSERT_EQ(ab.find(0)->axis0.size(), ba.find(0)->axis0.size());
  for (std::size_t i = 0; i < ab.find(0)->axis0.size(); ++i) {
    EXPECT_EQ(ab.find(0)->axis0[i].what, ba.find(0)->axis0[i].what);
    EXPECT_EQ(ab.find(0)->axis0[i].lo, ba.find(0)->axis0[i].lo);
  }
}

}  // namespace
}  // namespace trialstat::plan
