// SPDX-License-Identifier: Apache-2.0
/// @file actions.hpp
/// @brief What happens when a rule fires (DESIGN.md stage 7, issue 4): write the stop-signal
/// file, run a user command with the finding in its environment, exit with a status — chosen
/// per rule (`rules::rule_actions`, the config's `"Actions"`). Also reads a stop-signal file to
/// decide whether the job counts as finished.
/// Source: spec/RULES.md §1 ("Actions", "Stop-signal file"); smdebug's actions
/// (`smdebug/rules/action/*`: stoptraining / email / sms) are replaced by these local ones.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trialstat/rules/rule.hpp"
#include "trialstat/rules/rule_config.hpp"
#include "trialstat/status.hpp"

namespace trialstat::actions {

// ---- stop-signal file (spec/RULES.md §1) -----------------------------------------------------

/// @brief Write `now` as integer epoch seconds (decimal digits, no newline) into `path`, through
/// `<path>.tmp` and a rename so a reader never sees a partial number; creates missing parent
/// folders. Errors: io_error naming the file.
[[nodiscard]] status write_stop_signal_file(const std::filesystem::path& path,
                                            std::chrono::system_clock::time_point now);

/// @brief Whether a stop-signal file says the job is finished: the file exists and either does
/// not hold an integer epoch-seconds `T` (an unreadable file counts as finished) or
/// `now > T + grace`. False when the file does not exist. Source: RULES §1 (ProfilerTrial's
/// reading; grace `rule_stop_grace_time_secs`, default 60 s).
[[nodiscard]] bool stop_signal_passed(const std::filesystem::path& path,
                                      std::chrono::system_clock::time_point now,
                                      std::chrono::seconds grace);

// ---- commands ---------------------------------------------------------------------------------

/// @brief The finding handed to a rule's actions.
struct fire_context {
  std::string rule;                ///< rule name, e.g. "ExplodingTensor"
  std::string configuration_name;  ///< `RuleConfigurationName`
  std::filesystem::path trial;     ///< trial folder
  rules::finding finding;          ///< the finding that fired (the rule's first)
};

/// @brief The variables a command gets on top of trialstat's own environment, as "KEY=VALUE":
/// TRIALSTAT_RULE, TRIALSTAT_RULE_CONFIGURATION, TRIALSTAT_STATUS (=IssuesFound),
/// TRIALSTAT_TRIAL, TRIALSTAT_STEP (global step), TRIALSTAT_MODE, TRIALSTAT_MODE_STEP,
/// TRIALSTAT_TENSOR, TRIALSTAT_WORKER, TRIALSTAT_VALUE (shortest round-trip decimal; "nan",
/// "inf", "-inf") and TRIALSTAT_MESSAGE. Values are passed as they are: they never pass through a
/// shell's parser (a shell command must quote "$TRIALSTAT_MESSAGE" itself).
[[nodiscard]] std::vector<std::string> finding_environment(const fire_context& context);

/// @brief How a started command ended.
struct command_exit {
  std::string rule;            ///< configuration name of the rule that started it
  std::string command;         ///< the command as text (argv joined by spaces, or the shell string)
  int pid = 0;
  std::optional<int> exit_code;    ///< its exit status when it exited
  std::optional<int> signal;       ///< the signal that ended it
  bool killed_at_timeout = false;  ///< `wait_all` ended it (SIGTERM, then SIGKILL)
};

/// @brief Runs commands for fired rules without waiting for them (a slow notification must not
/// stall the watcher): `start` spawns with posix_spawn — an argv list directly (PATH searched),
/// a string through `/bin/sh -c` — with stdin from /dev/null and stdout sent to trialstat's
/// stderr (so it never mixes with a report on stdout); `reap` collects those that ended;
/// `wait_all` waits for the rest. Not thread-safe. The destructor waits like `wait_all` with a
/// 10 s limit so no child is left behind.
class command_runner {
 public:
  command_runner();
  ~command_runner();
  command_runner(command_runner&&) noexcept;
  command_runner& operator=(command_runner&&) noexcept;

  /// @brief Start `argv` (argv[0] searched in PATH) or, when `argv` is empty, `/bin/sh -c
  /// shell_command`, with `extra_environment` ("KEY=VALUE", overriding same-named variables).
  /// @return the child's pid; errors: invalid_argument (nothing to run), io_error (spawn
  ///   failed, e.g. program not found: the message names it).
  [[nodiscard]] result<int> start(const std::vector<std::string>& argv,
                                  const std::string& shell_command,
                                  const std::vector<std::string>& extra_environment,
                                  std::string rule);

  /// @brief Commands that ended since the last call (non-blocking).
  [[nodiscard]] std::vector<command_exit> reap();
  /// @brief Wait up to `timeout` for every running command; then SIGTERM the rest, give them
  /// 1 s, SIGKILL what is left. Returns every command that ended during the call.
  [[nodiscard]] std::vector<command_exit> wait_all(std::chrono::milliseconds timeout);
  /// @brief Commands still running.
  [[nodiscard]] std::size_t running_count() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

// ---- one rule's actions ------------------------------------------------------------------------

/// @brief What one action did.
struct action_report {
  std::string action;        ///< "stop_signal_file", "command", "exit_status"
  std::string description;   ///< e.g. "wrote 1712345678 to /trial/stop_signal", "started pid 42: notify.sh"
  status outcome;            ///< ok, or why it failed (actions never stop the watcher)
  std::optional<int> exit_status;  ///< "exit_status": the status to exit with
};

/// @brief Carry out `actions` for a fired rule, in the order stop-signal file, command, exit
/// status. A relative `stop_signal_file` is taken relative to `context.trial`. Failures are
/// reported, never thrown or fatal. The exit itself is the caller's (the watcher's) business.
[[nodiscard]] std::vector<action_report> fire(const rules::rule_actions& actions,
                                              const fire_context& context,
                                              std::chrono::system_clock::time_point now,
                                              command_runner& commands);

}  // namespace trialstat::actions
