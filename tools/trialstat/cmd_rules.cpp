// SPDX-License-Identifier: Apache-2.0
// `trialstat rules TRIAL`: evaluate smdebug built-in rules (from --rule/--param or a SageMaker
// rule config) in one pass over the trial. Exit: 0 no issues, 1 issues found, 2 error.
#include <fmt/format.h>

#include <algorithm>

#include "tools/trialstat/commands.hpp"
#include "trialstat/distributed/distributed_statistics.hpp"
#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/report/rule_report.hpp"

namespace trialstat::cli {
namespace {

struct rules_options {
  std::string trial;
  std::string config;
  std::vector<std::string> rule_names;
  std::vector<std::string> params;
  std::vector<std::string> order;  // "rule" / "param", in command-line order
  std::string steps;
  std::string format = "table";
  frontend::device_options device;  // --device, --verify-device, --pinned-mb
  std::size_t max_findings = 20;
  progress_mode progress = progress_mode::automatic;
  bool strict = false;  // --strict: an unreadable record is an error (exit 2)
  std::string store = "auto";  // --store PATH|auto|off
};

int run_rules(const rules_options& o) {
  auto format = report::parse_output_format(o.format);
  if (!format) return report_error(format.error_status());
  auto options = frontend::make_pipeline_options(o.device);
  if (!options) return report_error(options.error_status());
  options->strict = o.strict;
  if (status s = apply_step_range(o.steps, *options); !s.ok()) return report_error(s);

  auto configs = rule_configs_from_flags(o.config, o.rule_names, o.params, o.order);
  if (!configs) return report_error(configs.error_status());
  std::vector<pipeline::rule_invocation> invocations = frontend::make_rule_invocations(*configs);

  command_statistics statistics(o.store, o.trial, *options);
  auto opened = open_trial(o.trial);
  if (!opened) return report_error(opened.error_status());
  auto progress = make_progress(o.progress, "rules");
  options->progress = progress.get();
  // Under mpirun the ranks compute the statistics together; rank 0 evaluates the rules.
  auto results = pipeline::evaluate_rules(*opened, invocations, *options, statistics.source());
  report_transfers(*opened);
  statistics.report();
  if (!results) return report_error(results.error_status());
  report::write_rule_results(*results, *format, stdout, o.max_findings);
  report_skipped(*results);

  return rules_exit_code(*results);
}

}  // namespace

void add_rules_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "rules",
      "Evaluate smdebug built-in rules; exit 0 no issues, 1 issues found, 2 error. Without "
      "--rule/--config: " + fmt::format("{}", fmt::join(frontend::default_rule_names(), ", ")));
  auto o = std::make_shared<rules_options>();
  cmd->add_option("trial", o->trial, "Trial folder or s3://bucket/prefix")->required();
  add_source_options(cmd);
  cmd->add_option("--config", o->config,
                  "SageMaker rule config: JSON list of {RuleConfigurationName, RuleParameters: "
                  "{rule_to_invoke, ...}}")->check(CLI::ExistingFile);
  cmd->add_option("--steps", o->steps, "Global steps A:B (half-open), A:, :B or A");
  cmd->add_option("--format", o->format, "table (text) or json (one object per rule)")->capture_default_str();
  cmd->add_option("--max-findings", o->max_findings, "Findings listed per rule in text output (0 = all)")->capture_default_str();
  add_device_flags(cmd, &o->device, /*with_pinned_mb=*/true);
  cmd->add_flag("--strict", o->strict,
                "A record that cannot be read (cut short, corrupt, file missing) makes the rules "
                "that needed it Error (exit 2) instead of a warning");
  add_store_option(cmd, &o->store);
  add_progress_flags(cmd, &o->progress);
  add_rule_flags(cmd, &o->rule_names, &o->params, &o->order, [=] { *exit_code = run_rules(*o); });
}

}  // namespace trialstat::cli
