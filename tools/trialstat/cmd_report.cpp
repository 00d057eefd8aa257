// SPDX-License-Identifier: Apache-2.0
// `trialstat report TRIAL -o report.html`: one self-contained HTML file with the trial's summary,
// the rules' statuses and findings, statistics over steps and distributions
// (report/html_report.hpp). Exit status as `rules`: 0 no issues, 1 issues found, 2 error.
#include <fmt/format.h>

#include <algorithm>

#include "tools/trialstat/commands.hpp"
#include "trialstat/distributed/world.hpp"
#include "trialstat/report/html_report.hpp"

namespace trialstat::cli {
namespace {

struct report_options {
  std::string trial;
  std::string output;
  std::string config;
  std::vector<std::string> rule_names;
  std::vector<std::string> params;
  std::vector<std::string> order;
  std::vector<std::string> regexes;
  std::string steps;
  frontend::device_options device;  // --device, --verify-device, --pinned-mb
  int max_points = 300;
  int max_heatmap_steps = 120;
  progress_mode progress = progress_mode::automatic;
  std::string store = "auto";  // --store PATH|auto|off
};

int run_report(const report_options& o) {
  auto resolved = frontend::resolve_device(o.device.device);
  if (!resolved) return report_error(resolved.error_status());
  auto pipeline = frontend::make_pipeline_options(o.device);
  if (!pipeline) return report_error(pipeline.error_status());
  report::html_report_options r;
  r.pipeline = std::move(*pipeline);
  r.backend_description = resolved->reason;
  if (status s = apply_step_range(o.steps, r.pipeline); !s.ok()) return report_error(s);
  if (o.max_points < 2 || o.max_heatmap_steps < 2) {
    return report_error(status(error_code::invalid_argument, "--max-points and --heatmap-steps must be >= 2"));
  }
  r.max_points = o.max_points;
  r.max_heatmap_steps = o.max_heatmap_steps;
  r.heatmap_regexes = o.regexes;
  auto configs = rule_configs_from_flags(o.config, o.rule_names, o.params, o.order);
  if (!configs) return report_error(configs.error_status());
  // Rank 0 alone computes the statistics (see below); the store's rows are read meanwhile.
  command_statistics statistics(o.store, o.trial, r.pipeline, /*ranks_share=*/false);
  auto opened = open_trial(o.trial);
  if (!opened) return report_error(opened.error_status());
  // Under mpirun, rank 0 alone writes the report (the ranks loaded the catalog together): its
  // second pass depends on the first pass's findings, which only rank 0 holds, so the ranks
  // cannot share the reading the way `rules` and `tensorboard` do.
  if (distributed::world().rank() != 0) return 0;
  auto progress = make_progress(o.progress, "report");
  r.pipeline.progress = progress.get();
  r.statistics = statistics.source();
  auto summary = report::write_html_report(*opened, frontend::make_rule_invocations(*configs), r, o.output, [](const status& s) {
    fmt::print(stderr, "warning: {}\n", s.to_string());
  });
  if (!summary) return report_error(summary.error_status());
  statistics.report();
  fmt::print(stderr, "trialstat: wrote {} ({:.2f} MB: {} tensors, {} heatmaps, {} steps)\n", o.output,
             static_cast<double>(summary->bytes) / 1e6, summary->tensors_plotted, summary->heatmaps,
             summary->steps);
  if (summary->failed_records > 0) {
    fmt::print(stderr, "trialstat: {} record(s) could not be read (marked in the report)\n",
               summary->failed_records);
  }
  return rules_exit_code(summary->results);
}

}  // namespace

void add_report_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "report", "Write one self-contained HTML report: trial summary, rules and findings, statistics "
                "over steps, distributions (exit status as `rules`)");
  auto o = std::make_shared<report_options>();
  cmd->add_option("trial", o->trial, "Trial folder or s3://bucket/prefix")->required();
  add_source_options(cmd);
  cmd->add_option("-o,--output", o->output, "HTML file to write")->required();
  cmd->add_option("--config", o->config, "SageMaker rule config (as `rules --config`)")->check(CLI::ExistingFile);
  cmd->add_option("--tensor-regex", o->regexes,
                  "Also show the distribution heatmap of tensors matching this regex (repeatable)");
  cmd->add_option("--steps", o->steps, "Global steps A:B (half-open), A:, :B or A");
  cmd->add_option("--max-points", o->max_points, "Curve points kept evenly per tensor and worker "
                  "(steps with NaN/Inf, findings or errors are always kept)")->capture_default_str();
  cmd->add_option("--heatmap-steps", o->max_heatmap_steps, "Heatmap columns (steps) spread evenly, "
                  "plus the finding steps")->capture_default_str();
  add_device_flags(cmd, &o->device, /*with_pinned_mb=*/false);
  add_store_option(cmd, &o->store);
  add_progress_flags(cmd, &o->progress);
  add_rule_flags(cmd, &o->rule_names, &o->params, &o->order, [=] { *exit_code = run_report(*o); });
}

}  // namespace trialstat::cli
