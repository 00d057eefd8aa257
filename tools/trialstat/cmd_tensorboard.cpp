// SPDX-License-Identifier: Apache-2.0
// `trialstat tensorboard TRIAL --logdir DIR`: the statistics of `stats` (and its log-scale
// histograms) as TensorBoard event files, one run per worker (report/tensorboard_export.hpp).
#include <fmt/format.h>

#include "tools/trialstat/commands.hpp"
#include "trialstat/distributed/distributed_statistics.hpp"
#include "trialstat/distributed/world.hpp"
#include "trialstat/report/tensorboard_export.hpp"

namespace trialstat::cli {
namespace {

struct tensorboard_options {
  std::string trial;
  std::string logdir;
  std::vector<std::string> collections;
  std::vector<std::string> regexes;
  std::string steps;
  frontend::device_options device;  // --device, --verify-device, --pinned-mb
  bool overwrite = false;
  progress_mode progress = progress_mode::automatic;
  std::string store = "auto";  // --store PATH|auto|off
};

int run_tensorboard(const tensorboard_options& o) {
  auto options = frontend::make_pipeline_options(o.device);
  if (!options) return report_error(options.error_status());
  if (status s = apply_step_range(o.steps, *options); !s.ok()) return report_error(s);
  command_statistics statistics(o.store, o.trial, *options);
  auto opened = open_trial(o.trial);
  if (!opened) return report_error(opened.error_status());
  auto progress = make_progress(o.progress, "tensorboard");
  report::tensorboard_export_options e;
  e.logdir = o.logdir;
  e.collections = o.collections;
  e.regexes = o.regexes;
  e.overwrite = o.overwrite;
  e.pipeline = *options;
  e.pipeline.progress = progress.get();
  // Under mpirun the ranks compute the statistics together; rank 0 alone writes the logdir.
  distributed::process_world& world = distributed::world();
  e.statistics = statistics.source();
  e.writes_files = world.rank() == 0;
  auto summary = report::export_tensorboard(*opened, e, [](const status& s) {
    fmt::print(stderr, "warning: {}\n", s.to_string());
  });
  if (!summary) {
    // A failure before the shared run (rank 0: a logdir that is not empty) must end every rank.
    if (world.distributed()) world.abort(summary.error_status(), 2);
    return report_error(summary.error_status());
  }
  if (world.rank() != 0) return 0;
  statistics.report();
  fmt::print(stderr, "trialstat: wrote {} scalars and {} histograms of {} steps into {} run(s) under {}\n",
             summary->scalars, summary->histograms, summary->steps, summary->files.size(), o.logdir);
  if (summary->failed_records > 0) {
    fmt::print(stderr, "trialstat: {} record(s) could not be read (see warnings)\n", summary->failed_records);
  }
  return 0;
}

}  // namespace

void add_tensorboard_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "tensorboard", "Write the statistics as TensorBoard event files, one run per worker (DIR/<worker>/)");
  auto o = std::make_shared<tensorboard_options>();
  cmd->add_option("trial", o->trial, "Trial folder or s3://bucket/prefix")->required();
  add_source_options(cmd);
  cmd->add_option("--logdir", o->logdir, "TensorBoard log folder to write")->required();
  cmd->add_option("--collection", o->collections, "Only tensors of this collection (repeatable)");
  cmd->add_option("--tensor-regex", o->regexes,
                  "Only tensors matching this Python regex, re.search semantics (repeatable)");
  cmd->add_option("--steps", o->steps, "Global steps A:B (half-open), A:, :B or A");
  cmd->add_flag("--overwrite", o->overwrite,
                "Write into a non-empty logdir, deleting the TensorBoard event files already there");
  add_device_flags(cmd, &o->device, /*with_pinned_mb=*/false);
  add_store_option(cmd, &o->store);
  add_progress_flags(cmd, &o->progress);
  cmd->callback([=] { *exit_code = run_tensorboard(*o); });
}

}  // namespace trialstat::cli
