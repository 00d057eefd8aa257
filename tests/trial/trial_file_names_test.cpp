// SPDX-License-Identifier: Apache-2.0
// The naming rules of a trial (host/trial/trial_file_names.hpp, spec/FORMAT.md §1, §7, §8): index
// and event file names, collections file names, smdebug's device-name de-serialization and
// reduction record names, each with the names it refuses. (The public reduction names are
// tested in catalog_synthetic_test.cpp, CatalogReductions.)
#include "host/trial/trial_file_names.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace trialstat::trial::detail {
namespace {

TEST(TrialFileNames, HasExtensionLooksAtTheBasename) {
  EXPECT_TRUE(has_extension("index/000000000/000000000005_worker_0.json", ".json"));
  EXPECT_FALSE(has_extension("index/000000000/000000000005_worker_0.json.tmp", ".json"));
  EXPECT_FALSE(has_extension("index/000000000/000000000005_worker_0.csv", ".json"));
  EXPECT_TRUE(has_extension(".json", ".json"));
  EXPECT_FALSE(has_extension("json", ".json"));
}

TEST(TrialFileNames, DeserializeTfDevice) {
  EXPECT_EQ(deserialize_tf_device("_job-worker_replica-0_task-1_device-GPU-0"),
            "/job:worker/replica:0/task:1/device:GPU:0");
  EXPECT_EQ(deserialize_tf_device("worker_0"), "worker/0");
  EXPECT_EQ(deserialize_tf_device(""), "");
}

TEST(TrialFileNames, StepFileNames) {
  auto n = parse_step_file_name("index/000000000/000000000005_worker_0.json", ".json");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->step, 5);
  EXPECT_EQ(n->worker, "worker_0");

  n = parse_step_file_name("events/000000000012/000000000012_algo-1_worker_3.tfevents", ".tfevents");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->step, 12);
  EXPECT_EQ(n->worker, "algo-1_worker_3");  // no "__" in the path: as written

  // A "__" anywhere in the trial-relative path de-serializes the worker (smdebug).
  n = parse_step_file_name("index/000000000/000000000000__job-worker_replica-0.json", ".json");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->worker, "/job:worker/replica:0");

  EXPECT_EQ(parse_step_file_name("000000000007_w.json", ".json")->step, 7);  // no folder
  EXPECT_EQ(parse_step_file_name("9223372036854775807_w.json", ".json")->step,
            std::numeric_limits<int64_t>::max());

  for (const char* bad : {"index/000000000/worker_0.json",        // no step
                          "index/000000000/000000000005.json",    // no worker
                          "index/000000000/000000000005_.json",   // empty worker
                          "index/000000000/000000000005-w.json",  // no '_'
                          "index/000000000/-5_w.json",            // a sign is not a digit
                          "index/000000000/000000000005_w.tfevents",
                          "index/000000000/9223372036854775808_w.json"}) {  // past int64
    EXPECT_FALSE(parse_step_file_name(bad, ".json").has_value()) << bad;
  }
}

TEST(TrialFileNames, CollectionFileNames) {
  bool is_json = false;
  auto w = parse_collection_file_name("collections/000000000/worker_0_collections.json", &is_json);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(*w, "worker_0");
  EXPECT_TRUE(is_json);

  w = parse_collection_file_name("collections/000000000/worker_1_collections.ts", &is_json);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(*w, "worker_1");
  EXPECT_FALSE(is_json);

  // A worker starting with '_' is a serialized TF device name.
  w = parse_collection_file_name("collections/000000000/_job-worker_replica-0_collections.json", &is_json);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(*w, "/job:worker/replica:0");

  w = parse_collection_file_name("collections/a/b/worker_0_collections.json", &is_json);  // deeper
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(*w, "worker_0");

  for (const char* bad : {"collections/worker_0_collections.json",              // no folder
                          "collections//worker_0_collections.json",             // empty folder
                          "collections/000000000/_collections.json",            // no worker
                          "collections/000000000/worker_0_collections.json.tmp",
                          "collections/000000000/worker_0.json",
                          "index/000000000/worker_0_collections.json"}) {
    EXPECT_FALSE(parse_collection_file_name(bad, &is_json).has_value()) << bad;
  }
}

TEST(TrialFileNames, ReductionRecordNames) {
  auto r = parse_reduction_record_name("smdebug/reductions/max/MLP_fc1.weight");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->op, reduction_op::max);
  EXPECT_FALSE(r->abs);
  EXPECT_EQ(r->tensor, "MLP_fc1.weight");

  r = parse_reduction_record_name("smdebug/reductions/abs_l2/gradient/a/b");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->op, reduction_op::l2);
  EXPECT_TRUE(r->abs);
  EXPECT_EQ(r->tensor, "gradient/a/b");  // everything after the reduction

  EXPECT_TRUE(is_reduction_record_name("smdebug/reductions/median/x"));
  EXPECT_FALSE(is_reduction_record_name("smdebug/reduction/max/x"));
  EXPECT_FALSE(is_reduction_record_name("MLP_fc1.weight"));
  for (const char* bad : {"smdebug/reductions/median/x",  // not a reduction
                          "smdebug/reductions/l2_norm/x", "smdebug/reductions/abs_/x",
                          "smdebug/reductions/max/",      // no tensor
                          "smdebug/reductions/max",       // no '/'
                          "smdebug/reductions/", "MLP_fc1.weight"}) {
    EXPECT_FALSE(parse_reduction_record_name(bad).has_value()) << bad;
  }
}

TEST(TrialFileNames, EndMarker) { EXPECT_EQ(end_marker_key, "training_job_end.ts"); }

}  // namespace
}  // namespace trialstat::trial::detail
