// SPDX-License-Identifier: Apache-2.0
// `trialstat rules TRIAL`: evaluate smdebug built-in rules (from --rule/--param or a SageMaker
// rule config) in one pass over the trial. Exit: 0 no issues, 1 issues found, 2 error.
#include <fmt/format.h>

#include <algorithm>

#include "tools/trialstat/commands.hpp"
#include "trialstat/pipeline/rule_runner.hpp"
#include "trialstat/report/rule_report.hpp"
#include "trialstat/rules/rule_config.hpp"

namespace trialstat::cli {
namespace {

/// Rules `trialstat rules` runs when neither --rule nor --config is given: every built-in rule
/// that needs no parameter (the others need a tensor selection or a second trial).
const std::vector<std::string> default_rule_names = {
    "VanishingGradient", "ExplodingTensor", "WeightUpdateRatio", "LossNotDecreasing", "DeadRelu"};

struct rules_options {
  std::string trial;
  std::string config;
  std::vector<std::string> rule_names;
  std::vector<std::string> params;
  std::vector<std::string> order;  // "rule" / "param", in command-line order
  std::string steps;
  std::string format = "table";
  std::string device = "auto";
  int64_t pinned_mb = 256;  // --pinned-mb: CUDA staging memory
  std::size_t max_findings = 20;
  bool strict = false;  // --strict: an unreadable record is an error (exit 2)
};

/// --rule/--param flags as rule invocations.
result<std::vector<pipeline::rule_invocation>> invocations_from_flags(const rules_options& o) {
  auto specs = parse_rule_flags(o.rule_names, o.params, o.order);
  if (!specs) return specs.error_status();
  std::vector<pipeline::rule_invocation> out;
  for (const auto& [name, params] : *specs) out.push_back(make_rule_invocation(name, name, params));
  return out;
}

int run_rules(const rules_options& o) {
  auto format = report::parse_output_format(o.format);
  if (!format) return report_error(format.error_status());
  auto options = make_pipeline_options(o.device);
  if (!options) return report_error(options.error_status());
  if (o.pinned_mb < 1 || o.pinned_mb > (int64_t{1} << 20)) {
    return report_error(status(error_code::invalid_argument, "--pinned-mb must be in [1, 1048576]"));
  }
  options->pinned_pool_bytes = static_cast<std::size_t>(o.pinned_mb) << 20;
  options->strict = o.strict;
  if (!o.steps.empty()) {
    auto range = parse_step_range(o.steps);
    if (!range) return report_error(range.error_status());
    options->step_begin = range->begin;
    options->step_end = range->end;
  }

  std::vector<pipeline::rule_invocation> invocations;
  if (!o.config.empty()) {
    auto configs = rules::load_rule_config(o.config);
    if (!configs) return report_error(configs.error_status());
    for (const auto& c : *configs) {
      invocations.push_back(make_rule_invocation(c.configuration_name, c.rule_name, c.parameters));
    }
  }
  auto flagged = invocations_from_flags(o);
  if (!flagged) return report_error(flagged.error_status());
  for (auto& invocation : *flagged) invocations.push_back(std::move(invocation));
  if (invocations.empty()) {
    for (const auto& name : default_rule_names) invocations.push_back(make_rule_invocation(name, name, {}));
  }

  auto opened = open_trial(o.trial);
  if (!opened) return report_error(opened.error_status());
  auto results = pipeline::evaluate_rules(*opened, invocations, *options);
  if (!results) return report_error(results.error_status());
  report::write_rule_results(*results, *format, stdout, o.max_findings);
  report_skipped(*results);

  const auto any = [&](rules::rule_status s) {
    return std::any_of(results->begin(), results->end(), [&](const auto& r) { return r.status == s; });
  };
  if (any(rules::rule_status::error)) return 2;
  return any(rules::rule_status::issues_found) ? 1 : 0;
}

}  // namespace

void add_rules_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "rules",
      "Evaluate smdebug built-in rules; exit 0 no issues, 1 issues found, 2 error. Without "
      "--rule/--config: " + fmt::format("{}", fmt::join(default_rule_names, ", ")));
  auto o = std::make_shared<rules_options>();
  cmd->add_option("trial", o->trial, "Trial folder")->required();
  auto* rule_opt = cmd->add_option("--rule", o->rule_names, "Built-in rule name, e.g. VanishingGradient (repeatable)");
  auto* param_opt = cmd->add_option("--param", o->params, "key=value for the preceding --rule (repeatable)");
  cmd->add_option("--config", o->config,
                  "SageMaker rule config: JSON list of {RuleConfigurationName, RuleParameters: "
                  "{rule_to_invoke, ...}}")->check(CLI::ExistingFile);
  cmd->add_option("--steps", o->steps, "Global steps A:B (half-open), A:, :B or A");
  cmd->add_option("--format", o->format, "table (text) or json (one object per rule)")->capture_default_str();
  cmd->add_option("--max-findings", o->max_findings, "Findings listed per rule in text output (0 = all)")->capture_default_str();
  cmd->add_option("--device", o->device, "Statistics backend: auto, cpu or cuda")->capture_default_str();
  cmd->add_flag("--strict", o->strict,
                "A record that cannot be read (cut short, corrupt, file missing) makes the rules "
                "that needed it Error (exit 2) instead of a warning");
  cmd->add_option("--pinned-mb", o->pinned_mb,
                  "CUDA backend: pinned host staging memory in MiB (8 buffers; a tensor larger than "
                  "one buffer is split)")->capture_default_str();
  cmd->callback([=] {
    for (const CLI::Option* opt : cmd->parse_order()) {
      if (opt == rule_opt) o->order.emplace_back("rule");
      if (opt == param_opt) o->order.emplace_back("param");
    }
    *exit_code = run_rules(*o);
  });
}

}  // namespace trialstat::cli
