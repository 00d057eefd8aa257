// SPDX-License-Identifier: Apache-2.0
// Watch events as JSON Lines (nlohmann-json: a few objects per poll, not a hot path).
#include <chrono>
#include <cmath>

#include <nlohmann/json.hpp>

#include "host/pipeline/skipped_records_json.hpp"
#include "trialstat/live/watch_trial.hpp"

namespace trialstat::live {
namespace {

using json = nlohmann::json;

json number_or_string(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

json finding_json(const rules::finding& f) {
  return {{"step", f.step},
          {"mode", mode_name(f.mode)},
          {"mode_step", f.mode_step},
          {"tensor", f.tensor},
          {"worker", f.worker},
          {"value", number_or_string(f.value)},
          {"message", f.message}};
}

json optional_step(const std::optional<int64_t>& step) {
  return step ? json(*step) : json(nullptr);
}

}  // namespace

std::string event_json(const watch_event& e) {
  json row;
  row["event"] = event_kind_name(e.kind);
  row["time"] = std::chrono::duration<double>(e.time.time_since_epoch()).count();
  if (e.rule) {
    row["rule"] = e.rule_name;
    row["configuration_name"] = e.configuration_name;
  }
  switch (e.kind) {
    case event_kind::status_change:
      if (e.transition) {
        row["from"] = rules::rule_status_name(e.transition->from);
        row["to"] = rules::rule_status_name(e.transition->to);
        row["step"] = optional_step(e.transition->step);
        if (e.transition->finding) row["finding"] = finding_json(*e.transition->finding);
        if (!e.transition->details.empty()) row["details"] = e.transition->details;
      }
      break;
    case event_kind::finding:
      if (e.finding) row["finding"] = finding_json(*e.finding);
      break;
    case event_kind::action:
      if (e.action) {
        row["action"] = e.action->action;
        row["description"] = e.action->description;
        row["ok"] = e.action->outcome.ok();
        if (e.action->exit_status) row["exit_status"] = *e.action->exit_status;
      }
      break;
    case event_kind::command_exit:
      if (e.command) {
        row["rule"] = e.command->rule;
        row["command"] = e.command->command;
        row["pid"] = e.command->pid;
        if (e.command->exit_code) row["exit_code"] = *e.command->exit_code;
        if (e.command->signal) row["signal"] = *e.command->signal;
        if (e.command->killed_at_timeout) row["killed"] = true;
      }
      break;
    case event_kind::progress:
      row["last_step"] = optional_step(e.last_step);
      row["steps_evaluated"] = e.steps_evaluated.value_or(0);
      if (e.waiting_on) {
        row["waiting_on"] = {{"step", e.waiting_on->step},
                             {"workers_done", e.waiting_on->workers_done},
                             {"num_workers", e.waiting_on->num_workers},
                             {"missing", e.waiting_on->missing}};
      } else {
        row["waiting_on"] = nullptr;
      }
      break;
    case event_kind::result:
      if (e.result) {
        row["rule"] = e.result->rule_name;
        row["configuration_name"] = e.result->configuration_name;
        row["status"] = rules::rule_status_name(e.result->status);
        if (!e.result->status_details.empty()) row["status_details"] = e.result->status_details;
        if (!e.result->warnings.empty()) row["warnings"] = e.result->warnings;
        auto& findings = row["findings"] = json::array();
        for (const auto& f : e.result->findings) findings.push_back(finding_json(f));
        pipeline::detail::add_skipped_records_json(*e.result, row);
      }
      break;
    case event_kind::end:
      if (e.reason) row["reason"] = end_reason_name(*e.reason);
      if (e.exit_status) row["exit_status"] = *e.exit_status;
      row["last_step"] = optional_step(e.last_step);
      row["steps_evaluated"] = e.steps_evaluated.value_or(0);
      break;
    case event_kind::started:
    case event_kind::waiting:
    case event_kind::warning:
      break;
  }
  row["message"] = e.message;
  return row.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace trialstat::live
