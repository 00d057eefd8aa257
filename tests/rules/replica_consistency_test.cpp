// SPDX-License-Identifier: Apache-2.0
// ReplicaConsistency (issue 27) end to end: trials of 2-8 data-parallel workers written by
// trialstat's own trial writer, read back through the catalog and one statistics pass
// (pipeline::evaluate_rules, kept values), each worker's copy compared with the reference's.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/reference/reference_stats.hpp"
#include "tests/support/evaluate_rule.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat {
namespace {

struct tensor_spec {
  std::string name;
  dtype type = dtype::float32;
  std::vector<int64_t> shape;
  std::vector<double> values;
};

/// What a worker writes at a step: the shared model (every worker the same), then `edit`
/// changes a copy (return false to skip the whole step).
using edit_fn = std::function<bool(int worker, int64_t step, std::vector<tensor_spec>& tensors)>;

/// Step s (0..steps-1) is global step s: TRAIN, except the last, which is EVAL (mode step 0).
/// Tensors: fc1.weight [4, 8], fc1.bias [8], fc2.weight [8, 3] (collections weights, biases)
/// and gradients/fc1.weight [4, 8] (collection gradients), local to each worker.
std::vector<tensor_spec> model(int worker, int64_t step) {
  const auto fill = [&](std::string name, std::vector<int64_t> shape, double scale, double skew) {
    tensor_spec t{std::move(name), dtype::float32, std::move(shape), {}};
    int64_t n = 1;
    for (const int64_t d : t.shape) n *= d;
    for (int64_t i = 0; i < n; ++i) {
      t.values.push_back(static_cast<float>(scale * std::sin(0.37 * static_cast<double>(i + 1) +
                                                             0.11 * static_cast<double>(step)) +
                                            skew));
    }
    return t;
  };
  return {fill("fc1.weight", {4, 8}, 0.5, 0.0), fill("fc1.bias", {8}, 0.1, 0.0),
          fill("fc2.weight", {8, 3}, 0.3, 0.0),
          fill("gradients/fc1.weight", {4, 8}, 0.01, 0.001 * worker)};
}

writer::collection_spec collection(std::string name, std::vector<std::string> members) {
  writer::collection_spec c;
  c.name = std::move(name);
  c.tensor_names = std::move(members);
  return c;
}

std::filesystem::path write_trial(const std::string& label, int workers, int64_t steps,
                                  const edit_fn& edit = {}) {
  const auto root = testing::make_scratch_dir(label);
  writer::writer_options options;
  options.num_workers = workers;
  options.collections = {collection("weights", {"fc1.weight", "fc2.weight"}),
                         collection("biases", {"fc1.bias"}),
                         collection("gradients", {"gradients/fc1.weight"})};
  for (int r = 0; r < workers; ++r) {
    auto w = writer::trial_writer::create(root, fmt::format("worker_{}", r), options);
    EXPECT_TRUE(w.has_value()) << w.error_status().to_string();
    if (!w) return root;
    for (int64_t s = 0; s < steps; ++s) {
      auto tensors = model(r, s);
      if (edit && !edit(r, s, tensors)) continue;
      const bool eval = s + 1 == steps;
      EXPECT_TRUE(w->begin_step(s, eval ? mode::eval : mode::train, eval ? 0 : s).ok());
      for (const tensor_spec& t : tensors) {
        const auto bytes = reference::encode_values(t.type, t.values);
        const tensor_view view{bytes.data(), t.type, t.shape, static_cast<int64_t>(t.values.size()),
                               memory_kind::host};
        const status added = w->add_tensor(t.name, view);
        EXPECT_TRUE(added.ok()) << added.to_string();
      }
      EXPECT_TRUE(w->end_step().ok());
    }
    EXPECT_TRUE(w->close(r + 1 == workers).ok());
  }
  return root;
}

tensor_spec& find(std::vector<tensor_spec>& tensors, const std::string& name) {
  for (auto& t : tensors) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << "no tensor " << name;
  return tensors.front();
}

using outcome = pipeline::rule_result;

outcome evaluate(const std::filesystem::path& root, const rules::rule_parameters& params = {}) {
  return testing::evaluate_rule(root, "ReplicaConsistency", params);
}

/// "step tensor worker" of each finding, for whole-list assertions.
std::vector<std::string> where(const outcome& o) {
  std::vector<std::string> out;
  for (const auto& f : o.findings) out.push_back(fmt::format("{} {} {}", f.step, f.tensor, f.worker));
  return out;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ReplicaConsistency, IdenticalReplicasAreQuiet) {
  for (const int workers : {2, 8}) {
    const auto root = write_trial(fmt::format("replica_identical_{}", workers), workers, 4);
    const outcome o = evaluate(root);
    EXPECT_EQ(o.status, rules::rule_status::no_issues_found) << o.status_details;
    EXPECT_TRUE(o.findings.empty()) << workers << " workers: " << o.findings.size();
  }
}

TEST(ReplicaConsistency, OneUlpOnOneWorkerIsExactlyThatFinding) {
  // fc1.weight element 5 of worker_2 at step 2, one float32 ulp up.
  float changed_from = 0.0f;
  const auto root = write_trial("replica_ulp", 4, 4, [&](int r, int64_t s, auto& tensors) {
    if (r == 2 && s == 2) {
      auto& v = find(tensors, "fc1.weight").values[5];
      changed_from = static_cast<float>(v);
      v = std::nextafter(static_cast<float>(v), 2.0f);
    }
    return true;
  });
  const outcome o = evaluate(root);
  EXPECT_EQ(o.status, rules::rule_status::issues_found) << o.status_details;
  ASSERT_EQ(where(o), (std::vector<std::string>{"2 fc1.weight worker_2"}));
  const rules::finding& f = o.findings[0];
  EXPECT_EQ(f.value, 1.0);
  EXPECT_EQ(f.mode, mode::train);
  EXPECT_EQ(f.mode_step, 2);
  const double ulp = static_cast<double>(std::nextafter(changed_from, 2.0f)) - changed_from;
  EXPECT_TRUE(contains(f.message, fmt::format(
                  "1 of 32 elements differ between worker worker_2 and worker_0 (reference) "
                  "(rtol 0, atol 0): max |a - b| = {:.6g}",
                  ulp)))
      << f.message;
  EXPECT_FALSE(contains(f.message, "NaN")) << f.message;
}

TEST(ReplicaConsistency, NanAgainstANumberIsAFinding) {
  const auto root = write_trial("replica_nan", 3, 3, [](int r, int64_t s, auto& tensors) {
    if (r == 1 && s == 1) find(tensors, "fc1.bias").values[3] = std::numeric_limits<double>::quiet_NaN();
    return true;
  });
  const outcome o = evaluate(root);
  ASSERT_EQ(where(o), (std::vector<std::string>{"1 fc1.bias worker_1"}));
  EXPECT_EQ(o.findings[0].value, 1.0);
  EXPECT_TRUE(contains(o.findings[0].message,
                       "1 of 8 elements differ between worker worker_1 and worker_0 (reference) "
                       "(rtol 0, atol 0): max |a - b| = 0; 1 of them NaN against a number"))
      << o.findings[0].message;
}

TEST(ReplicaConsistency, SignedZeroAndNanInTheSamePlaceAgree) {
  const auto root = write_trial("replica_zero_nan", 4, 3, [](int r, int64_t s, auto& tensors) {
    auto& w = find(tensors, "fc2.weight").values;
    w[0] = (r % 2 == 0) ? 0.0 : -0.0;                       // ±0 across workers
    w[1] = std::numeric_limits<double>::quiet_NaN();        // NaN everywhere
    w[2] = s == 1 ? -std::numeric_limits<double>::infinity() : w[2];  // same −Inf everywhere
    return true;
  });
  const outcome o = evaluate(root);
  EXPECT_EQ(o.status, rules::rule_status::no_issues_found) << o.status_details;
  EXPECT_TRUE(o.findings.empty()) << (o.findings.empty() ? "" : o.findings[0].message);
}

TEST(ReplicaConsistency, WorkerMissingAStepOrATensor) {
  // worker_3 skips step 1 entirely; worker_1 saves step 2 without fc2.weight.
  const auto root = write_trial("replica_missing", 4, 4, [](int r, int64_t s, auto& tensors) {
    if (r == 3 && s == 1) return false;
    if (r == 1 && s == 2) std::erase_if(tensors, [](const auto& t) { return t.name == "fc2.weight"; });
    return true;
  });
  const outcome o = evaluate(root);
  ASSERT_EQ(where(o), (std::vector<std::string>{"1  worker_3", "2 fc2.weight worker_1"}));
  EXPECT_TRUE(std::isnan(o.findings[0].value));
  EXPECT_EQ(o.findings[0].message,
            "missing step: worker worker_3 saved none of the selected tensors at this step, which "
            "worker_0, worker_1, worker_2 saved");
  EXPECT_EQ(o.findings[1].message,
            "missing tensor: worker worker_1 saved this step but not fc2.weight, which worker_0, "
            "worker_2, worker_3 saved");
}

TEST(ReplicaConsistency, ShapeAndDtypeMismatches) {
  const auto root = write_trial("replica_shape_dtype", 3, 3, [](int r, int64_t s, auto& tensors) {
    if (r == 1 && s == 0) {
      auto& b = find(tensors, "fc1.bias");
      b.values.pop_back();
      b.shape = {7};
    }
    if (r == 2 && s == 1) find(tensors, "fc2.weight").type = dtype::float64;
    return true;
  });
  const outcome o = evaluate(root);
  ASSERT_EQ(where(o), (std::vector<std::string>{"0 fc1.bias worker_1", "1 fc2.weight worker_2"}));
  EXPECT_EQ(o.findings[0].message,
            "shape [7] on worker worker_1 differs from [8] on worker_0 (reference)");
  EXPECT_EQ(o.findings[1].message,
            "dtype float64 on worker worker_2 differs from float32 on worker_0 (reference)");
}

TEST(ReplicaConsistency, ToleranceParameters) {
  // worker_1's fc2.weight at step 1 scaled by (1 + 1e-4): every element differs exactly; all
  // are within rtol 1e-3 (|a − b| = 1e-4·|b|) and none within rtol 1e-5; |a − b| ≤ 0.3e-4
  // (|b| ≤ 0.3) so atol 1e-4 covers them all and atol 1e-9 none.
  const auto root = write_trial("replica_tolerance", 2, 3, [](int r, int64_t s, auto& tensors) {
    if (r == 1 && s == 1) {
      for (auto& v : find(tensors, "fc2.weight").values) v = static_cast<float>(v * (1 + 1e-4));
    }
    return true;
  });
  const outcome exact = evaluate(root);
  ASSERT_EQ(where(exact), (std::vector<std::string>{"1 fc2.weight worker_1"}));
  EXPECT_EQ(exact.findings[0].value, 24.0);
  EXPECT_TRUE(evaluate(root, {{"rtol", "1e-3"}}).findings.empty());
  EXPECT_EQ(evaluate(root, {{"rtol", "1e-5"}}).findings.size(), 1u);
  EXPECT_TRUE(evaluate(root, {{"atol", "1e-4"}}).findings.empty());
  const outcome tight = evaluate(root, {{"atol", "1e-9"}});
  ASSERT_EQ(tight.findings.size(), 1u);
  EXPECT_TRUE(contains(tight.findings[0].message, "(rtol 0, atol 1e-09)")) << tight.findings[0].message;
}

TEST(ReplicaConsistency, MaxFindingsCapsAndWarns) {
  // Workers 1..3 differ in fc1.bias at every step: 4 steps × 3 workers = 12 findings.
  const auto root = write_trial("replica_max", 4, 4, [](int r, int64_t, auto& tensors) {
    if (r > 0) find(tensors, "fc1.bias").values[0] += 1.0;
    return true;
  });
  EXPECT_EQ(evaluate(root).findings.size(), 12u);
  EXPECT_EQ(evaluate(root, {{"max_findings", "0"}}).findings.size(), 12u);
  const outcome capped = evaluate(root, {{"max_findings", "5"}});
  EXPECT_EQ(capped.status, rules::rule_status::issues_found);
  EXPECT_EQ(where(capped),
            (std::vector<std::string>{"0 fc1.bias worker_1", "0 fc1.bias worker_2",
                                      "0 fc1.bias worker_3", "1 fc1.bias worker_1",
                                      "1 fc1.bias worker_2"}));
  ASSERT_EQ(capped.warnings.size(), 1u);
  EXPECT_EQ(capped.warnings[0],
            "ReplicaConsistency: max_findings (5) reached at step 1: later differences are not "
            "reported");
}

TEST(ReplicaConsistency, ReferenceWorker) {
  // worker_2 alone drifts in fc1.weight at step 3 (the EVAL step).
  const auto root = write_trial("replica_reference", 4, 4, [](int r, int64_t s, auto& tensors) {
    if (r == 2 && s == 3) find(tensors, "fc1.weight").values[0] += 0.5;
    return true;
  });
  const outcome by_default = evaluate(root);
  ASSERT_EQ(where(by_default), (std::vector<std::string>{"3 fc1.weight worker_2"}));
  EXPECT_EQ(by_default.findings[0].mode, mode::eval);
  const outcome against_2 = evaluate(root, {{"reference_worker", "worker_2"}});
  EXPECT_EQ(where(against_2),
            (std::vector<std::string>{"3 fc1.weight worker_0", "3 fc1.weight worker_1",
                                      "3 fc1.weight worker_3"}));
  EXPECT_TRUE(contains(against_2.findings[0].message,
                       "between worker worker_0 and worker_2 (reference)"))
      << against_2.findings[0].message;
  EXPECT_EQ(against_2.findings[0].value, 1.0);
  const outcome unknown = evaluate(root, {{"reference_worker", "worker_9"}});
  EXPECT_EQ(unknown.status, rules::rule_status::error);
  EXPECT_TRUE(contains(unknown.status_details, "'reference_worker'")) << unknown.status_details;
  EXPECT_TRUE(contains(unknown.status_details, "worker_9")) << unknown.status_details;
}

TEST(ReplicaConsistency, ModeAndCollectionSelection) {
  // The gradients differ per worker by construction (local, not averaged): quiet by default,
  // one finding per other worker and step with collection_names=gradients.
  const auto root = write_trial("replica_gradients", 3, 3);
  EXPECT_TRUE(evaluate(root).findings.empty());
  const outcome grads = evaluate(root, {{"collection_names", "gradients"}});
  EXPECT_EQ(grads.findings.size(), 6u);  // 3 steps × workers 1, 2
  for (const auto& f : grads.findings) {
    EXPECT_EQ(f.tensor, "gradients/fc1.weight");
    EXPECT_EQ(f.value, 32.0) << f.message;
  }
  const outcome eval_only = evaluate(root, {{"collection_names", "gradients"}, {"mode", "EVAL"}});
  EXPECT_EQ(where(eval_only), (std::vector<std::string>{"2 gradients/fc1.weight worker_1",
                                                        "2 gradients/fc1.weight worker_2"}));
  const outcome by_regex = evaluate(root, {{"tensor_regex", "^gradients/"}, {"mode", "TRAIN"}});
  EXPECT_EQ(by_regex.findings.size(), 4u);
}

}  // namespace
}  // namespace trialstat
