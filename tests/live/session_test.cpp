// SPDX-License-Identifier: Apache-2.0
// The pieces under `watch`: statistics_stream's stop at records not fully written yet (cut
// tail, missing event file), and rule_session — incremental evaluation that re-prepares rules
// when new tensors appear, keeps pairwise history across advances, reports transitions, and
// agrees exactly with one-shot evaluate_rules over the finished trial.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/live/live_support.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/stats/record_codec.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace fs = std::filesystem;
namespace tw = trialstat::writer;
using trialstat::error_code;
using trialstat::rules::rule_status;
using trialstat::testing::step_content;
using trialstat::testing::write_worker_step;

namespace {

constexpr uint64_t seed = 77;

trialstat::trial::catalog open_index_only(const fs::path& root) {
  trialstat::trial::catalog_options o;
  o.scan_missing_index = false;
  auto c = trialstat::trial::catalog::open(root, o);
  EXPECT_TRUE(c.has_value());
  return std::move(*c);
}

trialstat::plan::read_plan all_moments(const trialstat::trial::catalog& c) {
  trialstat::plan::read_plan plan;
  for (trialstat::trial::tensor_id t = 0; t < c.tensor_names().size(); ++t) plan.request(t, {});
  return plan;
}

trialstat::pipeline::rule_invocation invocation(const std::string& name,
                                                trialstat::rules::rule_parameters params = {}) {
  trialstat::pipeline::rule_invocation inv;
  inv.configuration_name = name;
  auto made = trialstat::rules::make_rule(name, params);
  if (made) {
    inv.rule = std::move(*made);
  } else {
    inv.error = made.error_status();
  }
  return inv;
}

}  // namespace

// resume_after (a watch whose statistics store served the steps so far): the stream continues
// after the step, reading the pairwise history first, and its records equal an uninterrupted
// stream's, update ratios included.
TEST(StreamResume, ResumeAfterReadsTheHistoryTheNextStepsCompareWith) {
  const fs::path root = trialstat::testing::make_scratch_dir("stream_resume") / "t";
  auto w = tw::trial_writer::create(root, "worker_0",
                                    {.num_workers = 1, .collections = tw::pytorch_default_collections(1)});
  ASSERT_TRUE(w.has_value());
  for (int64_t step = 0; step < 6; ++step) ASSERT_TRUE(write_worker_step(*w, step, {}, seed).ok());
  ASSERT_TRUE(w->close(true).ok());
  auto catalog = open_index_only(root);
  trialstat::plan::read_plan plan;
  for (trialstat::trial::tensor_id t = 0; t < catalog.tensor_names().size(); ++t) {
    trialstat::stats::statistics_request r;
    r.history_depth = 2;
    plan.request(t, r);
  }
  const auto bytes_of_steps = [](std::vector<std::vector<std::byte>>& out) {
    return [&out](const trialstat::stats::step_statistics& step) {
      auto& bytes = out.emplace_back();
      for (const auto& r : step.records) trialstat::stats::append_record(r, bytes);
    };
  };
  std::vector<std::vector<std::byte>> whole, resumed;
  trialstat::pipeline::statistics_stream a(catalog, plan, {});
  ASSERT_TRUE(a.advance(bytes_of_steps(whole), true).has_value());
  ASSERT_EQ(whole.size(), 6u);
  trialstat::pipeline::statistics_stream b(catalog, plan, {});
  b.resume_after(2);
  auto counters = b.advance(bytes_of_steps(resumed), true);
  ASSERT_TRUE(counters.has_value());
  EXPECT_EQ(counters->steps, 3);
  ASSERT_EQ(resumed.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(resumed[i], whole[3 + i]) << "step " << 3 + i;
  EXPECT_EQ(b.last_step(), 5);
  // Without the history (a range that starts at 3), step 3 compares with nothing: different.
  std::vector<std::vector<std::byte>> cut;
  trialstat::pipeline::pipeline_options from_3;
  from_3.step_begin = 3;
  trialstat::pipeline::statistics_stream c(catalog, plan, from_3);
  ASSERT_TRUE(c.advance(bytes_of_steps(cut), true).has_value());
  ASSERT_EQ(cut.size(), 3u);
  EXPECT_NE(cut[0], whole[3]);
}

// A step whose event file is cut short (or missing) is not emitted; it is retried and then read.
TEST(StreamUnfinished, CutTailAndMissingFileAreRetried) {
  const fs::path root = trialstat::testing::make_scratch_dir("stream_unfinished") / "t";
  const fs::path side = trialstat::testing::make_scratch_dir("stream_unfinished_side");
  {
    auto w = tw::trial_writer::create(root, "worker_0", {});
    ASSERT_TRUE(w.has_value());
    ASSERT_TRUE(write_worker_step(*w, 0, {}, seed).ok());
    // Steps 1 and 2 from a side trial; step 3 normal.
    auto s = tw::trial_writer::create(side, "worker_0", {});
    ASSERT_TRUE(s.has_value());
    step_content inf;
    inf.inf_in_trunc = true;
    ASSERT_TRUE(write_worker_step(*s, 1, inf, seed).ok());
    ASSERT_TRUE(write_worker_step(*s, 2, {}, seed).ok());
    ASSERT_TRUE(write_worker_step(*w, 3, {}, seed).ok());
  }
  const auto ev1 = tw::trial_writer::event_file_path(1, "worker_0");
  const auto ev2 = tw::trial_writer::event_file_path(2, "worker_0");
  const auto bytes1 = trialstat::testing::read_all_bytes(side / ev1);
  const auto bytes2 = trialstat::testing::read_all_bytes(side / ev2);
  trialstat::testing::write_bytes(root / ev1, std::span(bytes1).first(bytes1.size() - 3));
  for (int64_t step : {1, 2}) {
    const auto idx = tw::trial_writer::index_file_path(step, "worker_0");
    trialstat::testing::write_bytes(root / idx, trialstat::testing::read_all_bytes(side / idx));
  }
  // ev2 is not there at all yet (an index uploaded before its event file).

  auto catalog = open_index_only(root);
  ASSERT_EQ(catalog.step_infos().size(), 4u);
  trialstat::pipeline::pipeline_options options;
  options.stop_at_unfinished_records = true;
  trialstat::pipeline::statistics_stream stream(catalog, all_moments(catalog), options);
  std::vector<int64_t> seen;
  std::vector<double> trunc_inf;
  const auto on_step = [&](const trialstat::stats::step_statistics& s) {
    seen.push_back(s.step);
    for (const auto& r : s.records) {
      EXPECT_TRUE(r.raw_status.ok()) << r.raw_status.to_string();
      if (catalog.tensor_names()[r.tensor] == "trunc_tensor" && r.moments) {
        trunc_inf.push_back(static_cast<double>(r.moments->pos_inf_count));
      }
    }
  };
  auto first = stream.advance(on_step);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(seen, std::vector<int64_t>{0});
  ASSERT_TRUE(first->unfinished_step.has_value());
  EXPECT_EQ(*first->unfinished_step, 1);
  EXPECT_EQ(first->unfinished_reason.code(), error_code::truncated_record);
  EXPECT_NE(first->unfinished_reason.message().find("cut short"), std::string::npos)
      << first->unfinished_reason.message();
  EXPECT_EQ(stream.last_step(), 0);

  trialstat::testing::write_bytes(root / ev1, std::span(bytes1).subspan(bytes1.size() - 3), true);
  auto second = stream.advance(on_step);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1}));
  ASSERT_TRUE(second->unfinished_step.has_value());
  EXPECT_EQ(*second->unfinished_step, 2);
  EXPECT_NE(second->unfinished_reason.message().find("not there yet"), std::string::npos);

  trialstat::testing::write_bytes(root / ev2, bytes2);
  auto third = stream.advance(on_step);
  ASSERT_TRUE(third.has_value());
  EXPECT_FALSE(third->unfinished_step.has_value());
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(trunc_inf, (std::vector<double>{0, 1, 0, 0}));
}

// Without the option (one-shot runs), a cut record fails alone and the run goes on.
TEST(StreamUnfinished, OffByDefaultTheRecordFails) {
  const fs::path root = trialstat::testing::make_scratch_dir("stream_cut_default") / "t";
  {
    auto w = tw::trial_writer::create(root, "worker_0", {});
    ASSERT_TRUE(w.has_value());
    ASSERT_TRUE(write_worker_step(*w, 0, {}, seed).ok());
    ASSERT_TRUE(write_worker_step(*w, 1, {}, seed).ok());
  }
  const auto ev1 = root / tw::trial_writer::event_file_path(1, "worker_0");
  fs::resize_file(ev1, fs::file_size(ev1) - 5);
  auto catalog = open_index_only(root);
  int64_t failed = 0, steps = 0;
  auto run = trialstat::pipeline::run_statistics(catalog, all_moments(catalog), {},
                                                 [&](const trialstat::stats::step_statistics& s) {
                                                   ++steps;
                                                   for (const auto& r : s.records) {
                                                     if (r.raw_status.code() == error_code::truncated_record) ++failed;
                                                   }
                                                 });
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(steps, 2);
  EXPECT_EQ(failed, 1);  // the last record of step 1
  EXPECT_FALSE(run->unfinished_step.has_value());
}

// rule_session over a trial written step by step equals evaluate_rules over the final trial;
// a tensor that first appears at step 3 is picked up (re-preparation); WeightUpdateRatio pairs
// steps across advances (history kept through set_plan).
TEST(RuleSession, IncrementalEqualsOneShot) {
  const fs::path root = trialstat::testing::make_scratch_dir("session_growing") / "t";
  auto w = tw::trial_writer::create(root, "worker_0",
                                    {.num_workers = 1, .collections = tw::pytorch_default_collections(1)});
  ASSERT_TRUE(w.has_value());
  ASSERT_TRUE(write_worker_step(*w, 0, {}, seed).ok());  // creates the folder
  auto catalog = open_index_only(root);

  const auto make_rules = [] {
    std::vector<trialstat::pipeline::rule_invocation> rules;
    rules.push_back(invocation("ExplodingTensor"));
    rules.push_back(invocation("WeightUpdateRatio", {{"large_threshold", "0.5"}}));
    rules.push_back(invocation("VanishingGradient"));
    rules.push_back(invocation("AllZero"));  // Error: needs a selection
    return rules;
  };
  trialstat::pipeline::rule_session session(catalog, make_rules(), {}, /*live=*/true);
  auto start = session.take_transitions();
  ASSERT_EQ(start.size(), 1u);
  EXPECT_EQ(start[0].rule, 3u);
  EXPECT_EQ(start[0].to, rule_status::error);
  EXPECT_TRUE(session.any_in_progress());

  std::vector<trialstat::pipeline::rule_transition> transitions;
  bool replanned = false;
  for (int64_t step = 1; step <= 6; ++step) {
    ASSERT_TRUE(catalog.refresh().has_value());
    auto p = session.advance();
    ASSERT_TRUE(p.has_value()) << p.error_status().to_string();
    replanned = replanned || p->replanned;
    EXPECT_EQ(session.last_step(), step - 1);
    for (auto& t : session.take_transitions()) transitions.push_back(std::move(t));
    if (step == 3) {
      // A tensor no rule could know at preparation time, NaN from its first save.
      ASSERT_TRUE(w->begin_step(step, trialstat::mode::train, step).ok());
      const float late[2] = {1.0f, std::nanf("")};
      const int64_t shape[1] = {2};
      ASSERT_TRUE(w->add_tensor("late_tensor", {reinterpret_cast<const std::byte*>(late),
                                                trialstat::dtype::float32, shape, 2}).ok());
      ASSERT_TRUE(w->end_step().ok());
    } else {
      ASSERT_TRUE(write_worker_step(*w, step, {}, seed).ok());
    }
  }
  ASSERT_TRUE(w->close(true).ok());
  ASSERT_TRUE(catalog.refresh().has_value());
  auto done = session.finish();
  ASSERT_TRUE(done.has_value());
  for (auto& t : session.take_transitions()) transitions.push_back(std::move(t));
  EXPECT_TRUE(replanned);
  EXPECT_FALSE(session.any_in_progress());

  // ExplodingTensor fired at step 3 on the late tensor.
  const auto& results = session.results();
  ASSERT_EQ(results.size(), 4u);
  ASSERT_FALSE(results[0].findings.empty());
  EXPECT_EQ(results[0].findings[0].step, 3);
  EXPECT_EQ(results[0].findings[0].tensor, "late_tensor");

  // One-shot over the finished trial (scanning allowed): the same statuses and findings.
  auto final_catalog = trialstat::trial::catalog::open(root);
  ASSERT_TRUE(final_catalog.has_value());
  auto rules = make_rules();
  auto one_shot = trialstat::pipeline::evaluate_rules(*final_catalog, rules, {});
  ASSERT_TRUE(one_shot.has_value());
  ASSERT_EQ(rules.size(), 4u);  // the rules come back to the caller
  ASSERT_EQ(one_shot->size(), results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    SCOPED_TRACE(results[i].configuration_name);
    EXPECT_EQ((*one_shot)[i].status, results[i].status);
    EXPECT_EQ((*one_shot)[i].status_details, results[i].status_details);
    ASSERT_EQ((*one_shot)[i].findings.size(), results[i].findings.size());
    for (std::size_t f = 0; f < results[i].findings.size(); ++f) {
      const auto& a = (*one_shot)[i].findings[f];
      const auto& b = results[i].findings[f];
      EXPECT_EQ(a.step, b.step);
      EXPECT_EQ(a.tensor, b.tensor);
      EXPECT_EQ(a.worker, b.worker);
      EXPECT_TRUE(a.value == b.value || (std::isnan(a.value) && std::isnan(b.value)));
      EXPECT_EQ(a.message, b.message);
    }
  }
  // WeightUpdateRatio with large_threshold 0.5 fires (fresh N(0, 0.1) weights each step: the
  // ratio is ~1.4) from step 1 on, pairing with the step before — across advance calls.
  ASSERT_FALSE(results[1].findings.empty());
  EXPECT_EQ(results[1].findings[0].step, 1);
  EXPECT_EQ(results[2].status, rule_status::no_issues_found);

  // Transitions: ExplodingTensor @3, WeightUpdateRatio @1, then VanishingGradient at the end.
  ASSERT_EQ(transitions.size(), 3u);
  EXPECT_EQ(transitions[0].rule, 1u);
  EXPECT_EQ(transitions[0].step, 1);
  EXPECT_EQ(transitions[1].rule, 0u);
  EXPECT_EQ(transitions[1].step, 3);
  ASSERT_TRUE(transitions[1].finding.has_value());
  EXPECT_EQ(transitions[1].finding->tensor, "late_tensor");
  EXPECT_EQ(transitions[2].rule, 2u);
  EXPECT_EQ(transitions[2].to, rule_status::no_issues_found);
}
