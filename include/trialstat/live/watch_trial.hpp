// SPDX-License-Identifier: Apache-2.0
/// @file watcher.hpp
/// @brief `trialstat watch`: follow a trial that is still being written and evaluate rules as
/// soon as the steps they need are complete; report per-rule status transitions, run each
/// fired rule's actions, and end at `training_job_end.ts` or a passed stop signal with a final
/// pass. Sources: spec/TRIAL_API.md §2 (refresh, end of training), §4 (completeness, exact here
/// instead of smdebug's 1000-step window); spec/RULES.md §1 (invoke loop, statuses, actions,
/// stop-signal file).
///
/// The loop, every poll (`watch_options::poll_interval`, woken early by inotify on Linux when
/// an index, collections or marker file appears):
///  1. open the catalog once the trial folder exists (index files only: an event file without
///     its index file is not loaded while the trial is live — it may still be being written),
///     then `catalog::refresh()` (only new files are read; `*.tmp` ignored);
///  2. end of training (`training_job_end.ts`) or a passed stop signal → one more refresh, the
///     final pass (`rule_session::finish`: every remaining step, complete or not), done;
///  3. once a collections file exists (so `num_workers` is known, as smdebug waits for it),
///     `rule_session::advance()`: the steps that all `num_workers` workers wrote are evaluated in
///     order; a step whose records are cut short at a file's tail is retried next poll;
///  4. `rule_session::poll(now)` for time-based rules;
///  5. report status transitions and findings; for each rule that fired (InProgress →
///     IssuesFound, once per rule) run its actions; an `exit_status` action ends the watch;
///  6. report progress when it changed: the last step evaluated and the completeness of the
///     first step not evaluated ("step S: k of N workers").
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/actions/actions.hpp"
#include "trialstat/io/source_options.hpp"
#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/rules/rule_config.hpp"
#include "trialstat/status.hpp"

namespace trialstat::live {

/// @brief Why a watch ended.
enum class end_reason : uint8_t {
  training_ended,  ///< `training_job_end.ts` appeared (final pass done)
  stop_signal,     ///< the stop-signal file's time plus grace passed (final pass done)
  exit_action,     ///< a fired rule's `exit_status` action (no final pass)
  timeout,         ///< `watch_options::timeout` passed first (no final pass)
  interrupted,     ///< `watch_options::interrupted` returned true (no final pass)
};
/// @brief "training_ended", "stop_signal", "exit_action", "timeout", "interrupted".
[[nodiscard]] std::string_view end_reason_name(end_reason r) noexcept;

/// @brief Completeness of one saved step (exact, TRIAL_API §4 without the heuristic).
struct step_completeness {
  int64_t step = 0;                       ///< global step
  int workers_done = 0;                   ///< workers whose index file for the step exists
  int num_workers = 0;                    ///< `_meta.num_workers` (or workers seen)
  std::vector<std::string> missing;       ///< known workers that have not written it, sorted
};

/// @brief What a watch reports, in order.
enum class event_kind : uint8_t {
  started,        ///< the rules and their initial status (InProgress, or Error)
  waiting,        ///< waiting for the trial folder / a collections file / an unfinished record
  progress,       ///< steps evaluated so far and the first step not complete yet
  status_change,  ///< a rule's status changed (`transition`)
  finding,        ///< a rule found a condition at a step (`finding`)
  action,         ///< a fired rule's action ran (`action`)
  command_exit,   ///< a command started by an action ended (`command`)
  warning,        ///< a file of the trial could not be loaded (costs that file only)
  result,         ///< a rule's final result (one per rule, after `end`)
  end,            ///< the watch ended (`reason`, `exit_status`)
};
/// @brief "started", "waiting", "progress", "status", "finding", "action", "command_exit",
/// "warning", "result", "end".
[[nodiscard]] std::string_view event_kind_name(event_kind k) noexcept;

/// @brief One report. Fields beyond `kind`, `time` and `message` are set per kind as noted.
struct watch_event {
  event_kind kind = event_kind::progress;
  std::chrono::system_clock::time_point time;
  std::string message;                               ///< one human-readable line
  /// status_change, finding, action, result: the rule (index into the rules given)
  std::optional<std::size_t> rule;
  std::string rule_name;
  std::string configuration_name;
  std::optional<pipeline::rule_transition> transition;  ///< status_change
  std::optional<rules::finding> finding;                ///< finding
  std::optional<actions::action_report> action;         ///< action
  std::optional<actions::command_exit> command;         ///< command_exit
  std::optional<pipeline::rule_result> result;          ///< result
  std::optional<int64_t> last_step;                     ///< progress, end: last step evaluated
  std::optional<step_completeness> waiting_on;          ///< progress: first step not complete
  std::optional<int64_t> steps_evaluated;               ///< progress, end: steps so far
  std::optional<end_reason> reason;                     ///< end
  std::optional<int> exit_status;                       ///< end: what the watch returns
};

/// @brief One rule of a watch and what to do when it fires.
struct watch_rule {
  pipeline::rule_invocation invocation;
  rules::rule_actions actions;  ///< empty: none
};

/// @brief Options of a watch.
struct watch_options {
  /// Time between polls (the latest a new step is noticed without inotify).
  std::chrono::milliseconds poll_interval{100};
  /// Wake early when index / collections / marker files appear (Linux inotify); falls back to
  /// plain polling when unavailable.
  bool use_inotify = true;
  pipeline::pipeline_options pipeline;
  /// Settings of the trial's source (`s3://` trials: S3 options; polled, no inotify).
  io::source_options source;
  /// The stop-signal file to watch (spec/RULES.md §1; relative: to the trial folder); "" = none.
  /// The watch ends (with a final pass) once `now > T + stop_signal_grace`.
  std::filesystem::path stop_signal_file;
  std::chrono::seconds stop_signal_grace{60};
  /// Evaluate only once a collections file exists (smdebug waits for it; it carries
  /// `num_workers`, without which a step could look complete before a slower worker's first
  /// file). false: `num_workers` = workers seen until the file appears.
  bool wait_for_collections = true;
  /// Give up after this long (end_reason::timeout); nullopt: wait for the end.
  std::optional<std::chrono::milliseconds> timeout;
  /// At the end, how long to wait for commands started by actions before killing them.
  std::chrono::milliseconds command_timeout{60000};
  /// Checked every poll (e.g. a SIGINT flag); true ends the watch (end_reason::interrupted).
  std::function<bool()> interrupted;
  /// Told each evaluated step's records (`trialstat watch --store`: rows written as steps
  /// complete, store/live_writer.hpp); null: nobody.
  pipeline::step_observer on_step_records;
  /// Where the steps already written when the watch first evaluates come from (`trialstat watch
  /// --store`: the statistics store serves the steps an earlier watch or run stored, and reads
  /// the rest; rule_session's live `source`); null: the watch reads them.
  pipeline::statistics_source written_steps;
};

/// @brief How a watch ended.
struct watch_outcome {
  end_reason reason = end_reason::training_ended;
  /// The exit_status action's status; else 2 if a rule is Error, 1 if one found issues, 3 if a
  /// rule is still InProgress (timeout, interrupted), 0 otherwise.
  int exit_status = 0;
  std::vector<pipeline::rule_result> results;
  std::optional<int64_t> last_step;       ///< last global step evaluated
  int64_t steps_evaluated = 0;
  int64_t records = 0;     ///< statistics records evaluated (served by `written_steps` or read)
  int64_t bytes_read = 0;  ///< event-file bytes read for them
};

using event_callback = std::function<void(const watch_event&)>;

/// @brief Watch the trial at `root` until it ends (see the file comment). Events go to
/// `on_event` as they happen (from this thread). Synchronous.
/// @return the outcome; errors: failures of the whole run (an unusable backend, a kernel
///   error, the trial folder not listable) — rules then never conclude.
[[nodiscard]] result<watch_outcome> watch_trial(const std::filesystem::path& root,
                                                std::vector<watch_rule> rules,
                                                const watch_options& options,
                                                const event_callback& on_event);

/// @brief One event as a JSON object on one line (no newline): `{"event": kind, "time": epoch
/// seconds, ...}` with, per kind: status → rule, configuration_name, from, to, step, finding?,
/// details?; finding → rule, configuration_name, finding {step, mode, mode_step, tensor,
/// worker, value, message}; action → rule, configuration_name, action, description, ok,
/// exit_status?; command_exit → rule (configuration name), command, pid, exit_code?, signal?,
/// killed?; progress → last_step, steps_evaluated, waiting_on {step, workers_done,
/// num_workers, missing}; warning/waiting/started → message; result → the `trialstat rules
/// --format json` object (rule, configuration_name, status, status_details?, warnings?,
/// findings); end → reason, exit_status, last_step, steps_evaluated. Non-finite values are the strings "NaN",
/// "Infinity", "-Infinity".
[[nodiscard]] std::string event_json(const watch_event& event);

/// @brief Completeness of `global_step` in `trial` (k of N workers, the missing ones by name).
[[nodiscard]] step_completeness completeness_of(const trial::catalog& trial, int64_t global_step);

}  // namespace trialstat::live
