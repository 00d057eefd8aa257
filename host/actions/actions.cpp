// SPDX-License-Identifier: Apache-2.0
// Actions of fired rules: stop-signal file (tmp + rename), commands via posix_spawn (no shell
// unless the user gave a string), exit status (reported; the watcher exits).
#include "trialstat/actions/actions.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "trialstat/io/file_reader.hpp"

extern char** environ;  // NOLINT: POSIX

namespace trialstat::actions {
namespace fs = std::filesystem;

namespace {

int64_t epoch_seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::string join_argv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

std::string_view key_of(std::string_view assignment) {
  return assignment.substr(0, assignment.find('='));
}

}  // namespace

// ---- stop-signal file ---------------------------------------------------------------------------

status write_stop_signal_file(const fs::path& path, std::chrono::system_clock::time_point now) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) {
    return status(error_code::io_error,
                  fmt::format("stop-signal file {}: cannot create its folder: {}", path.string(),
                              ec.message()));
  }
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << epoch_seconds(now);
    out.flush();
    if (!out) {
      return status(error_code::io_error,
                    fmt::format("stop-signal file {}: cannot write {}", path.string(), tmp.string()));
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return status(error_code::io_error,
                  fmt::format("stop-signal file {}: cannot rename {} into place", path.string(),
                              tmp.string()));
  }
  return status::success();
}

bool stop_signal_passed(const fs::path& path, std::chrono::system_clock::time_point now,
                        std::chrono::seconds grace) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return false;
  std::string text;  // a regular file of at most 4 KiB (a FIFO must not hang the watch)
  if (!io::read_text_file(path, text, 4096).ok()) return true;  // unreadable: finished (RULES §1)
  std::size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  int64_t signal_seconds = 0;
  const auto [stop, parse_error] =
      std::from_chars(text.data() + begin, text.data() + end, signal_seconds);
  if (begin == end || parse_error != std::errc() || stop != text.data() + end) return true;
  return epoch_seconds(now) > signal_seconds + grace.count();
}

// ---- environment ---------------------------------------------------------------------------------

std::vector<std::string> finding_environment(const fire_context& c) {
  const rules::finding& f = c.finding;
  std::string value;
  if (std::isnan(f.value)) {
    value = "nan";
  } else if (std::isinf(f.value)) {
    value = f.value > 0 ? "inf" : "-inf";
  } else {
    value = fmt::format("{}", f.value);
  }
  return {
      "TRIALSTAT_RULE=" + c.rule,
      "TRIALSTAT_RULE_CONFIGURATION=" + c.configuration_name,
      "TRIALSTAT_STATUS=IssuesFound",
      "TRIALSTAT_TRIAL=" + c.trial.string(),
      fmt::format("TRIALSTAT_STEP={}", f.step),
      fmt::format("TRIALSTAT_MODE={}", mode_name(f.mode)),
      fmt::format("TRIALSTAT_MODE_STEP={}", f.mode_step),
      "TRIALSTAT_TENSOR=" + f.tensor,
      "TRIALSTAT_WORKER=" + f.worker,
      "TRIALSTAT_VALUE=" + value,
      "TRIALSTAT_MESSAGE=" + f.message,
  };
}

// ---- commands ----------------------------------------------------------------------------------

struct command_runner::state {
  struct child {
    int pid;
    std::string rule;
    std::string command;
  };
  std::vector<child> running;

  /// waitpid one child without blocking (or blocking); fills `out` when it ended.
  static bool collect(const child& c, bool block, command_exit& out) {
    int wstatus = 0;
    pid_t got = 0;
    do {
      got = ::waitpid(c.pid, &wstatus, block ? 0 : WNOHANG);
    } while (got < 0 && errno == EINTR);
    if (got == 0) return false;
    out.rule = c.rule;
    out.command = c.command;
    out.pid = c.pid;
    if (got < 0) return true;  // not our child any more (reaped elsewhere): forget it
    if (WIFEXITED(wstatus)) out.exit_code = WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus)) out.signal = WTERMSIG(wstatus);
    return true;
  }

  std::vector<command_exit> reap(bool block) {
    std::vector<command_exit> done;
    for (std::size_t i = 0; i < running.size();) {
      command_exit exit;
      if (collect(running[i], block, exit)) {
        done.push_back(std::move(exit));
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    return done;
  }
};

command_runner::command_runner() : state_(std::make_unique<state>()) {}
command_runner::command_runner(command_runner&&) noexcept = default;
command_runner& command_runner::operator=(command_runner&&) noexcept = default;
command_runner::~command_runner() {
  if (state_ && !state_->running.empty()) (void)wait_all(std::chrono::seconds(10));
}

std::size_t command_runner::running_count() const noexcept { return state_->running.size(); }

result<int> command_runner::start(const std::vector<std::string>& argv,
                                  const std::string& shell_command,
                                  const std::vector<std::string>& extra_environment,
                                  std::string rule) {
  std::vector<std::string> args = argv;
  const bool use_shell = args.empty();
  if (use_shell) {
    if (shell_command.empty()) {
      return status(error_code::invalid_argument, "command action: nothing to run");
    }
    args = {"sh", "-c", shell_command};
  }
  const std::string text = use_shell ? shell_command : join_argv(argv);

  // Environment: ours, minus the variables the finding overrides, plus the finding's.
  std::vector<std::string> env_storage;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    bool overridden = false;
    for (const auto& extra : extra_environment) overridden = overridden || key_of(extra) == key_of(entry);
    if (!overridden) env_storage.emplace_back(entry);
  }
  env_storage.insert(env_storage.end(), extra_environment.begin(), extra_environment.end());
  std::vector<char*> envp;
  envp.reserve(env_storage.size() + 1);
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> argp;
  argp.reserve(args.size() + 1);
  for (auto& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);

  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&files, STDERR_FILENO, STDOUT_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setsigmask(&attributes, &empty);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  pid_t pid = 0;
  const int rc = use_shell ? ::posix_spawn(&pid, "/bin/sh", &files, &attributes, argp.data(), envp.data())
                           : ::posix_spawnp(&pid, argp[0], &files, &attributes, argp.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) {
    return status(error_code::io_error,
                  fmt::format("command action '{}': cannot start {}: {}", text,
                              use_shell ? std::string("/bin/sh") : args[0], std::strerror(rc)));
  }
  state_->running.push_back({static_cast<int>(pid), std::move(rule), text});
  return static_cast<int>(pid);
}

std::vector<command_exit> command_runner::reap() { return state_->reap(false); }

std::vector<command_exit> command_runner::wait_all(std::chrono::milliseconds timeout) {
  std::vector<command_exit> done;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto take = [&](std::vector<command_exit> more) {
    for (auto& m : more) done.push_back(std::move(m));
  };
  while (!state_->running.empty() && std::chrono::steady_clock::now() < deadline) {
    take(state_->reap(false));
    if (!state_->running.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (state_->running.empty()) return done;
  // Past the limit: SIGTERM, a second's grace, then SIGKILL.
  std::vector<int> killed;
  for (const auto& c : state_->running) {
    ::kill(c.pid, SIGTERM);
    killed.push_back(c.pid);
  }
  const auto grace_end = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (!state_->running.empty() && std::chrono::steady_clock::now() < grace_end) {
    take(state_->reap(false));
    if (!state_->running.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (const auto& c : state_->running) ::kill(c.pid, SIGKILL);
  take(state_->reap(true));
  for (auto& d : done) {
    d.killed_at_timeout = std::find(killed.begin(), killed.end(), d.pid) != killed.end();
  }
  return done;
}

// ---- one rule's actions ----------------------------------------------------------------------------

std::vector<action_report> fire(const rules::rule_actions& actions, const fire_context& context,
                                std::chrono::system_clock::time_point now,
                                command_runner& commands) {
  std::vector<action_report> reports;
  if (!actions.stop_signal_file.empty()) {
    fs::path path = actions.stop_signal_file;
    if (path.is_relative()) path = context.trial / path;
    action_report& r = reports.emplace_back();
    r.action = "stop_signal_file";
    r.outcome = write_stop_signal_file(path, now);
    r.description = r.outcome.ok() ? fmt::format("wrote {} to {}", epoch_seconds(now), path.string())
                                   : r.outcome.message();
  }
  if (!actions.command.empty() || !actions.shell_command.empty()) {
    action_report& r = reports.emplace_back();
    r.action = "command";
    const std::string text =
        actions.command.empty() ? fmt::format("/bin/sh -c {}", actions.shell_command)
                                : join_argv(actions.command);
    auto pid = commands.start(actions.command, actions.shell_command, finding_environment(context),
                              context.configuration_name);
    if (pid) {
      r.description = fmt::format("started pid {}: {}", *pid, text);
    } else {
      r.outcome = pid.error_status();
      r.description = r.outcome.message();
    }
  }
  if (actions.exit_status) {
    action_report& r = reports.emplace_back();
    r.action = "exit_status";
    r.exit_status = actions.exit_status;
    r.description = fmt::format("exit with status {}", *actions.exit_status);
  }
  return reports;
}

}  // namespace trialstat::actions
