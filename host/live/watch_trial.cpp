// SPDX-License-Identifier: Apache-2.0
// `trialstat watch`: the poll loop over a live trial (see watcher.hpp for the steps).
#include "trialstat/live/watch_trial.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "host/live/change_notifier.hpp"
#include "trialstat/io/trial_source.hpp"
#include "trialstat/actions/actions.hpp"

namespace trialstat::live {
namespace fs = std::filesystem;
using clock_type = std::chrono::system_clock;

std::string_view end_reason_name(end_reason r) noexcept {
  switch (r) {
    case end_reason::training_ended: return "training_ended";
    case end_reason::stop_signal: return "stop_signal";
    case end_reason::exit_action: return "exit_action";
    case end_reason::timeout: return "timeout";
    case end_reason::interrupted: return "interrupted";
  }
  return "unknown";
}

std::string_view event_kind_name(event_kind k) noexcept {
  switch (k) {
    case event_kind::started: return "started";
    case event_kind::waiting: return "waiting";
    case event_kind::progress: return "progress";
    case event_kind::status_change: return "status";
    case event_kind::finding: return "finding";
    case event_kind::action: return "action";
    case event_kind::command_exit: return "command_exit";
    case event_kind::warning: return "warning";
    case event_kind::result: return "result";
    case event_kind::end: return "end";
  }
  return "unknown";
}

step_completeness completeness_of(const trial::catalog& trial, int64_t global_step) {
  step_completeness out;
  out.step = global_step;
  out.num_workers = trial.num_workers();
  const trial::step_info* info = trial.find_step(global_step);
  if (info == nullptr) return out;
  out.workers_done = static_cast<int>(info->workers.size());
  for (const trial::worker_id w : trial.sorted_worker_ids()) {
    if (!std::binary_search(info->workers.begin(), info->workers.end(), w)) {
      out.missing.push_back(trial.workers()[w]);
    }
  }
  return out;
}

namespace {

std::string describe_finding(const rules::finding& f) {
  std::string where = fmt::format("step {} ({} {})", f.step, mode_name(f.mode), f.mode_step);
  if (!f.tensor.empty()) where += " " + f.tensor;
  if (!f.worker.empty()) where += " [" + f.worker + "]";
  return fmt::format("{}: {}", where, f.message);
}

std::string describe_completeness(const step_completeness& c) {
  std::string text = fmt::format("step {}: {} of {} workers", c.step, c.workers_done, c.num_workers);
  if (!c.missing.empty()) text += fmt::format(" (waiting for {})", fmt::join(c.missing, ", "));
  return text;
}

class watch_loop {
 public:
  watch_loop(fs::path root, std::shared_ptr<const io::trial_source> source,
             std::vector<watch_rule> rules, const watch_options& options,
             const event_callback& on_event)
      : root_(std::move(root)),
        source_(std::move(source)),
        options_(options),
        on_event_(on_event),
        remote_(source_->is_remote()),
        notifier_(root_, options.use_inotify && !remote_) {  // remote sources: polling only
    for (auto& r : rules) {
      invocations_.push_back(std::move(r.invocation));
      actions_.push_back(std::move(r.actions));
    }
    if (!options_.stop_signal_file.empty()) {
      // Relative: inside a local trial folder; for an S3 trial, the current folder.
      stop_signal_ = options_.stop_signal_file.is_relative() && !remote_ ? root_ / options_.stop_signal_file
                                                                         : options_.stop_signal_file;
    }
  }

  result<watch_outcome> run() {
    const auto started = std::chrono::steady_clock::now();
    for (;;) {
      if (options_.interrupted && options_.interrupted()) return end(end_reason::interrupted);
      if (options_.timeout && std::chrono::steady_clock::now() - started >= *options_.timeout) {
        return end(end_reason::timeout);
      }
      if (!catalog_) {
        TRIALSTAT_RETURN_IF_ERROR(open_catalog());
      } else {
        refresh();
      }
      if (catalog_) {
        const bool ended = catalog_->training_ended();
        const bool stopped =
            !ended && !stop_signal_.empty() &&
            actions::stop_signal_passed(stop_signal_, clock_type::now(), options_.stop_signal_grace);
        if (ended || stopped) {
          // Files renamed in before the marker but after this poll's listing: one more listing.
          refresh();
          auto done = session_->finish();
          if (!done) return done.error_status();
          count(done->counters);
          report_rules();
          return end(ended ? end_reason::training_ended : end_reason::stop_signal);
        }
        if (!options_.wait_for_collections || !catalog_->collections().empty()) {
          auto progress = session_->advance();
          if (!progress) return progress.error_status();
          count(progress->counters);
          report_unfinished(*progress);
        } else {
          waiting("waiting for a collections file (it carries num_workers)");
        }
        session_->poll(clock_type::now());
        report_rules();
        if (exit_status_) return end(end_reason::exit_action);
        report_commands(commands_.reap());
        report_progress();
      }
      notifier_.wait(options_.poll_interval);
    }
  }

 private:
  void emit(watch_event&& e) {
    e.time = clock_type::now();
    if (on_event_) on_event_(e);
  }

  void waiting(std::string message) {
    if (message == last_waiting_) return;
    last_waiting_ = message;
    watch_event e;
    e.kind = event_kind::waiting;
    e.message = std::move(message);
    emit(std::move(e));
  }

  void count(const pipeline::pipeline_counters& counters) {
    steps_evaluated_ += counters.steps;
    records_ += counters.records;
    bytes_read_ += counters.bytes_read;
  }

  status open_catalog() {
    std::error_code ec;
    if (!remote_ && !fs::is_directory(root_, ec)) {
      waiting(fmt::format("waiting for the trial folder {}", root_.string()));
      return status::success();
    }
    trial::catalog_options catalog_options;
    // While live, an event file without its index may still be being written: index files only.
    catalog_options.scan_missing_index = false;
    auto opened = trial::catalog::open(source_, catalog_options);
    if (!opened) {
      if (opened.error_status().code() == error_code::not_found) {
        if (remote_) waiting(fmt::format("waiting for the trial {}", root_.string()));
        return status::success();
      }
      return opened.error_status();
    }
    catalog_.emplace(std::move(*opened));
    session_.emplace(*catalog_, std::move(invocations_), options_.pipeline, /*live=*/true,
                     options_.written_steps, options_.on_step_records);
    report_warnings();
    watch_event e;
    e.kind = event_kind::started;
    e.message = fmt::format("watching {}: {} rule(s), polling every {} ms{}", root_.string(),
                            session_->results().size(), options_.poll_interval.count(),
                            notifier_.active() ? " (woken early by inotify)" : "");
    emit(std::move(e));
    return status::success();
  }

  void refresh() {
    auto refreshed = catalog_->refresh();
    if (!refreshed) {
      // Reported once per distinct problem (a folder that stays unlistable would repeat it).
      std::string text = refreshed.error_status().to_string();
      if (text != last_refresh_error_) warning(text);
      last_refresh_error_ = std::move(text);
    } else {
      last_refresh_error_.clear();
    }
    report_warnings();
  }

  void warning(std::string message) {
    watch_event e;
    e.kind = event_kind::warning;
    e.message = std::move(message);
    emit(std::move(e));
  }

  void report_warnings() {
    const auto all = catalog_->warnings();
    for (; warnings_seen_ < all.size(); ++warnings_seen_) {
      warning(fmt::format("{}: {}", all[warnings_seen_].file.string(),
                          all[warnings_seen_].problem.to_string()));
    }
  }

  void report_unfinished(const pipeline::session_progress& progress) {
    if (progress.counters.unfinished_step) {
      waiting(fmt::format("step {} is not fully written yet, retrying: {}",
                          *progress.counters.unfinished_step,
                          progress.counters.unfinished_reason.message()));
    } else if (progress.counters.steps > 0) {
      last_waiting_.clear();
    }
  }

  /// Status transitions and findings since the last call; the actions of rules that fired.
  void report_rules() {
    const auto skipped = session_->skipped();  // records no verdict saw: one warning each
    for (; skipped_seen_ < skipped.size(); ++skipped_seen_) {
      const pipeline::skipped_record& k = skipped[skipped_seen_];
      warning(fmt::format("{} at step {} [{}]{}: could not be read, rules did not see it: {}", k.tensor,
                          k.step, k.worker, k.saved_reduction ? " (saved reduction)" : "",
                          k.reason.to_string()));
    }
    const auto& results = session_->results();
    for (const auto& t : session_->take_transitions()) {
      const pipeline::rule_result& r = results[t.rule];
      watch_event e;
      e.kind = event_kind::status_change;
      e.rule = t.rule;
      e.rule_name = r.rule_name;
      e.configuration_name = r.configuration_name;
      e.message = fmt::format("{} -> {}", rules::rule_status_name(t.from), rules::rule_status_name(t.to));
      if (t.finding) {
        e.message += fmt::format(" at {}", describe_finding(*t.finding));
      } else if (!t.details.empty()) {
        e.message += ": " + t.details;
      }
      e.transition = t;
      emit(std::move(e));
      if (t.to == rules::rule_status::issues_found) fired_.push_back(t);
    }
    for (const auto& [rule, index] : session_->take_new_findings()) {
      const pipeline::rule_result& r = results[rule];
      watch_event e;
      e.kind = event_kind::finding;
      e.rule = rule;
      e.rule_name = r.rule_name;
      e.configuration_name = r.configuration_name;
      e.finding = r.findings[index];
      e.message = describe_finding(r.findings[index]);
      emit(std::move(e));
    }
    for (const auto& t : fired_) run_actions(t);
    fired_.clear();
  }

  void run_actions(const pipeline::rule_transition& t) {
    const rules::rule_actions& what = actions_[t.rule];
    if (what.empty() || !t.finding) return;
    const pipeline::rule_result& r = session_->results()[t.rule];
    actions::fire_context context{r.rule_name, r.configuration_name, root_, *t.finding};
    for (auto& report : actions::fire(what, context, clock_type::now(), commands_)) {
      if (report.exit_status && !exit_status_) exit_status_ = report.exit_status;
      watch_event e;
      e.kind = event_kind::action;
      e.rule = t.rule;
      e.rule_name = r.rule_name;
      e.configuration_name = r.configuration_name;
      e.message = fmt::format("{}: {}", report.action, report.description);
      e.action = std::move(report);
      emit(std::move(e));
    }
  }

  void report_commands(std::vector<actions::command_exit> exits) {
    for (auto& c : exits) {
      watch_event e;
      e.kind = event_kind::command_exit;
      e.configuration_name = c.rule;
      if (c.exit_code) {
        e.message = fmt::format("command '{}' (pid {}) exited with status {}", c.command, c.pid, *c.exit_code);
      } else if (c.signal) {
        e.message = fmt::format("command '{}' (pid {}) ended by signal {}{}", c.command, c.pid,
                                *c.signal, c.killed_at_timeout ? " (killed at the command timeout)" : "");
      } else {
        e.message = fmt::format("command '{}' (pid {}) ended", c.command, c.pid);
      }
      e.command = std::move(c);
      emit(std::move(e));
    }
  }

  /// The first saved step not evaluated yet, when it is not complete.
  std::optional<step_completeness> first_incomplete() const {
    const auto last = session_->last_step();
    for (const trial::step_info& info : catalog_->step_infos()) {
      if (last && info.step <= *last) continue;
      if (catalog_->is_complete(info.step)) return std::nullopt;
      return completeness_of(*catalog_, info.step);
    }
    return std::nullopt;
  }

  void report_progress() {
    const auto last = session_->last_step();
    auto incomplete = first_incomplete();
    const bool same_wait =
        incomplete.has_value() == last_incomplete_.has_value() &&
        (!incomplete || (incomplete->step == last_incomplete_->step &&
                         incomplete->workers_done == last_incomplete_->workers_done &&
                         incomplete->num_workers == last_incomplete_->num_workers));
    if (last == last_reported_step_ && same_wait) return;
    last_reported_step_ = last;
    last_incomplete_ = incomplete;
    watch_event e;
    e.kind = event_kind::progress;
    e.last_step = last;
    e.steps_evaluated = steps_evaluated_;
    e.message = last ? fmt::format("evaluated up to step {}", *last) : std::string("no step evaluated yet");
    if (incomplete) e.message += "; " + describe_completeness(*incomplete);
    e.waiting_on = std::move(incomplete);
    emit(std::move(e));
  }

  result<watch_outcome> end(end_reason reason) {
    report_commands(commands_.wait_all(options_.command_timeout));
    watch_outcome outcome;
    outcome.reason = reason;
    outcome.steps_evaluated = steps_evaluated_;
    outcome.records = records_;
    outcome.bytes_read = bytes_read_;
    if (session_) {
      outcome.results.assign(session_->results().begin(), session_->results().end());
      outcome.last_step = session_->last_step();
    } else {
      // The trial never appeared: every rule is still InProgress (or Error if it was not built).
      for (const auto& inv : invocations_) {
        pipeline::rule_result r;
        r.configuration_name = inv.configuration_name;
        r.rule_name = inv.rule ? std::string(inv.rule->name()) : inv.configuration_name;
        r.status = inv.rule ? rules::rule_status::in_progress : rules::rule_status::error;
        if (!inv.rule) r.status_details = inv.error.to_string();
        outcome.results.push_back(std::move(r));
      }
    }
    const auto any = [&](rules::rule_status s) {
      return std::any_of(outcome.results.begin(), outcome.results.end(),
                         [&](const auto& r) { return r.status == s; });
    };
    if (exit_status_) {  // a fired rule's exit_status action (also when it fired in the final pass)
      outcome.exit_status = *exit_status_;
    } else if (any(rules::rule_status::error)) {
      outcome.exit_status = 2;
    } else if (any(rules::rule_status::issues_found)) {
      outcome.exit_status = 1;
    } else if (any(rules::rule_status::in_progress)) {
      outcome.exit_status = 3;
    } else {
      outcome.exit_status = 0;
    }
    for (std::size_t i = 0; i < outcome.results.size(); ++i) {
      watch_event e;
      e.kind = event_kind::result;
      e.rule = i;
      e.rule_name = outcome.results[i].rule_name;
      e.configuration_name = outcome.results[i].configuration_name;
      e.result = outcome.results[i];
      e.message = std::string(rules::rule_status_name(outcome.results[i].status));
      emit(std::move(e));
    }
    watch_event e;
    e.kind = event_kind::end;
    e.reason = reason;
    e.exit_status = outcome.exit_status;
    e.last_step = outcome.last_step;
    e.steps_evaluated = steps_evaluated_;
    switch (reason) {
      case end_reason::training_ended: e.message = "training_job_end.ts: final pass done"; break;
      case end_reason::stop_signal:
        e.message = fmt::format("stop signal {} passed: final pass done", stop_signal_.string());
        break;
      case end_reason::exit_action: e.message = "a rule's exit_status action"; break;
      case end_reason::timeout: e.message = "timed out before the trial ended"; break;
      case end_reason::interrupted: e.message = "interrupted"; break;
    }
    e.message += fmt::format("; exit status {}", outcome.exit_status);
    emit(std::move(e));
    return outcome;
  }

  fs::path root_;
  std::shared_ptr<const io::trial_source> source_;
  const watch_options& options_;
  const event_callback& on_event_;
  bool remote_ = false;
  detail::change_notifier notifier_;
  fs::path stop_signal_;
  std::vector<pipeline::rule_invocation> invocations_;
  std::vector<rules::rule_actions> actions_;
  std::optional<trial::catalog> catalog_;
  std::optional<pipeline::rule_session> session_;
  actions::command_runner commands_;
  std::vector<pipeline::rule_transition> fired_;
  std::optional<int> exit_status_;
  std::size_t warnings_seen_ = 0;
  std::size_t skipped_seen_ = 0;
  int64_t steps_evaluated_ = 0;
  int64_t records_ = 0;
  int64_t bytes_read_ = 0;
  std::string last_waiting_;
  std::string last_refresh_error_;
  std::optional<int64_t> last_reported_step_;
  std::optional<step_completeness> last_incomplete_;
};

}  // namespace

result<watch_outcome> watch_trial(const fs::path& root, std::vector<watch_rule> rules,
                                  const watch_options& options, const event_callback& on_event) {
  // The source decides local against remote (inotify or polling); it does not touch the storage.
  auto source = io::open_trial_source(root.string(), options.source);
  if (!source) return source.error_status();
  watch_loop loop(root, std::move(*source), std::move(rules), options, on_event);
  return loop.run();
}

}  // namespace trialstat::live
