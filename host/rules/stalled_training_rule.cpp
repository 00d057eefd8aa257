// SPDX-License-Identifier: Apache-2.0
// StalledTrainingRule — spec/RULES.md §3.19: live through `on_poll` (wall clock), offline from
// the Event.wall_time of each saved step's first record, requested in the read plan
// (statistics_request::wall_time) and delivered in the step's statistics records.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "StalledTrainingRule";

double seconds_since_epoch(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

class stalled_training_rule final : public rule {
 public:
  explicit stalled_training_rule(const stalled_training_rule_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    // No statistics: the wall time of each step's first indexed record, so the tensors that
    // hold a first record (usually one or two) ask for it.
    stats::statistics_request request;
    request.moments = false;
    request.wall_time = true;
    std::vector<trial::tensor_id> firsts;
    for (const trial::step_info& info : trial.step_infos()) {
      if (const trial::tensor_entry* entry = first_record(trial, info.step)) {
        if (std::find(firsts.begin(), firsts.end(), entry->tensor) == firsts.end()) {
          firsts.push_back(entry->tensor);
        }
      }
    }
    for (const auto t : firsts) plan.request(t, request);
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    const auto time = step_wall_time(trial, step);
    if (!time) return;
    if (previous_time_) {
      const double gap = *time - *previous_time_;
      if (gap > static_cast<double>(params_.threshold)) {
        findings.push_back(stall_finding(
            step.step, step.mode, step.mode_step, gap,
            fmt::format("no new step for {} s (step {} at wall time {} to step {} at {})",
                        detail::format_number(gap), previous_step_, fixed(*previous_time_),
                        step.step, fixed(*time))));
      }
    }
    previous_time_ = time;
    previous_step_ = step.step;
  }

  void on_poll(const trial::catalog& trial, std::chrono::system_clock::time_point now,
               std::vector<finding>& findings) override {
    const double now_s = seconds_since_epoch(now);
    const auto infos = trial.step_infos();
    const auto signature = std::pair(infos.size(), trial.entries().size());
    if (!last_progress_s_ || signature != last_signature_) {
      // First poll (the rule's start counts as progress) or the trial grew.
      last_progress_s_ = now_s;
      last_signature_ = signature;
      fired_ = false;
      return;
    }
    if (fired_ || trial.training_ended()) return;
    const double stall = now_s - *last_progress_s_;
    if (!(stall > static_cast<double>(params_.threshold))) return;
    fired_ = true;
    const int64_t last_step = infos.empty() ? -1 : infos.back().step;
    const trialstat::mode mode = infos.empty() ? trialstat::mode::global : infos.back().mode;
    const int64_t mode_step = infos.empty() ? -1 : infos.back().mode_step;
    findings.push_back(stall_finding(
        last_step, mode, mode_step, stall,
        fmt::format("no new step for {} s (last saved step {}; no end marker)",
                    detail::format_number(stall), last_step)));
  }

 private:
  /// The step's first entry with an indexed record (raw tensor or saved reduction), or null.
  static const trial::tensor_entry* first_record(const trial::catalog& trial, int64_t step) {
    for (const trial::tensor_entry& entry : trial.entries_at(step)) {
      if (entry.raw || !entry.reductions.empty()) return &entry;
    }
    return nullptr;  // shapes only
  }

  /// Event.wall_time of the step's first indexed record, from its statistics record (absent
  /// when the record could not be read).
  static std::optional<double> step_wall_time(const trial::catalog& trial,
                                              const stats::step_statistics& step) {
    const trial::tensor_entry* entry = first_record(trial, step.step);
    if (entry == nullptr) return std::nullopt;
    for (const stats::statistics_record& r : step.records) {
      if (r.tensor == entry->tensor && r.worker == entry->worker) return r.wall_time;
    }
    return std::nullopt;
  }

  finding stall_finding(int64_t step, trialstat::mode mode, int64_t mode_step, double seconds,
                        std::string message) const {
    finding f;
    f.rule = std::string(rule_name);
    f.step = step;
    f.mode = mode;
    f.mode_step = mode_step;
    f.value = seconds;
    f.message = std::move(message) + fmt::format(" > threshold {} s", params_.threshold);
    if (params_.stop_training_on_fire) {
      f.message += fmt::format("; stop_training_on_fire: StopTraining requested for jobs "
                               "prefixed '{}'",
                               params_.training_job_name_prefix);
    }
    return f;
  }

  static std::string fixed(double seconds) { return fmt::format("{:.3f}", seconds); }

  stalled_training_rule_params params_;
  std::optional<double> previous_time_;
  int64_t previous_step_ = -1;
  std::optional<double> last_progress_s_;
  std::pair<std::size_t, std::size_t> last_signature_{0, 0};
  bool fired_ = false;
};

}  // namespace

std::unique_ptr<rule> make_stalled_training_rule(const stalled_training_rule_params& p) {
  return std::make_unique<stalled_training_rule>(p);
}

result<stalled_training_rule_params> parse_stalled_training_rule_params(
    const rule_parameters& params) {
  stalled_training_rule_params p;
  parameter_reader reader(rule_name, params);
  reader.read("threshold", p.threshold);
  reader.read("stop_training_on_fire", p.stop_training_on_fire);
  reader.read("training_job_name_prefix", p.training_job_name_prefix);
  reader.require(p.threshold >= 0, "threshold",
                 fmt::format("must not be negative, got {}", p.threshold));
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
