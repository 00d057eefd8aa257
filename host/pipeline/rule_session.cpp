// SPDX-License-Identifier: Apache-2.0
// Several rules, one pass: merge every rule's needs into one read plan, run one statistics
// stream, and feed each step to every rule that prepared successfully. Incremental for live
// trials (rule_session); evaluate_rules is the one-shot form.
#include "trialstat/pipeline/rule_session.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "trialstat/io/source_options.hpp"

namespace trialstat::pipeline {
namespace {

/// What a rule's preparation depends on: when any of it changes, the rules are prepared again.
/// Every field only grows while a trial is written, so equality means "nothing new".
struct catalog_signature {
  std::size_t tensors = 0, collections = 0, steps = 0, entries = 0, modes = 0, workers = 0;
  int num_workers = 0;
  bool ended = false;

  static catalog_signature of(const trial::catalog& t) {
    return {t.tensor_names().size(), t.collections().size(), t.step_infos().size(),
            t.entries().size(),      t.modes().size(),       t.workers().size(),
            t.num_workers(),         t.training_ended()};
  }
  bool operator==(const catalog_signature&) const = default;
};

}  // namespace

bool is_unreadable(const status& s) noexcept {
  switch (s.code()) {
    case error_code::ok:
    case error_code::not_found:          // not saved (shape or reductions only)
    case error_code::unsupported_dtype:  // saved, but not numeric (strings)
      return false;
    default:
      return true;
  }
}

/// The other trial a rule compares with (rules::rule::other_trial_location): the session reads
/// it for the rule, through its own catalog, read plan and statistics stream.
struct other_trial {
  std::size_t rule = 0;                     // index of the rule that asked for it
  trial::catalog catalog;                   // outlives the rule's use of it (the session's)
  plan::read_plan plan;                     // what the rule asked for (prepare_other_trial)
  std::optional<statistics_stream> stream;  // made at the first step delivered
  status failure;                           // a failed read of the whole other trial
};

struct rule_session::state {
  const trial::catalog& trial;
  std::vector<rule_invocation> invocations;
  std::vector<rule_result> results;
  std::vector<std::size_t> active;          // indices of rules that prepared successfully
  std::vector<std::size_t> reported;        // per rule: findings already handed out
  std::vector<rule_transition> transitions;
  std::vector<std::vector<trial::tensor_id>> watched;  // per rule: its requested tensors, sorted
  std::vector<skipped_record> skipped;       // every unreadable record of the run
  std::vector<std::unique_ptr<other_trial>> others;  // stable addresses: rules keep the catalogs
  std::optional<statistics_stream> stream;
  statistics_source source;                 // replaces stream->advance when set (not live)
  statistics_source catch_up;               // live: the steps written before the first run
  bool catching_up = false;                 // steps come from catch_up now
  step_observer observer;                   // told each step after the rules
  std::optional<int64_t> source_last_step;
  pipeline_options options;
  bool live = false;
  bool finished = false;
  catalog_signature prepared_for;

  state(const trial::catalog& t, std::vector<rule_invocation> rules, const pipeline_options& o,
        bool is_live)
      : trial(t), invocations(std::move(rules)), options(o), live(is_live) {
    options.stop_at_unfinished_records = live;
  }

  void transition(std::size_t i, rules::rule_status to, std::string details = {}) {
    rule_result& r = results[i];
    rule_transition t;
    t.rule = i;
    t.from = r.status;
    t.to = to;
    t.details = std::move(details);
    if (to == rules::rule_status::issues_found && !r.findings.empty()) {
      t.step = r.findings.front().step;
      t.finding = r.findings.front();
    } else if (stream) {
      t.step = source || catching_up ? source_last_step : stream->last_step();
    }
    r.status = to;
    if (to == rules::rule_status::error) r.status_details = t.details;
    transitions.push_back(std::move(t));
  }

  /// A rule that fails here leaves the session (Error).
  void drop(std::size_t i, const status& why) {
    active.erase(std::remove(active.begin(), active.end(), i), active.end());
    transition(i, rules::rule_status::error, why.to_string());
  }

  /// Prepare every active rule against the catalog as it is now and merge their plans.
  plan::read_plan prepare_all() {
    plan::read_plan merged;
    for (const std::size_t i : std::vector<std::size_t>(active)) {
      // Prepare into a private plan first, so a rule that fails halfway adds nothing.
      plan::read_plan own;
      (void)rules::take_prepare_warnings();
      status prepared = prepare_other_trial(i);
      if (prepared.ok()) prepared = invocations[i].rule->prepare(trial, own);
      for (std::string& w : rules::take_prepare_warnings()) {
        auto& mine = results[i].warnings;
        if (std::find(mine.begin(), mine.end(), w) == mine.end()) mine.push_back(std::move(w));
      }
      if (!prepared.ok()) {
        drop(i, prepared);
        continue;
      }
      std::vector<trial::tensor_id>& mine = watched[i];
      mine.clear();
      for (const auto& [tensor, request] : own.requests()) {
        merged.request(tensor, request);
        mine.push_back(tensor);
      }
      std::sort(mine.begin(), mine.end());
    }
    for (const std::size_t i : active) invocations[i].rule->plan_ready(merged);
    prepared_for = catalog_signature::of(trial);
    return merged;
  }

  other_trial* other_of(std::size_t i) const {
    for (const auto& o : others) {
      if (o->rule == i) return o.get();
    }
    return nullptr;
  }

  /// The other trial of rule `i`, if it names one: opened the first time (S3 settings from the
  /// environment), refreshed later (a live other trial catches up; a failed refresh keeps what
  /// was loaded); then the rule's `prepare_other_trial` fills its plan.
  status prepare_other_trial(std::size_t i) {
    rules::rule& rule = *invocations[i].rule;
    other_trial* other = other_of(i);
    if (other == nullptr) {
      const std::string location = rule.other_trial_location();
      if (location.empty()) return status::success();
      trial::catalog_options catalog_options;
      if (auto s3 = io::s3_options_from_environment()) catalog_options.source.s3 = *s3;
      auto opened = trial::catalog::open(location, catalog_options);
      if (!opened) {
        const status& why = opened.error_status();
        return status(why.code(), fmt::format("{}: cannot open other_trials '{}': {}", rule.name(),
                                              location, why.message()));
      }
      others.push_back(
          std::make_unique<other_trial>(other_trial{i, std::move(*opened), {}, {}, {}}));
      other = others.back().get();
    } else {
      static_cast<void>(other->catalog.refresh());
    }
    plan::read_plan wanted;
    TRIALSTAT_RETURN_IF_ERROR(rule.prepare_other_trial(trial, other->catalog, wanted));
    other->plan = std::move(wanted);
    return status::success();
  }

  /// Hand rule `i` the other trial's records at `step` (if it saved that step): one statistics
  /// stream step over the other trial, its plan restricted to [step, step + 1). Records cut
  /// short fail individually (the rule skips them), also for a live trial.
  void deliver_other_step(std::size_t i, int64_t step) {
    other_trial* other = other_of(i);
    if (other == nullptr || !other->failure.ok()) return;
    if (!other->stream) {
      pipeline_options other_options = options;
      other_options.stop_at_unfinished_records = false;
      other_options.progress = nullptr;
      // One step per advance, wanted at once: a sampled check would check (and so recompute on
      // the CPU) every step, and there is nothing to hold back. The first step is checked.
      if (other_options.verify_device == device_verification::sampled) {
        other_options.verify_device = device_verification::first;
      }
      other->stream.emplace(other->catalog, other->plan, other_options);
    }
    plan::read_plan at_step = other->plan;
    at_step.step_begin = step;
    at_step.step_end = step + 1;
    other->stream->set_plan(std::move(at_step));
    auto read = other->stream->advance(
        [&](const stats::step_statistics& other_step) {
          invocations[i].rule->evaluate_other_step(other->catalog, other_step);
        },
        /*include_incomplete=*/true);
    if (!read) other->failure = read.error_status();
  }

  /// Each active rule's new warnings into its result; a rule that cannot give a verdict on
  /// the data (`evaluation_status`) leaves the session (Error).
  void collect_problems() {
    for (const std::size_t i : std::vector<std::size_t>(active)) {
      for (auto& w : invocations[i].rule->take_warnings()) results[i].warnings.push_back(std::move(w));
      status problem = invocations[i].rule->evaluation_status();
      if (const other_trial* other = other_of(i); problem.ok() && other != nullptr) {
        problem = other->failure;
      }
      if (!problem.ok()) drop(i, problem);
    }
  }

  /// Note the unreadable records of a step: for the run, and for each rule that asked for them.
  void note_skipped(const stats::step_statistics& step) {
    for (const stats::statistics_record& r : step.records) {
      const bool raw_lost = is_unreadable(r.raw_status);
      if (!raw_lost && r.reduction_problems.empty()) continue;
      const trial::tensor_entry* entry = trial.find_entry(r.tensor, r.step, r.worker);
      const auto add = [&](const trial::record_location* where, bool reduction, const status& why) {
        skipped_record k;
        k.tensor = trial.tensor_names()[r.tensor];
        k.worker = trial.workers()[r.worker];
        k.step = r.step;
        if (where != nullptr) {
          k.file = trial.event_file_key(where->event_file);
          k.offset_bytes = where->start_bytes;
        }
        k.saved_reduction = reduction;
        k.reason = why;
        for (const std::size_t i : active) {
          if (std::binary_search(watched[i].begin(), watched[i].end(), r.tensor)) {
            results[i].skipped.push_back(k);
          }
        }
        skipped.push_back(std::move(k));
      };
      if (raw_lost) add(entry != nullptr && entry->raw ? &*entry->raw : nullptr, false, r.raw_status);
      for (const auto& problem : r.reduction_problems) add(&problem.location, true, problem.reason);
    }
    if (!options.strict) return;
    for (const std::size_t i : std::vector<std::size_t>(active)) {
      if (results[i].skipped.empty()) continue;
      const skipped_record& first = results[i].skipped.front();
      drop(i, status(first.reason.code(),
                     fmt::format("strict: {} record(s) of this rule's tensors could not be read; "
                                 "first: {}",
                                 results[i].skipped.size(), first.reason.message())));
    }
  }

  /// Rules with their first findings go InProgress → IssuesFound.
  void note_findings() {
    for (const std::size_t i : active) {
      if (results[i].status == rules::rule_status::in_progress && !results[i].findings.empty()) {
        transition(i, rules::rule_status::issues_found);
      }
    }
  }

  /// Live, before the stream's first step: the steps already written (in range, complete, their
  /// records wholly in their files; with `include_incomplete` every step) come from `catch_up`
  /// (the statistics store: what it holds is served, the rest read), evaluated as the stream
  /// would deliver them; the stream then resumes after them, reading the pairwise history it
  /// needs. Rows of what `catch_up` reads are its own to write: the observer is not told.
  result<pipeline_counters> run_catch_up(bool include_incomplete,
                                         const std::function<void(const stats::step_statistics&)>& evaluate) {
    std::optional<int64_t> upto;
    for (const trial::step_info& info : trial.step_infos()) {
      if (!step_in_range(info.step, stream->plan(), options)) continue;
      if (!include_incomplete &&
          (!trial.is_complete(info.step) || !step_records_written(trial, stream->plan(), options, info).ok())) {
        break;
      }
      upto = info.step;
    }
    if (!upto) return pipeline_counters{};  // nothing written yet: the next run tries again
    const statistics_source source_of_written = std::move(catch_up);
    catch_up = {};
    pipeline_options written = options;
    written.stop_at_unfinished_records = false;
    if (*upto < INT64_MAX) written.step_end = std::min(written.step_end.value_or(INT64_MAX), *upto + 1);
    catching_up = true;
    source_last_step = stream->last_step();
    auto counters = source_of_written(trial, stream->plan(), written, [&](const stats::step_statistics& step) {
      evaluate(step);
      source_last_step = step.step;
    });
    catching_up = false;
    if (!counters) return counters;
    stream->resume_after(*upto);
    return counters;
  }

  result<session_progress> run(bool include_incomplete) {
    session_progress progress;
    if (active.empty()) return progress;
    if (live && !(catalog_signature::of(trial) == prepared_for)) {
      stream->set_plan(prepare_all());
      progress.replanned = true;
      if (active.empty()) return progress;
    }
    const auto evaluate = [&](const stats::step_statistics& step) {
      note_skipped(step);
      for (const std::size_t i : active) {
        deliver_other_step(i, step.step);
        invocations[i].rule->evaluate_step(trial, step, results[i].findings);
      }
    };
    const step_callback on_step = [&](const stats::step_statistics& step) {
      evaluate(step);
      if (observer) observer(trial, stream->plan(), step);
      source_last_step = step.step;
    };
    pipeline_counters caught;
    if (catch_up && !stream->last_step()) {
      auto counters = run_catch_up(include_incomplete, evaluate);
      if (!counters) return counters.error_status();
      caught = std::move(*counters);
    }
    auto counters = source ? source(trial, stream->plan(), options, on_step)
                           : stream->advance(on_step, include_incomplete);
    if (!counters) return counters.error_status();
    progress.counters = std::move(caught);
    progress.counters += *counters;
    progress.last_step = source ? source_last_step : stream->last_step();
    collect_problems();
    note_findings();
    return progress;
  }
};

rule_session::rule_session(const trial::catalog& trial, std::vector<rule_invocation> rules,
                           const pipeline_options& options, bool live, statistics_source source,
                           step_observer observer)
    : state_(std::make_unique<state>(trial, std::move(rules), options, live)) {
  state& s = *state_;
  if (live) {
    s.catch_up = std::move(source);
  } else {
    s.source = std::move(source);
  }
  s.observer = std::move(observer);
  s.results.resize(s.invocations.size());
  s.watched.resize(s.invocations.size());
  s.reported.assign(s.invocations.size(), 0);
  for (std::size_t i = 0; i < s.invocations.size(); ++i) {
    rule_invocation& invocation = s.invocations[i];
    rule_result& out = s.results[i];
    out.configuration_name = invocation.configuration_name;
    out.status = rules::rule_status::in_progress;
    if (!invocation.rule) {
      out.rule_name = invocation.configuration_name;
      s.transition(i, rules::rule_status::error,
                   invocation.error.ok() ? std::string("the rule could not be built")
                                         : invocation.error.to_string());
      continue;
    }
    out.rule_name = std::string(invocation.rule->name());
    if (out.configuration_name.empty()) out.configuration_name = out.rule_name;
    s.active.push_back(i);
  }
  plan::read_plan merged = s.prepare_all();
  s.stream.emplace(trial, std::move(merged), s.options);
}

rule_session::~rule_session() = default;
rule_session::rule_session(rule_session&&) noexcept = default;
rule_session& rule_session::operator=(rule_session&&) noexcept = default;

result<session_progress> rule_session::advance() {
  state& s = *state_;
  if (s.finished) return session_progress{{}, s.stream->last_step(), false};
  return s.run(/*include_incomplete=*/false);
}

void rule_session::poll(std::chrono::system_clock::time_point now) {
  state& s = *state_;
  if (s.finished) return;
  for (const std::size_t i : s.active) s.invocations[i].rule->on_poll(s.trial, now, s.results[i].findings);
  s.note_findings();
}

result<session_progress> rule_session::finish() {
  state& s = *state_;
  if (s.finished) return session_progress{{}, s.stream->last_step(), false};
  s.stream->set_stop_at_unfinished_records(false);
  auto progress = s.run(/*include_incomplete=*/true);
  if (!progress) return progress;
  for (const std::size_t i : s.active) s.invocations[i].rule->finish(s.trial, s.results[i].findings);
  s.collect_problems();
  s.note_findings();
  for (const std::size_t i : s.active) {
    if (s.results[i].status == rules::rule_status::in_progress) {
      s.transition(i, rules::rule_status::no_issues_found);
    }
  }
  s.finished = true;
  return progress;
}

bool rule_session::finished() const noexcept { return state_->finished; }
std::span<const rule_result> rule_session::results() const noexcept { return state_->results; }

std::vector<rule_transition> rule_session::take_transitions() {
  std::vector<rule_transition> out;
  out.swap(state_->transitions);
  return out;
}

std::vector<std::pair<std::size_t, std::size_t>> rule_session::take_new_findings() {
  state& s = *state_;
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < s.results.size(); ++i) {
    for (std::size_t f = s.reported[i]; f < s.results[i].findings.size(); ++f) out.emplace_back(i, f);
    s.reported[i] = s.results[i].findings.size();
  }
  return out;
}

std::optional<int64_t> rule_session::last_step() const noexcept {
  return state_->stream ? state_->stream->last_step() : std::nullopt;
}

std::span<const skipped_record> rule_session::skipped() const noexcept { return state_->skipped; }

bool rule_session::any_in_progress() const noexcept {
  return std::any_of(state_->results.begin(), state_->results.end(), [](const rule_result& r) {
    return r.status == rules::rule_status::in_progress;
  });
}

std::vector<rule_invocation> rule_session::release_rules() {
  std::vector<rule_invocation> out;
  out.swap(state_->invocations);
  return out;
}

result<std::vector<rule_result>> evaluate_rules(const trial::catalog& trial,
                                                std::vector<rule_invocation>& invocations,
                                                const pipeline_options& options,
                                                const statistics_source& source) {
  rule_session session(trial, std::move(invocations), options, /*live=*/false, source);
  auto finished = session.finish();
  std::vector<rule_result> results(session.results().begin(), session.results().end());
  invocations = session.release_rules();
  if (!finished) return finished.error_status();
  return results;
}

}  // namespace trialstat::pipeline
