// SPDX-License-Identifier: Apache-2.0
/// @file rule_session.hpp
/// @brief Evaluate several rules over one trial with a single pass over its event files: the
/// rules' needs are merged into one read plan, and every rule sees every step's records.
/// `rule_session` does it incrementally (live trials: prepare once, `advance` after each catalog
/// refresh, `finish` at the end) and reports each rule's status transitions; `evaluate_rules` is
/// the one-shot form (`trialstat rules`). Status mapping: spec/RULES.md §1 [prop].
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/rules/rule.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::pipeline {

/// @brief One rule to evaluate, with the name its configuration gave it.
struct rule_invocation {
  std::string configuration_name;       ///< SageMaker `RuleConfigurationName` (or the rule name)
  std::unique_ptr<rules::rule> rule;    ///< null when the rule could not be built (see `error`)
  status error;                         ///< why it could not be built (status Error)
};

/// @brief A record whose bytes could not be read or decoded (cut short, corrupt, its event file
/// missing or unreadable), so no verdict saw it. Records that are simply not saved (shape or
/// reductions only) or not numeric (strings) are not skipped records.
struct skipped_record {
  std::string tensor;
  std::string worker;
  int64_t step = 0;             ///< global step
  std::string file;             ///< the event file, trial-relative
  uint64_t offset_bytes = 0;    ///< the record's byte offset in `file`
  bool saved_reduction = false; ///< a saved-reduction record (else the raw tensor)
  status reason;                ///< the code and a message naming file and offset
};

/// @brief Whether a record status means "could not be read" (see `skipped_record`).
[[nodiscard]] bool is_unreadable(const status& s) noexcept;

/// @brief Outcome of one rule over the trial (so far, for a session that has not finished).
struct rule_result {
  std::string configuration_name;
  std::string rule_name;
  rules::rule_status status = rules::rule_status::no_issues_found;
  std::string status_details;           ///< the error message for Error
  /// Problems the rule noted but accepted: its preparation's (rules::take_prepare_warnings),
  /// each once, and its evaluation's (rules::rule::take_warnings), in the order given.
  std::vector<std::string> warnings;
  std::vector<rules::finding> findings;
  /// The records of this rule's tensors that could not be read: its verdict did not see them.
  std::vector<skipped_record> skipped;
};

/// @brief A change of one rule's status: InProgress → IssuesFound / NoIssuesFound / Error
/// (a session starts every rule InProgress; a rule that cannot be built or prepared goes to Error
/// at once; IssuesFound is final — the rule keeps collecting findings —; NoIssuesFound only at
/// `finish`). Source: spec/RULES.md §1 "Rule status" [prop].
struct rule_transition {
  std::size_t rule = 0;                 ///< index into `rule_session::results()`
  rules::rule_status from = rules::rule_status::in_progress;
  rules::rule_status to = rules::rule_status::in_progress;
  /// IssuesFound: the global step of the finding that fired; otherwise the last global step
  /// evaluated when the change happened (nullopt before the first).
  std::optional<int64_t> step;
  std::optional<rules::finding> finding;  ///< IssuesFound: the first finding
  std::string details;                    ///< Error: why (the status text)
};

/// @brief What one `rule_session::advance` / `finish` did.
struct session_progress {
  pipeline_counters counters;           ///< of this call (steps, records, bytes, unfinished step)
  std::optional<int64_t> last_step;     ///< the last global step evaluated so far (all calls)
  bool replanned = false;               ///< the rules were prepared again (the catalog changed)
};

/// @brief Told each step's records after the rules evaluated them (the statistics store's live
/// writer, issue 26): the catalog and plan they were computed from, and the step. Valid only
/// during the call, as the records are.
using step_observer =
    std::function<void(const trial::catalog&, const plan::read_plan&, const stats::step_statistics&)>;

/// @brief Rules evaluated incrementally over one trial, sharing one statistics stream (one read
/// of each event file for all rules).
///
/// Construction builds nothing new: it prepares every rule against the catalog as it is (a rule
/// that could not be built or whose `prepare` fails is Error at once), merges the plans, tells
/// each rule the merged plan (`plan_ready`) and opens a `statistics_stream`.
///
/// Live use (`live = true`): after each `catalog::refresh()` call `advance()`: when the catalog
/// changed since the last preparation (new tensors, collections, steps, modes, workers, the end
/// marker), every rule is prepared again — rules keep their history, prepare only re-resolves
/// the tensor selection and requests — and the stream gets the new merged plan; then the steps
/// that became complete are evaluated in order. A step whose records are not fully written yet
/// (`pipeline_options::stop_at_unfinished_records`, turned on for live sessions) is left for a
/// later call. `poll(now)` gives time-based rules their `on_poll` call. `finish()` runs the final
/// pass (every remaining step, complete or not, unfinished records failing individually), calls
/// each rule's `finish` and concludes: IssuesFound when a rule has findings, else NoIssuesFound.
///
/// Other trials (SimilarAcrossRuns, `rules::rule::other_trial_location`): the session opens the
/// rule's other trial (a catalog it owns; Error for the rule when it cannot be opened, with the
/// message "<rule>: cannot open other_trials '<location>': ..."), calls the rule's
/// `prepare_other_trial` before each `prepare`, and before each `evaluate_step` reads that global
/// step of the other trial through a statistics stream of its own (the rule's plan for it, the
/// session's options, records cut short failing individually) and hands its records to
/// `evaluate_other_step`. A failed read of the other trial ends that rule with Error.
///
/// Not thread-safe; the catalog must outlive the session and must not be refreshed during a
/// call. Memory: the stream's (two steps' event files + pairwise history) plus the findings,
/// plus one more stream per other trial.
class rule_session {
 public:
  /// @param trial    the catalog (refreshed by the caller between calls when `live`)
  /// @param rules    the rules (owned by the session; `release_rules` gives them back)
  /// @param options  statistics options; `stop_at_unfinished_records` is forced to `live`
  /// @param live     the trial may still be growing (see the class comment)
  /// @param source   not live: where the steps come from instead of the session's stream. Live:
  ///   where the steps already written at the first evaluation come from (complete, their
  ///   records wholly in their files; every step at a first `finish`) — e.g. a statistics store
  ///   that serves the steps a previous watch stored — after which the stream resumes
  ///   (`statistics_stream::resume_after`: it reads the pairwise history the next steps need);
  ///   the observer is not told these steps (the source writes its own rows)
  /// @param observer told each step after the rules (null: nobody)
  rule_session(const trial::catalog& trial, std::vector<rule_invocation> rules,
               const pipeline_options& options, bool live = false, statistics_source source = {},
               step_observer observer = {});
  ~rule_session();
  rule_session(rule_session&&) noexcept;
  rule_session& operator=(rule_session&&) noexcept;

  /// @brief Evaluate the complete steps not evaluated yet (see the class comment). No-op after
  /// `finish`. @return progress; errors: failures of the whole run (an unusable backend, a
  /// kernel error) — the session should then not be advanced again.
  [[nodiscard]] result<session_progress> advance();

  /// @brief Call every InProgress or IssuesFound rule's `rule::on_poll(trial, now)`
  /// (time-based rules). No-op after `finish`.
  void poll(std::chrono::system_clock::time_point now);

  /// @brief Final pass: every saved step not evaluated yet, complete or not; then each rule's
  /// `finish`; then the final statuses. Idempotent. Errors: as `advance`.
  [[nodiscard]] result<session_progress> finish();

  [[nodiscard]] bool finished() const noexcept;
  /// @brief Per rule, in the order given: name, status (InProgress until concluded), findings.
  [[nodiscard]] std::span<const rule_result> results() const noexcept;
  /// @brief Status changes since the last call, in the order they happened.
  [[nodiscard]] std::vector<rule_transition> take_transitions();
  /// @brief Findings added since the last call, as (rule index, index into its findings).
  [[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> take_new_findings();
  /// @brief The last global step evaluated, or nullopt before the first.
  [[nodiscard]] std::optional<int64_t> last_step() const noexcept;
  /// @brief Every record of the run that could not be read (each once, in step order), whichever
  /// rule asked for it.
  [[nodiscard]] std::span<const skipped_record> skipped() const noexcept;
  /// @brief Whether any rule is still InProgress (evaluating).
  [[nodiscard]] bool any_in_progress() const noexcept;
  /// @brief The rules back (after which the session must not be used).
  [[nodiscard]] std::vector<rule_invocation> release_rules();

 private:
  struct state;
  std::unique_ptr<state> state_;
};

/// @brief Evaluate every rule: prepare (a failing prepare → Error for that rule only), merge the
/// plans, run the statistics pipeline once, feed each step to every prepared rule, finish.
/// Status: IssuesFound when a rule produced findings, else NoIssuesFound; Error when it could
/// not be built or prepared. Errors returned: only failures of the whole run.
/// (A one-shot `rule_session`: constructed, then `finish()`.)
/// With a `source`, the steps come from it instead of the session's own stream.
[[nodiscard]] result<std::vector<rule_result>> evaluate_rules(const trial::catalog& trial,
                                                              std::vector<rule_invocation>& rules,
                                                              const pipeline_options& options,
                                                              const statistics_source& source = {});

}  // namespace trialstat::pipeline
