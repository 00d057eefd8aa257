// SPDX-License-Identifier: Apache-2.0
// `trialstat stats TRIAL`: one row per (tensor, step, worker) with the statistics of
// ../shared/trials/README.md, the weight-update ratio for `weights`/`biases`, saved reductions,
// and with --log-hist the fixed log-scale histogram (JSON key `log_hist`).
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "tools/trialstat/commands.hpp"
#include "trialstat/distributed/distributed_statistics.hpp"
#include "trialstat/distributed/world.hpp"
#include "trialstat/plan/read_plan.hpp"
#include "trialstat/report/background_writer.hpp"
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
  frontend::device_options device;  // --device, --verify-device, --pinned-mb
  int bins = stats::default_histogram_bins;
  bool no_reductions = false;
  bool log_hist = false;  // --log-hist: fixed log-scale histograms (JSON only)
  std::string output;     // --output: a file instead of stdout
  progress_mode progress = progress_mode::automatic;
  bool strict = false;    // --strict: a record that cannot be read is an error (exit 2)
  std::string store = "auto";  // --store PATH|auto|off
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
  auto options = frontend::make_pipeline_options(o.device);
  if (!options) return report_error(options.error_status());
  if (status s = apply_step_range(o.steps, *options); !s.ok()) return report_error(s);
  command_statistics statistics(o.store, o.trial, *options);
  auto opened = open_trial(o.trial);
  if (!opened) return report_error(opened.error_status());
  const trial::catalog& trial = *opened;

  auto selected = report::select_tensors(trial, o.collections, o.regexes);
  if (!selected) return report_error(selected.error_status());
  const plan::read_plan plan =
      report::statistics_plan(trial, *selected,
                              {.histogram_bins = o.bins, .log_histogram = o.log_hist,
                               .saved_reductions = !o.no_reductions});
  auto progress = make_progress(o.progress, "stats");
  options->progress = progress.get();

  // --output: rank 0 writes the file itself (under mpirun, stdout is forwarded through mpirun).
  std::unique_ptr<FILE, int (*)(FILE*)> file(nullptr, &std::fclose);
  if (!o.output.empty() && distributed::world().rank() == 0) {
    file.reset(std::fopen(o.output.c_str(), "w"));
    if (!file) return report_error(status(error_code::io_error, fmt::format("{}: cannot write", o.output)));
  }
  // Rows are formatted on their own thread while the consumer computes the next steps.
  auto writer = report::make_background_writer(report::statistics_writer::create(*format, file ? file.get() : stdout));
  int64_t failed = 0;
  int64_t strings = 0;  // string records: readable, but without numeric statistics
  auto run = statistics.source()(trial, plan, *options, [&](const stats::step_statistics& step) {
    writer->write_step(trial, step);
    for (const auto& r : step.records) {
      if (r.type == dtype::string && r.raw_status.code() == error_code::unsupported_dtype) {
        ++strings;
      } else if (!r.raw_status.ok() && r.raw_status.code() != error_code::not_found) {
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
  report_transfers(trial);
  statistics.report();
  if (file && (std::fflush(file.get()) != 0 || std::ferror(file.get()) != 0)) {
    return report_error(status(error_code::io_error, fmt::format("{}: write failed", o.output)));
  }
  if (!run) return report_error(run.error_status());
  if (strings > 0) {
    fmt::print(stderr, "trialstat: {} string record(s): string tensors have no numeric statistics\n",
               strings);
  }
  if (failed > 0) fmt::print(stderr, "trialstat: {} record(s) could not be read (see warnings)\n", failed);
  return failed > 0 && o.strict ? 2 : 0;
}

}  // namespace

void add_stats_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("stats", "Per-tensor statistics for every (tensor, step, worker)");
  auto o = std::make_shared<stats_options>();
  cmd->add_option("trial", o->trial, "Trial folder or s3://bucket/prefix")->required();
  add_source_options(cmd);
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
  cmd->add_option("--output,-o", o->output, "Write to this file instead of standard output");
  cmd->add_flag("--strict", o->strict, "Exit 2 when any record could not be read");
  add_device_flags(cmd, &o->device, /*with_pinned_mb=*/true);
  add_store_option(cmd, &o->store);
  add_progress_flags(cmd, &o->progress);
  cmd->callback([=] { *exit_code = run_stats(*o); });
}

}  // namespace trialstat::cli
