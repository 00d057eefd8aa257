// SPDX-License-Identifier: Apache-2.0
// `trialstat watch TRIAL`: follow a trial that is still being written, evaluate rules as soon as
// their steps are complete, report status transitions, run actions when a rule fires, and end at
// training_job_end.ts (or a passed stop signal) with a final pass.
// Exit: an exit action's status; else 0 no issues, 1 issues found, 2 error, 3 still in progress
// (timeout / interrupted).
#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "tools/trialstat/commands.hpp"
#include "trialstat/frontend/store_choice.hpp"
#include "trialstat/store/live_writer.hpp"
#include "trialstat/store/store_source.hpp"
#include "trialstat/store/statistics_store.hpp"
#include "trialstat/live/watch_trial.hpp"
#include "trialstat/report/rule_report.hpp"
#include "trialstat/rules/rule_config.hpp"

namespace trialstat::cli {
namespace {

struct watch_cli_options {
  std::string trial;
  std::string config;
  std::vector<std::string> rule_names;
  std::vector<std::string> params;
  std::vector<std::string> order;  // "rule" / "param", in command-line order
  std::string format = "table";
  frontend::device_options device;  // --device, --verify-device, --pinned-mb
  std::string events;
  std::string stop_signal_file;
  std::optional<int64_t> stop_grace_s;
  std::string on_fire_command;
  std::optional<int> exit_on_fire;
  int64_t poll_ms = 100;
  double timeout_s = 0;
  int64_t command_timeout_s = 60;
  bool no_wait_collections = false;
  bool no_inotify = false;
  std::size_t max_findings = 20;
  bool strict = false;  // --strict: an unreadable record makes the rules that need it Error
  std::string store = "auto";  // --store PATH|auto|off: rows written as steps complete
};

volatile std::sig_atomic_t interrupted_flag = 0;
extern "C" void on_interrupt(int) { interrupted_flag = 1; }

/// Text output: one line per event worth a human's attention.
class text_printer {
 public:
  void operator()(const live::watch_event& e) {
    const auto label = [&] {
      return e.configuration_name == e.rule_name || e.rule_name.empty()
                 ? e.configuration_name
                 : fmt::format("{} ({})", e.configuration_name, e.rule_name);
    };
    switch (e.kind) {
      case live::event_kind::started:
      case live::event_kind::waiting:
        fmt::print("{}\n", e.message);
        break;
      case live::event_kind::warning:
        fmt::print(stderr, "warning: {}\n", e.message);
        break;
      case live::event_kind::progress:
        // Only completeness changes: "step S: k of N workers".
        if (e.waiting_on && (!shown_ || shown_->step != e.waiting_on->step ||
                             shown_->workers_done != e.waiting_on->workers_done)) {
          fmt::print("{}\n", e.message);
        }
        shown_ = e.waiting_on;
        break;
      case live::event_kind::status_change:
        fmt::print("{}: {}\n", label(), e.message);
        break;
      case live::event_kind::action:
        fmt::print("{}: action {}\n", label(), e.message);
        break;
      case live::event_kind::command_exit:
        fmt::print("{}: {}\n", e.configuration_name, e.message);
        break;
      case live::event_kind::end:
        fmt::print("end: {}\n", e.message);
        break;
      case live::event_kind::finding:
      case live::event_kind::result:
        break;  // the final table lists them
    }
    std::fflush(stdout);
  }

 private:
  std::optional<live::step_completeness> shown_;
};

int run_watch(const watch_cli_options& o) {
  auto format = report::parse_output_format(o.format);
  if (!format) return report_error(format.error_status());
  auto pipeline_options = frontend::make_pipeline_options(o.device);
  if (!pipeline_options) return report_error(pipeline_options.error_status());
  if (o.poll_ms < 1) return report_error(status(error_code::invalid_argument, "--poll-ms must be at least 1"));

  // Each rule keeps its config's actions (flags and default rules have none).
  auto configs = rule_configs_from_flags(o.config, o.rule_names, o.params, o.order);
  if (!configs) return report_error(configs.error_status());
  std::vector<live::watch_rule> watch_rules;
  for (const auto& c : *configs) {
    watch_rules.push_back(
        {frontend::make_rule_invocation(c.configuration_name, c.rule_name, c.parameters), c.actions});
  }

  // Command-line actions apply to every rule that does not set its own.
  for (auto& r : watch_rules) {
    if (!o.stop_signal_file.empty() && r.actions.stop_signal_file.empty()) {
      r.actions.stop_signal_file = o.stop_signal_file;
    }
    if (!o.on_fire_command.empty() && r.actions.command.empty() && r.actions.shell_command.empty()) {
      r.actions.shell_command = o.on_fire_command;
    }
    if (o.exit_on_fire && !r.actions.exit_status) r.actions.exit_status = o.exit_on_fire;
  }

  live::watch_options options;
  options.pipeline = *pipeline_options;
  options.pipeline.strict = o.strict;
  options.poll_interval = std::chrono::milliseconds(o.poll_ms);
  options.use_inotify = !o.no_inotify;
  options.source = command_source_options();
  options.wait_for_collections = !o.no_wait_collections;
  options.command_timeout = std::chrono::seconds(o.command_timeout_s);
  if (o.timeout_s > 0) {
    options.timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000.0));
  }
  // The stop-signal file to watch: --stop-signal-file, else SageMaker's variable (RULES §1).
  options.stop_signal_file = o.stop_signal_file;
  if (options.stop_signal_file.empty()) {
    if (const char* env = std::getenv("SAGEMAKER_ENV_RULE_STOP_SIGNAL_FILE"); env && *env) {
      options.stop_signal_file = env;
    }
  }
  int64_t grace_s = 60;
  if (const char* env = std::getenv("rule_stop_grace_time_secs"); env && *env) {
    grace_s = std::strtoll(env, nullptr, 10);
  }
  if (o.stop_grace_s) grace_s = *o.stop_grace_s;
  options.stop_signal_grace = std::chrono::seconds(grace_s);
  options.interrupted = [] { return interrupted_flag != 0; };
  // The statistics store: the steps stored before (by an earlier watch or run) are served from
  // it when the watch starts; the rows of each step evaluated after are written as it completes,
  // so that `rules` in another process reads only the steps newer than the watch's (README
  // "Statistics store").
  std::unique_ptr<store::live_writer> store_writer;
  std::unique_ptr<store::store_source> store_reader;
  auto store_options = frontend::store_options(o.store, o.trial, [](const status& why) {
    fmt::print(stderr, "warning: {}\n", why.message());
  });
  if (!store_options) {
    fmt::print(stderr, "warning: {} (the store is not used)\n", store_options.error_status().message());
  } else if (*store_options) {
    store::store_source_options s = **store_options;
    s.backend = options.pipeline.backend;
    store_reader = std::make_unique<store::store_source>(s);
    options.written_steps = store_reader->source();
    store_writer = std::make_unique<store::live_writer>(std::move(s));
    options.on_step_records = store_writer->observer();
  }

  std::unique_ptr<std::FILE, int (*)(std::FILE*)> events_file(nullptr, &std::fclose);
  if (!o.events.empty() && o.events != "-") {
    events_file.reset(std::fopen(o.events.c_str(), "w"));
    if (!events_file) {
      return report_error(status(error_code::io_error, fmt::format("--events {}: cannot open for writing", o.events)));
    }
  }
  const bool json_stdout = *format == report::output_format::json || o.events == "-";
  text_printer printer;
  const live::event_callback on_event = [&](const live::watch_event& e) {
    if (json_stdout || events_file) {
      const std::string line = live::event_json(e);
      if (json_stdout) {
        fmt::print("{}\n", line);
        std::fflush(stdout);
      }
      if (events_file) {
        fmt::print(events_file.get(), "{}\n", line);
        std::fflush(events_file.get());
      }
    }
    if (!json_stdout) printer(e);
  };

  interrupted_flag = 0;
  auto previous_int = std::signal(SIGINT, on_interrupt);
  auto previous_term = std::signal(SIGTERM, on_interrupt);
  auto outcome = live::watch_trial(o.trial, std::move(watch_rules), options, on_event);
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
  if (!outcome) return report_error(outcome.error_status());
  if (store_reader) {
    // What came from the store when the watch started; what the whole watch read and wrote.
    store::store_run_summary summary = store_reader->summary();
    summary.read = outcome->records - summary.served - summary.history_reads;  // as store_source counts
    summary.bytes_read = outcome->bytes_read;
    summary.written += store_writer->summary().written;
    print_store_summary(summary, store_reader->path());
  }
  if (!json_stdout) report::write_rule_results(outcome->results, *format, stdout, o.max_findings);
  return outcome->exit_status;
}

}  // namespace

void add_watch_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "watch",
      "Follow a trial that is still being written: evaluate rules as soon as their steps are "
      "complete, report status transitions, run actions when a rule fires; ends at "
      "training_job_end.ts (or a passed stop signal) with a final pass. Exit: an exit action's "
      "status, else 0 no issues, 1 issues found, 2 error, 3 still in progress (timeout).");
  auto o = std::make_shared<watch_cli_options>();
  cmd->add_option("trial", o->trial, "Trial folder or s3://bucket/prefix (may not exist yet)")->required();
  add_source_options(cmd);
  auto* rule_opt = cmd->add_option("--rule", o->rule_names, "Built-in rule name (repeatable)");
  auto* param_opt = cmd->add_option("--param", o->params, "key=value for the preceding --rule (repeatable)");
  cmd->add_option("--config", o->config,
                  "SageMaker rule config (JSON list of {RuleConfigurationName, RuleParameters: "
                  "{rule_to_invoke, ...}, Actions?: {stop_signal_file, command, exit_status}})")
      ->check(CLI::ExistingFile);
  cmd->add_option("--poll-ms", o->poll_ms, "Milliseconds between polls (inotify wakes earlier)")->capture_default_str();
  cmd->add_option("--timeout", o->timeout_s, "Give up after this many seconds (0 = wait for the end)")->capture_default_str();
  cmd->add_option("--format", o->format, "table (text) or json (JSON Lines of events)")->capture_default_str();
  cmd->add_option("--events", o->events, "Also write every event as JSON Lines to this file ('-': stdout)");
  cmd->add_option("--stop-signal-file", o->stop_signal_file,
                  "On fire, write the epoch seconds here (relative: to the trial); the watch ends "
                  "once that time + --stop-grace has passed. Default to watch: "
                  "$SAGEMAKER_ENV_RULE_STOP_SIGNAL_FILE");
  cmd->add_option("--stop-grace", o->stop_grace_s,
                  "Seconds after the stop signal's time before the job counts as finished "
                  "(default $rule_stop_grace_time_secs or 60)");
  cmd->add_option("--on-fire-command", o->on_fire_command,
                  "On fire, run this with /bin/sh -c; the finding is in TRIALSTAT_RULE, "
                  "TRIALSTAT_STEP, TRIALSTAT_TENSOR, TRIALSTAT_VALUE, TRIALSTAT_MESSAGE, ... "
                  "(quote them: \"$TRIALSTAT_MESSAGE\")");
  cmd->add_option("--exit-on-fire", o->exit_on_fire, "On fire, stop watching and exit with this status")
      ->check(CLI::Range(0, 255));
  cmd->add_option("--command-timeout", o->command_timeout_s,
                  "At the end, seconds to wait for started commands before killing them")->capture_default_str();
  cmd->add_flag("--no-wait-collections", o->no_wait_collections,
                "Evaluate before a collections file exists (num_workers = workers seen so far)");
  cmd->add_flag("--no-inotify", o->no_inotify, "Poll only (no inotify wake-ups)");
  cmd->add_flag("--strict", o->strict,
                "A record that cannot be read makes the rules that needed it Error (exit 2) "
                "instead of a warning");
  add_store_option(cmd, &o->store);
  cmd->add_option("--max-findings", o->max_findings, "Findings listed per rule in the final text table (0 = all)")->capture_default_str();
  add_device_flags(cmd, &o->device, /*with_pinned_mb=*/false);
  cmd->callback([=] {
    for (const CLI::Option* opt : cmd->parse_order()) {
      if (opt == rule_opt) o->order.emplace_back("rule");
      if (opt == param_opt) o->order.emplace_back("param");
    }
    *exit_code = run_watch(*o);
  });
}

}  // namespace trialstat::cli
