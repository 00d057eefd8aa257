// SPDX-License-Identifier: Apache-2.0
// `watch_trial` over trials grown step by step by a background writer thread: a lagging second
// worker, a record cut short at an event file's tail, `.tmp` files left around; findings at
// exactly the right step, status transitions, completeness reports, actions (stop-signal file,
// commands with the finding in their environment, exit status), the end at training_job_end.ts
// or a passed stop signal with a final pass, timeouts and time-based rules (on_poll).
//
// Synchronisation: the writer waits for the watcher's events (bounded waits, 8 s) wherever the
// test asserts an order, so the outcome never depends on scheduling. Seeds are fixed (printed).
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <limits>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/live/live_support.hpp"
#include "tests/support/shared_trials.hpp"
#include "trialstat/live/watch_trial.hpp"
#include "trialstat/rules/rule_config.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using trialstat::live::end_reason;
using trialstat::live::event_kind;
using trialstat::live::watch_event;
using trialstat::rules::rule_status;
using trialstat::testing::event_log;
using trialstat::testing::step_content;
using trialstat::testing::write_worker_step;
namespace tw = trialstat::writer;

namespace {

constexpr uint64_t seed = 20240607;

tw::writer_options two_workers() {
  tw::writer_options o;
  o.num_workers = 2;
  o.collections = tw::pytorch_default_collections(1);
  return o;
}

trialstat::live::watch_rule configured(const std::string& json_entry) {
  auto entries = trialstat::rules::parse_rule_config(json_entry, "test");
  EXPECT_TRUE(entries.has_value()) << (entries ? "" : entries.error_status().to_string());
  const auto& e = entries->front();
  trialstat::live::watch_rule r;
  r.invocation.configuration_name = e.configuration_name;
  auto made = trialstat::rules::make_rule(e.rule_name, e.parameters);
  if (made) {
    r.invocation.rule = std::move(*made);
  } else {
    r.invocation.error = made.error_status();
  }
  r.actions = e.actions;
  return r;
}

trialstat::live::watch_options fast_options() {
  trialstat::live::watch_options o;
  o.poll_interval = 5ms;
  o.timeout = 20s;  // a hang fails the test instead of blocking it
  o.command_timeout = 5s;
  return o;
}

/// Status transitions of one configuration, in order, as "From>To@step".
std::vector<std::string> transitions_of(const std::vector<watch_event>& events,
                                        const std::string& configuration) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    if (e.kind != event_kind::status_change || e.configuration_name != configuration) continue;
    out.push_back(std::string(trialstat::rules::rule_status_name(e.transition->from)) + ">" +
                  std::string(trialstat::rules::rule_status_name(e.transition->to)) +
                  (e.transition->to == rule_status::issues_found
                       ? "@" + std::to_string(*e.transition->step)
                       : std::string()));
  }
  return out;
}

const trialstat::pipeline::rule_result& result_of(const trialstat::live::watch_outcome& outcome,
                                                  const std::string& configuration) {
  for (const auto& r : outcome.results) {
    if (r.configuration_name == configuration) return r;
  }
  ADD_FAILURE() << "no result for " << configuration;
  return outcome.results.front();
}

}  // namespace

// The main scenario: 12 steps, two workers, worker_1 lagging at step 3, worker_0's step-4 event
// file cut short at its tail then completed, NaN in worker_0's relu_output at step 6, .tmp files.
TEST(Watch, GrowingTrialLagTruncationTmpAndActions) {
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  const fs::path root = trialstat::testing::make_scratch_dir("watch_live") / "trial";
  const fs::path scratch = trialstat::testing::make_scratch_dir("watch_live_scratch");
  const fs::path env_dump = scratch / "env.txt";
  const fs::path message_dump = scratch / "message.txt";

  std::vector<trialstat::live::watch_rule> rules;
  rules.push_back(configured(R"({"RuleConfigurationName": "exploding",
      "RuleParameters": {"rule_to_invoke": "ExplodingTensor", "tensor_regex": "relu"},
      "Actions": {"stop_signal_file": "stop_signal",
                  "command": ["/bin/sh", "-c", "env > \"$1\"", "sh", ")" + env_dump.string() + R"("]}})"));
  rules.push_back(configured(R"({"RuleConfigurationName": "exploding_trunc",
      "RuleParameters": {"rule_to_invoke": "ExplodingTensor", "tensor_regex": "^trunc"},
      "Actions": {"command": "printf '%s' \"$TRIALSTAT_MESSAGE\" > ')" + message_dump.string() + R"('"}})"));
  rules.push_back(configured(R"({"RuleConfigurationName": "vanishing",
      "RuleParameters": {"rule_to_invoke": "VanishingGradient"}})"));
  rules.push_back(configured(R"({"RuleConfigurationName": "bad_param",
      "RuleParameters": {"rule_to_invoke": "VanishingGradient", "treshold": "1"}})"));
  rules.push_back(configured(R"({"RuleConfigurationName": "zero_unselected",
      "RuleParameters": {"rule_to_invoke": "AllZero"}})"));

  event_log log;
  const auto exploding_fired = [](const watch_event& e) {
    return e.kind == event_kind::status_change && e.configuration_name == "exploding" &&
           e.transition->to == rule_status::issues_found;
  };

  std::vector<std::string> writer_errors;
  const auto started = std::chrono::system_clock::now();
  std::thread writer([&] {
    const auto fail = [&](const std::string& what) { writer_errors.push_back(what); };
    auto w0 = tw::trial_writer::create(root, "worker_0", two_workers());
    auto w1 = tw::trial_writer::create(root, "worker_1", two_workers());
    if (!w0 || !w1) return fail("cannot create writers");
    for (int64_t step = 0; step < 12; ++step) {
      step_content c0;
      c0.nan_in_relu = step >= 6;
      if (step == 4) {
        // worker_0's step 4, written by hand: the complete files come from a scratch trial; the
        // event file is put in place cut short (the index already lists the full records).
        auto side = tw::trial_writer::create(scratch / "side", "worker_0", two_workers());
        c0.inf_in_trunc = true;
        if (!side || !write_worker_step(*side, step, c0, seed).ok()) return fail("side writer");
        const auto event_rel = tw::trial_writer::event_file_path(step, "worker_0");
        const auto index_rel = tw::trial_writer::index_file_path(step, "worker_0");
        const auto bytes = trialstat::testing::read_all_bytes(scratch / "side" / event_rel);
        const std::size_t cut = bytes.size() - 9;
        trialstat::testing::write_bytes(root / event_rel, std::span(bytes).first(cut));
        trialstat::testing::write_bytes(root / (index_rel.string() + ".tmp"),
                                        trialstat::testing::read_all_bytes(scratch / "side" / index_rel));
        fs::rename(root / (index_rel.string() + ".tmp"), root / index_rel);
        // worker_1 completes step 4, so only the cut tail holds it back.
        if (!write_worker_step(*w1, step, {}, seed).ok()) return fail("w1 step 4");
        if (!log.wait_for([](const watch_event& e) {
              return e.kind == event_kind::waiting &&
                     e.message.find("step 4 is not fully written yet") != std::string::npos;
            })) {
          return fail("no 'step 4 is not fully written yet' report");
        }
        trialstat::testing::write_bytes(root / event_rel, std::span(bytes).subspan(cut), /*append=*/true);
        continue;
      }
      if (!write_worker_step(*w0, step, c0, seed).ok()) return fail("w0 step");
      if (step == 3) {
        // worker_1 lags: the watcher must report step 3 as 1 of 2 and evaluate nothing past 2.
        if (!log.wait_for([](const watch_event& e) {
              return e.kind == event_kind::progress && e.waiting_on && e.waiting_on->step == 3 &&
                     e.waiting_on->workers_done == 1;
            })) {
          return fail("no 'step 3: 1 of 2 workers' report");
        }
      }
      if (step == 6) {
        // "Not earlier": worker_0's NaN is visible, but step 6 is not complete: no verdict yet.
        if (!log.wait_for([](const watch_event& e) {
              return e.kind == event_kind::progress && e.waiting_on && e.waiting_on->step == 6;
            })) {
          return fail("no 'step 6: 1 of 2 workers' report");
        }
        if (log.wait_for(exploding_fired, 0ms)) return fail("fired before step 6 was complete");
      }
      if (step == 8) {
        // Files still being written (a step that never completes): never read, never a warning.
        trialstat::testing::write_bytes(root / "index/000000000/000000000099_worker_1.json.tmp",
                                        std::as_bytes(std::span("{\"meta\": trunc", 14)));
        trialstat::testing::write_bytes(root / "events/000000000099/000000000099_worker_1.tfevents.tmp",
                                        std::as_bytes(std::span("garbage", 7)));
      }
      if (!write_worker_step(*w1, step, {}, seed).ok()) return fail("w1 step");
      if (step == 6 && !log.wait_for(exploding_fired)) {
        // "Not later": the verdict must come before step 7 exists.
        return fail("ExplodingTensor did not fire once step 6 was complete");
      }
    }
    if (!w0->close(false).ok() || !w1->close(true).ok()) return fail("close");
  });

  auto outcome = trialstat::live::watch_trial(root, std::move(rules), fast_options(),
                                              [&](const watch_event& e) { log.add(e); });
  writer.join();
  const auto finished = std::chrono::system_clock::now();
  for (const auto& e : writer_errors) ADD_FAILURE() << "writer: " << e;
  ASSERT_TRUE(outcome.has_value()) << outcome.error_status().to_string();
  const auto events = log.snapshot();

  EXPECT_EQ(outcome->reason, end_reason::training_ended);
  EXPECT_EQ(outcome->exit_status, 2);  // two rules are Error (they outrank IssuesFound)
  EXPECT_EQ(outcome->last_step, 11);
  EXPECT_EQ(outcome->steps_evaluated, 12);

  // Findings at exactly the right steps.
  const auto& exploding = result_of(*outcome, "exploding");
  EXPECT_EQ(exploding.status, rule_status::issues_found);
  ASSERT_EQ(exploding.findings.size(), 6u);  // steps 6..11, worker_0 (the default worker)
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(exploding.findings[i].step, static_cast<int64_t>(6 + i));
    EXPECT_EQ(exploding.findings[i].tensor, "relu_output");
    EXPECT_EQ(exploding.findings[i].worker, "worker_0");
    EXPECT_EQ(exploding.findings[i].value, 2.0);
  }
  const auto& trunc = result_of(*outcome, "exploding_trunc");
  ASSERT_EQ(trunc.findings.size(), 1u) << "the step-4 record must be read once complete";
  EXPECT_EQ(trunc.findings[0].step, 4);
  EXPECT_EQ(trunc.findings[0].value, 1.0);
  EXPECT_EQ(result_of(*outcome, "vanishing").status, rule_status::no_issues_found);
  EXPECT_EQ(result_of(*outcome, "bad_param").status, rule_status::error);
  EXPECT_NE(result_of(*outcome, "bad_param").status_details.find("treshold"), std::string::npos);
  EXPECT_EQ(result_of(*outcome, "zero_unselected").status, rule_status::error);

  // Transitions, each exactly once.
  EXPECT_EQ(transitions_of(events, "exploding"), std::vector<std::string>{"InProgress>IssuesFound@6"});
  EXPECT_EQ(transitions_of(events, "exploding_trunc"), std::vector<std::string>{"InProgress>IssuesFound@4"});
  EXPECT_EQ(transitions_of(events, "vanishing"), std::vector<std::string>{"InProgress>NoIssuesFound"});
  EXPECT_EQ(transitions_of(events, "bad_param"), std::vector<std::string>{"InProgress>Error"});
  EXPECT_EQ(transitions_of(events, "zero_unselected"), std::vector<std::string>{"InProgress>Error"});

  // Completeness: step 3 reported as 1 of 2 with worker_1 missing, while step 2 was the last
  // evaluated; no step past 3 evaluated before worker_1 wrote it.
  bool saw_lag = false;
  for (const auto& e : events) {
    if (e.kind != event_kind::progress || !e.waiting_on || e.waiting_on->step != 3) continue;
    saw_lag = true;
    EXPECT_EQ(e.waiting_on->workers_done, 1);
    EXPECT_EQ(e.waiting_on->num_workers, 2);
    EXPECT_EQ(e.waiting_on->missing, std::vector<std::string>{"worker_1"});
    EXPECT_EQ(e.last_step, 2);
    EXPECT_NE(e.message.find("step 3: 1 of 2 workers"), std::string::npos) << e.message;
  }
  EXPECT_TRUE(saw_lag);
  // The cut tail never became a warning or a failed record, and .tmp files were ignored.
  for (const auto& e : events) {
    if (e.kind == event_kind::warning) ADD_FAILURE() << "warning: " << e.message;
  }

  // The end: training_job_end.ts, after the final pass, then one result per rule.
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, event_kind::end);
  EXPECT_EQ(events.back().reason, end_reason::training_ended);

  // Actions: the stop-signal file holds the epoch seconds of the fire.
  const std::string signal_text = trialstat::testing::read_text_file(root / "stop_signal");
  const int64_t signal_seconds = std::stoll(signal_text);
  EXPECT_EQ(std::to_string(signal_seconds), signal_text);  // digits only
  EXPECT_GE(signal_seconds, std::chrono::duration_cast<std::chrono::seconds>(started.time_since_epoch()).count());
  EXPECT_LE(signal_seconds, std::chrono::duration_cast<std::chrono::seconds>(finished.time_since_epoch()).count());
  // The argv command saw the finding in its environment (and our own variables, e.g. PATH).
  const std::string env = trialstat::testing::read_text_file(env_dump);
  for (const char* line : {"TRIALSTAT_RULE=ExplodingTensor\n", "TRIALSTAT_RULE_CONFIGURATION=exploding\n",
                           "TRIALSTAT_STEP=6\n", "TRIALSTAT_TENSOR=relu_output\n",
                           "TRIALSTAT_WORKER=worker_0\n", "TRIALSTAT_VALUE=2\n", "TRIALSTAT_MODE=TRAIN\n",
                           "TRIALSTAT_MODE_STEP=6\n", "TRIALSTAT_STATUS=IssuesFound\n", "PATH="}) {
    EXPECT_NE(env.find(line), std::string::npos) << line << " not in:\n" << env;
  }
  EXPECT_NE(env.find("TRIALSTAT_MESSAGE=2 non-finite of 32 elements (2 NaN, 0 +Inf, 0 -Inf)\n"), std::string::npos) << env;
  // The shell command got the message verbatim (quotes and parentheses included).
  EXPECT_EQ(trialstat::testing::read_text_file(message_dump), "1 non-finite of 64 elements (0 NaN, 1 +Inf, 0 -Inf)");
  int command_exits = 0;
  for (const auto& e : events) {
    if (e.kind == event_kind::command_exit) {
      ++command_exits;
      EXPECT_EQ(e.command->exit_code, 0) << e.message;
    }
  }
  EXPECT_EQ(command_exits, 2);
}

// An exit_status action ends the watch at once with that status; rules that did not conclude
// stay InProgress; the writer is still writing.
// Issue 12: a corrupt record (a flipped length-CRC bit) is a warning event naming it and a
// skipped record of the rules that needed it; with strict reading those rules end Error.
TEST(Watch, UnreadableRecordsAreWarnedAndStrictMakesThemErrors) {
  const fs::path root = trialstat::testing::make_scratch_dir("watch_skipped") / "trial";
  {
    auto w = tw::trial_writer::create(root, "worker_0", {});
    ASSERT_TRUE(w.has_value());
    for (int64_t step = 0; step < 3; ++step) ASSERT_TRUE(write_worker_step(*w, step, {}, seed).ok());
    ASSERT_TRUE(w->close(true).ok());
  }
  const fs::path event = root / "events/000000000001/000000000001_worker_0.tfevents";
  {
    std::fstream f(event, std::ios::binary | std::ios::in | std::ios::out);
    char c = 0;
    f.seekg(9);
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(9);
    f.write(&c, 1);
  }
  for (const bool strict : {false, true}) {
    std::vector<trialstat::live::watch_rule> rules;
    rules.push_back(configured(R"({"RuleConfigurationName": "exploding",
        "RuleParameters": {"rule_to_invoke": "ExplodingTensor"}})"));
    auto options = fast_options();
    options.wait_for_collections = false;
    options.pipeline.strict = strict;
    event_log log;
    auto outcome = trialstat::live::watch_trial(root, std::move(rules), options,
                                                [&](const watch_event& e) { log.add(e); });
    ASSERT_TRUE(outcome.has_value()) << outcome.error_status().to_string();
    const auto& r = result_of(*outcome, "exploding");
    ASSERT_EQ(r.skipped.size(), 1u);
    EXPECT_EQ(r.skipped[0].step, 1);
    EXPECT_EQ(r.skipped[0].offset_bytes, 0u);
    bool warned = false;
    for (const auto& e : log.snapshot()) {
      warned = warned || (e.kind == event_kind::warning &&
                          e.message.find("000000000001_worker_0.tfevents") != std::string::npos);
    }
    EXPECT_TRUE(warned);
    EXPECT_EQ(r.status, strict ? rule_status::error : rule_status::no_issues_found) << r.status_details;
    EXPECT_EQ(outcome->exit_status, strict ? 2 : 0);
  }
}

TEST(Watch, ExitActionStopsTheWatch) {
  const fs::path root = trialstat::testing::make_scratch_dir("watch_exit") / "trial";
  std::vector<trialstat::live::watch_rule> rules;
  rules.push_back(configured(R"({"RuleConfigurationName": "exploding",
      "RuleParameters": {"rule_to_invoke": "ExplodingTensor"}, "Actions": {"exit_status": "3"}})"));
  rules.push_back(configured(R"({"RuleConfigurationName": "vanishing",
      "RuleParameters": {"rule_to_invoke": "VanishingGradient"}})"));
  std::atomic<bool> stop{false};
  std::vector<std::string> writer_errors;
  std::thread writer([&] {
    auto w0 = tw::trial_writer::create(root, "worker_0", {});
    if (!w0) return writer_errors.push_back("create");
    for (int64_t step = 0; step < 2000 && !stop; ++step) {
      step_content c;
      c.nan_in_relu = step == 5;
      if (!write_worker_step(*w0, step, c, seed).ok()) return writer_errors.push_back("write");
      std::this_thread::sleep_for(1ms);
    }
    (void)w0->close(false);  // no end marker: the watch must end by the action alone
  });
  event_log log;
  auto outcome = trialstat::live::watch_trial(root, std::move(rules), [] {
    auto o = fast_options();
    o.wait_for_collections = false;  // this writer has no collections file
    return o;
  }(), [&](const watch_event& e) { log.add(e); });
  stop = true;
  writer.join();
  for (const auto& e : writer_errors) ADD_FAILURE() << "writer: " << e;
  ASSERT_TRUE(outcome.has_value()) << outcome.error_status().to_string();
  EXPECT_EQ(outcome->reason, end_reason::exit_action);
  EXPECT_EQ(outcome->exit_status, 3);
  EXPECT_EQ(result_of(*outcome, "exploding").status, rule_status::issues_found);
  EXPECT_EQ(result_of(*outcome, "exploding").findings.front().step, 5);
  EXPECT_EQ(result_of(*outcome, "vanishing").status, rule_status::in_progress);
  const auto events = log.snapshot();
  bool saw_exit_action = false;
  for (const auto& e : events) {
    saw_exit_action = saw_exit_action || (e.kind == event_kind::action && e.action->exit_status == 3);
  }
  EXPECT_TRUE(saw_exit_action);
}

// A passed stop signal (RULES §1) ends the watch like the end marker: a final pass that also
// evaluates the step the second worker never wrote.
TEST(Watch, StopSignalEndsWithFinalPassOverIncompleteSteps) {
  const fs::path root = trialstat::testing::make_scratch_dir("watch_stop") / "trial";
  std::vector<trialstat::live::watch_rule> rules;
  rules.push_back(configured(R"({"RuleConfigurationName": "exploding",
      "RuleParameters": {"rule_to_invoke": "ExplodingTensor"}})"));
  event_log log;
  std::vector<std::string> writer_errors;
  std::thread writer([&] {
    auto w0 = tw::trial_writer::create(root, "worker_0", two_workers());
    auto w1 = tw::trial_writer::create(root, "worker_1", two_workers());
    if (!w0 || !w1) return writer_errors.push_back("create");
    for (int64_t step = 0; step < 5; ++step) {
      step_content c;
      c.nan_in_relu = step == 4;  // worker_1 never writes step 4
      if (!write_worker_step(*w0, step, c, seed).ok()) return writer_errors.push_back("w0");
      if (step < 4 && !write_worker_step(*w1, step, {}, seed).ok()) return writer_errors.push_back("w1");
    }
    if (!log.wait_for([](const watch_event& e) {
          return e.kind == event_kind::progress && e.waiting_on && e.waiting_on->step == 4;
        })) {
      return writer_errors.push_back("no report of step 4 waiting for worker_1");
    }
    // A stop signal 100 s in the past with a 1 s grace: the job counts as finished.
    const auto past = std::chrono::system_clock::now() - 100s;
    std::ofstream(root / "stop_here") << std::chrono::duration_cast<std::chrono::seconds>(past.time_since_epoch()).count();
  });
  auto options = fast_options();
  options.stop_signal_file = "stop_here";
  options.stop_signal_grace = 1s;
  auto outcome = trialstat::live::watch_trial(root, std::move(rules), options,
                                              [&](const watch_event& e) { log.add(e); });
  writer.join();
  for (const auto& e : writer_errors) ADD_FAILURE() << "writer: " << e;
  ASSERT_TRUE(outcome.has_value()) << outcome.error_status().to_string();
  EXPECT_EQ(outcome->reason, end_reason::stop_signal);
  EXPECT_EQ(outcome->exit_status, 1);
  EXPECT_EQ(outcome->last_step, 4);
  const auto& exploding = result_of(*outcome, "exploding");
  ASSERT_EQ(exploding.findings.size(), 1u);
  EXPECT_EQ(exploding.findings[0].step, 4);
  EXPECT_EQ(transitions_of(log.snapshot(), "exploding"), std::vector<std::string>{"InProgress>IssuesFound@4"});
}

namespace {

/// A time-based test rule: fires on the first poll that sees at least `steps` saved steps.
class poll_rule final : public trialstat::rules::rule {
 public:
  explicit poll_rule(std::size_t steps, std::atomic<int>* polls) : steps_(steps), polls_(polls) {}
  std::string_view name() const override { return "PollProbe"; }
  trialstat::status prepare(const trialstat::trial::catalog&, trialstat::plan::read_plan&) override {
    return trialstat::status::success();
  }
  void evaluate_step(const trialstat::trial::catalog&, const trialstat::stats::step_statistics&,
                     std::vector<trialstat::rules::finding>&) override {}
  void on_poll(const trialstat::trial::catalog& trial, std::chrono::system_clock::time_point now,
               std::vector<trialstat::rules::finding>& findings) override {
    ++*polls_;
    EXPECT_GE(now, last_);
    last_ = now;
    if (fired_ || trial.step_infos().size() < steps_) return;
    fired_ = true;
    trialstat::rules::finding f;
    f.rule = "PollProbe";
    f.step = trial.step_infos().back().step;
    f.message = "enough steps seen";
    findings.push_back(std::move(f));
  }

 private:
  std::size_t steps_;
  std::atomic<int>* polls_;
  bool fired_ = false;
  std::chrono::system_clock::time_point last_{};
};

}  // namespace

// on_poll reaches rules on every poll with the current time; a finding there is a transition.
TEST(Watch, OnPollHookForTimeBasedRules) {
  const fs::path root = trialstat::testing::make_scratch_dir("watch_poll") / "trial";
  std::atomic<int> polls{0};
  std::vector<trialstat::live::watch_rule> rules(1);
  rules[0].invocation.configuration_name = "probe";
  rules[0].invocation.rule = std::make_unique<poll_rule>(3, &polls);
  event_log log;
  std::vector<std::string> writer_errors;
  std::thread writer([&] {
    auto w0 = tw::trial_writer::create(root, "worker_0", {});
    if (!w0) return writer_errors.push_back("create");
    for (int64_t step = 0; step < 3; ++step) {
      if (!write_worker_step(*w0, step, {}, seed).ok()) return writer_errors.push_back("write");
    }
    if (!log.wait_for([](const watch_event& e) { return e.kind == event_kind::status_change; })) {
      writer_errors.push_back("the probe never fired");
    }
    (void)w0->close(true);
  });
  auto options = fast_options();
  options.wait_for_collections = false;
  auto outcome = trialstat::live::watch_trial(root, std::move(rules), options,
                                              [&](const watch_event& e) { log.add(e); });
  writer.join();
  for (const auto& e : writer_errors) ADD_FAILURE() << "writer: " << e;
  ASSERT_TRUE(outcome.has_value());
  EXPECT_GE(polls.load(), 1);
  EXPECT_EQ(outcome->results[0].status, rule_status::issues_found);
  EXPECT_EQ(transitions_of(log.snapshot(), "probe"), std::vector<std::string>{"InProgress>IssuesFound@2"});
}

// A trial that never appears: waiting report, then the timeout; rules stay InProgress (exit 3).
TEST(Watch, TimeoutWhileWaitingForTheFolder) {
  const fs::path root = trialstat::testing::make_scratch_dir("watch_timeout") / "never";
  std::vector<trialstat::live::watch_rule> rules;
  rules.push_back(configured(R"({"RuleParameters": {"rule_to_invoke": "ExplodingTensor"}})"));
  auto options = fast_options();
  options.timeout = 150ms;
  event_log log;
  const auto t0 = std::chrono::steady_clock::now();
  auto outcome = trialstat::live::watch_trial(root, std::move(rules), options,
                                              [&](const watch_event& e) { log.add(e); });
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->reason, end_reason::timeout);
  EXPECT_EQ(outcome->exit_status, 3);
  EXPECT_EQ(outcome->results[0].status, rule_status::in_progress);
  const auto events = log.snapshot();
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.front().kind, event_kind::waiting);
  EXPECT_NE(events.front().message.find("waiting for the trial folder"), std::string::npos);
  EXPECT_EQ(events.back().kind, event_kind::end);
}

// Event JSON lines carry the documented keys.
TEST(Watch, EventJson) {
  watch_event e;
  e.kind = event_kind::progress;
  e.time = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  e.last_step = 2;
  e.steps_evaluated = 3;
  e.waiting_on = trialstat::live::step_completeness{3, 1, 2, {"worker_1"}};
  e.message = "evaluated up to step 2; step 3: 1 of 2 workers";
  const auto j = nlohmann::json::parse(trialstat::live::event_json(e));
  EXPECT_EQ(j["event"], "progress");
  EXPECT_EQ(j["time"], 1700000000.0);
  EXPECT_EQ(j["last_step"], 2);
  EXPECT_EQ(j["waiting_on"]["step"], 3);
  EXPECT_EQ(j["waiting_on"]["workers_done"], 1);
  EXPECT_EQ(j["waiting_on"]["num_workers"], 2);
  EXPECT_EQ(j["waiting_on"]["missing"][0], "worker_1");

  watch_event s;
  s.kind = event_kind::status_change;
  s.rule = 0;
  s.rule_name = "ExplodingTensor";
  s.configuration_name = "exploding";
  trialstat::pipeline::rule_transition t;
  t.from = rule_status::in_progress;
  t.to = rule_status::issues_found;
  t.step = 6;
  t.finding = trialstat::rules::finding{"ExplodingTensor", 6, trialstat::mode::train, 6, "x", "worker_0",
                                        std::numeric_limits<double>::infinity(), "m"};
  s.transition = t;
  const auto k = nlohmann::json::parse(trialstat::live::event_json(s));
  EXPECT_EQ(k["event"], "status");
  EXPECT_EQ(k["rule"], "ExplodingTensor");
  EXPECT_EQ(k["configuration_name"], "exploding");
  EXPECT_EQ(k["from"], "InProgress");
  EXPECT_EQ(k["to"], "IssuesFound");
  EXPECT_EQ(k["step"], 6);
  EXPECT_EQ(k["finding"]["value"], "Infinity");
  EXPECT_EQ(k["finding"]["mode"], "TRAIN");
}
