// SPDX-License-Identifier: Apache-2.0
/// @file rule.hpp
/// @brief The rule interface: a rule declares what statistics it needs (into the read plan),
/// then sees every saved global step's statistics records in step order and reports findings.
/// Sources: spec/RULES.md §1 (framework, statuses), §2 (conventions), §3 (built-in rules).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/mode.hpp"
#include "trialstat/plan/read_plan.hpp"
#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/status.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::rules {

/// @brief SageMaker rule status (spec/RULES.md §1).
enum class rule_status : uint8_t { in_progress, no_issues_found, issues_found, error };
/// @brief "InProgress", "NoIssuesFound", "IssuesFound", "Error".
[[nodiscard]] std::string_view rule_status_name(rule_status s) noexcept;

/// @brief One condition met: which rule, where, and the value that crossed the threshold.
struct finding {
  std::string rule;        ///< rule name, e.g. "ExplodingTensor"
  int64_t step = 0;        ///< global step
  trialstat::mode mode = trialstat::mode::global;
  int64_t mode_step = 0;
  std::string tensor;      ///< tensor name ("" when the finding concerns no single tensor)
  std::string worker;      ///< worker name ("" when it concerns all workers)
  double value = 0.0;      ///< the statistic compared with the threshold
  std::string message;     ///< human-readable: statistic, value, threshold
};

/// @brief `RuleParameters` of a SageMaker rule config: every value is a string (RULES §1).
using rule_parameters = std::map<std::string, std::string>;

/// @brief A rule evaluated over statistics records.
class rule {
 public:
  virtual ~rule() = default;

  /// @brief smdebug's class name, e.g. "VanishingGradient".
  [[nodiscard]] virtual std::string_view name() const = 0;

  /// @brief Resolve tensor selection against the catalog and add this rule's needs to `plan`.
  /// @return ok; or invalid_argument when the configuration cannot work on this trial (e.g.
  ///   neither collection_names nor tensor_regex where one is required, a bad regex) — the
  ///   rule's status is then Error with this message.
  [[nodiscard]] virtual status prepare(const trial::catalog& trial, plan::read_plan& plan) = 0;

  /// @brief Another trial this rule compares with (additive hook, SimilarAcrossRuns): its
  /// location — a folder or s3://bucket/prefix —, or "" (the default) for none. Rules never open
  /// trials or event files themselves: a rule session (pipeline/rule_session.hpp) opens this one
  /// once (S3 settings from the environment), calls `prepare_other_trial` before each `prepare`,
  /// reads the other trial through its own read plan and statistics stream, and hands its records
  /// of each global step to `evaluate_other_step` just before the `evaluate_step` of that step.
  /// A trial that cannot be opened ends the rule with status Error.
  [[nodiscard]] virtual std::string other_trial_location() const { return {}; }

  /// @brief Add to `other_plan` what this rule needs from the other trial `other` (requests by
  /// the other trial's tensor ids; the step range and workers are the session's), resolving
  /// the tensors shared with `trial`. Called before each `prepare` (again when a live base trial
  /// changed; the session refreshes `other` first). `other` outlives the rule's later calls.
  /// @return ok; or invalid_argument as `prepare` (the rule's status is then Error).
  [[nodiscard]] virtual status prepare_other_trial(const trial::catalog& /*trial*/,
                                                   const trial::catalog& /*other*/,
                                                   plan::read_plan& /*other_plan*/) {
    return status::success();
  }

  /// @brief The other trial's records at the global step of the next `evaluate_step` (every
  /// worker; only tensors `prepare_other_trial` requested; kept values valid during this call
  /// only, so copy what is needed). Not called when the other trial did not save that step.
  /// Must not throw.
  virtual void evaluate_other_step(const trial::catalog& /*other*/,
                                   const stats::step_statistics& /*step*/) {}

  /// @brief Called once with the merged plan of every rule, after all `prepare` calls and
  /// before the first `evaluate_step` (additive hook). Records list allclose violations and
  /// axis-0 counts parallel to the *merged* request's lists, which can hold other rules' entries
  /// too; a rule that reads them finds the index of its own entry here. A rule that is not told
  /// the merged plan falls back to what the records alone determine (see each rule).
  virtual void plan_ready(const plan::read_plan& /*merged*/) {}

  /// @brief Evaluate one saved global step. Called in increasing step order with the records of
  /// that step (all workers, only tensors somebody requested). Append findings for conditions
  /// met at this step. Must not throw.
  virtual void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                             std::vector<finding>& findings) = 0;

  /// @brief Ok, or why the rule cannot give a verdict on the data it was given (issue 16: e.g.
  /// labels and predictions whose shapes do not pair). Asked by the runner after each batch of
  /// steps; a failed status ends the rule with status Error and this message (a rule keeps
  /// returning it and ignores later steps). Default: ok.
  [[nodiscard]] virtual status evaluation_status() const { return status::success(); }

  /// @brief Warnings about how the rule read ambiguous data (e.g. "took the argmax over the
  /// last axis"), each given once; the runner moves them into the rule's result after each batch
  /// of steps. Default: none.
  [[nodiscard]] virtual std::vector<std::string> take_warnings() { return {}; }

  /// @brief Called once after the last step (for rules that conclude at the end).
  virtual void finish(const trial::catalog& /*trial*/, std::vector<finding>& /*findings*/) {}

  /// @brief Live trials (additive, issue 4): called by a watcher after every poll of the trial
  /// — after `catalog::refresh()` and after the new complete steps went through
  /// `evaluate_step` — with the current wall-clock time, for time-based rules (StalledTraining:
  /// spec/RULES.md §3.19). Progress can be judged from `trial` (e.g. `step_infos()`,
  /// `entries().size()`, `training_ended()`). Append findings for conditions met now; their
  /// `step` should be the last saved global step known (or -1 for none). Default: nothing.
  /// Never called by one-shot evaluation (`trialstat rules`). Must not throw.
  virtual void on_poll(const trial::catalog& /*trial*/,
                       std::chrono::system_clock::time_point /*now*/,
                       std::vector<finding>& /*findings*/) {}
};

/// @brief Create a built-in rule by smdebug name with SageMaker-style string parameters.
/// `rule_to_invoke`, if present in `params`, is ignored here (the caller used it as `name`).
/// @return the rule; errors: not_found for an unknown rule name (listing the known ones);
///   invalid_argument naming the parameter for an unknown parameter or an unparsable value.
[[nodiscard]] result<std::unique_ptr<rule>> make_rule(std::string_view name,
                                                      const rule_parameters& params);

/// @brief Names of every built-in rule trialstat implements, in spec/RULES.md order (see
/// builtin_rules.hpp). `make_rule` also accepts each one's SDK function name, e.g.
/// "vanishing_gradient".
[[nodiscard]] std::vector<std::string> builtin_rule_names();

/// @brief Warnings noted by rules' `prepare` on this thread since the last call (e.g. a
/// `collection_names` entry that names no collection of the trial: smdebug accepts it and
/// selects nothing, so it is a warning, not an error), each once; clears them. Rule runners
/// call it after each `prepare` and attach the warnings to that rule's result.
[[nodiscard]] std::vector<std::string> take_prepare_warnings();
/// @brief Note a warning for `take_prepare_warnings` (from inside `prepare`; duplicates dropped).
void note_prepare_warning(std::string message);

}  // namespace trialstat::rules
