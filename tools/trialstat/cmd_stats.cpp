// SPDX-License-Identifier: Apache-2.0
// `trialstat stats TRIAL`: one row per (tensor, step, worker) with the statistics of
// ../shared/trials/README.md, the weight-update ratio for `weights`/`biases`, saved reductions,
// and with --log-hist the fixed log-scale histogram (JSON key `log_hist`).
#include <fmt/format.h>

#include <cstdio>

#include "tools/trialstat/commands.hpp"
#include "trialstat/plan/read_plan.hpp"
#include "trialstat/report/statistics_writer.hpp"
#include "trialstat/stats/histogram.hpp"

namespace trialstat::cli {
namespace {

struct stats_options {
  std::string trial;
  std::vector<std::string> collections;
  std::vector<std::string> regexes;
  std::string steps;
  std::string format = "table";
  std::string device = "auto";
  int64_t pinned_mb = 256;  // --pinned-mb: CUDA staging memory
  int bins = stats::default_histogram_bins;
  bool no_reductions = false;
  bool log_hist = false;  // --log-hist: fixed log-scale histograms (JSON only)
  bool strict = false;    // --strict: a record that cannot be read is an error (exit 2)
};

int run_stats(const stats_options& o) {
  auto format = report::parse_output_format(o.format);
  if (!format) return report_error(format.error_status());
  if (o.bins < 0) return report_error(status(error_code::invalid_argument, "--bins must be >= 0"));
  if (o.log_hist && *format != report::output_format::json) {
    // 1548 bins fit no table or CSV column: refuse rather than drop them silently.
    return report_error(status(error_code::invalid_argument,
                               "--log-hist is written only with --format json (key \"log_hist\")"));
  }
  auto options = make_pipeline_options(o.device);
  if (!options) return report_error(options.error_status());
  if (o.pinned_mb < 1 || o.pinned_mb > (int64_t{1} << 20)) {
    return report_error(status(error_code::invalid_argument, "--pinned-mb must be in [1, 1048576]"));
  }
  options->pinned_pool_bytes = static_cast<std::size_t>(o.pinned_mb) << 20;
  if (!o.steps.empty()) {
    auto range = parse_step_range(o.steps);
    if (!range) return report_error(range.error_status());
    options->step_begin = range->begin;
    options->step_end = range->end;
  }
  auto opened = open_trial(o.trial);
  if (!opened) return report_error(opened.error_status());
  const trial::catalog& trial = *opened;

  std::vector<trial::tensor_id> selected;
  if (o.collections.empty() && o.regexes.empty()) {
    selected = trial.sorted_tensor_ids();
  } else {
    auto chosen = trial.select(o.collections, o.regexes);
    if (!chosen) return report_error(chosen.error_status());
    selected = std::move(*chosen);
  }
  plan::read_plan plan;
  for (auto id : selected) {
    plan::tensor_request request;
    request.moments = true;
    request.histogram_bins = o.bins;
    request.log_histogram = o.log_hist;
    request.saved_reductions = !o.no_reductions;
    // The weight-update ratio (README "update_ratio") compares with the previous saved step.
    if (trial.in_collection(id, "weights") || trial.in_collection(id, "biases")) {
      request.history_depth = 1;
    }
    plan.request(id, request);
  }

  auto writer = report::statistics_writer::create(*format, stdout);
  int64_t failed = 0;
  auto run = pipeline::run_statistics(trial, plan, *options, [&](const plan::step_statistics& step) {
    writer->write_step(trial, step);
    for (const auto& r : step.records) {
      if (!r.raw_status.ok() && r.raw_status.code() != error_code::not_found) {
        fmt::print(stderr, "warning: {}\n", r.raw_status.to_string());
        ++failed;
      }
      for (const auto& problem : r.reduction_problems) {  // saved reductions: never silent
        fmt::print(stderr, "warning: saved reduction: {}\n", problem.reason.to_string());
        ++failed;
      }
    }
  });
  writer->finish();
  if (!run) return report_error(run.error_status());
  if (failed > 0) fmt::print(stderr, "trialstat: {} record(s) could not be read (see warnings)\n", failed);
  return failed > 0 && o.strict ? 2 : 0;
}

}  // namespace

void add_stats_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("stats", "Per-tensor statistics for every (tensor, step, worker)");
  auto o = std::make_shared<stats_options>();
  cmd->add_option("trial", o->trial, "Trial folder")->required();
  cmd->add_option("--collection", o->collections, "Only tensors of this collection (repeatable)");
  cmd->add_option("--tensor-regex", o->regexes,
                  "Only tensors matching this Python regex, re.search semantics (repeatable)");
  cmd->add_option("--steps", o->steps, "Global steps A:B (half-open), A:, :B or A");
  cmd->add_option("--format", o->format, "table, csv or json (JSON Lines)")->capture_default_str();
  cmd->add_option("--bins", o->bins, "Histogram bins (0 = no histograms)")->capture_default_str();
  cmd->add_flag("--log-hist", o->log_hist,
                "Also the fixed log-scale histogram (1548 bins, the same for every tensor and step; "
                "JSON key log_hist, --format json only)");
  cmd->add_flag("--no-reductions", o->no_reductions, "Do not read saved smdebug reductions");
  cmd->add_flag("--strict", o->strict, "Exit 2 when any record could not be read");
  cmd->add_option("--device", o->device, "Statistics backend: auto, cpu or cuda")->capture_default_str();
  cmd->add_option("--pinned-mb", o->pinned_mb,
                  "CUDA backend: pinned host staging memory in MiB (8 buffers; a tensor larger than "
                  "one buffer is split)")->capture_default_str();
  cmd->callback([=] { *exit_code = run_stats(*o); });
}

}  // namespace trialstat::cli
