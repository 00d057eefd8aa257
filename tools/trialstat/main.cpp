// SPDX-License-Identifier: Apache-2.0
// trialstat: tensor statistics and smdebug rules over SageMaker Debugger trials.
#include <CLI/CLI.hpp>

#include <exception>

#include <fmt/format.h>

#include "tools/trialstat/commands.hpp"
#include "trialstat/distributed/world.hpp"
#include "trialstat/config.hpp"

int main(int argc, char** argv) {
  CLI::App app{"trialstat " TRIALSTAT_VERSION
               ": tensor statistics and smdebug rules over SageMaker Debugger trials"};
  app.require_subcommand(1);
  app.set_version_flag("--version", TRIALSTAT_VERSION);
  // Under mpirun: one rank per process (issue 10); rank 0 writes the results.
  auto& world = trialstat::distributed::world();
  if (auto started = world.init(&argc, &argv); !started.ok()) return trialstat::cli::report_error(started);
  if (auto refused = trialstat::cli::check_runs_distributed(argc, argv); !refused.ok()) {
    return trialstat::cli::report_error(refused);
  }
  int exit_code = 0;
  trialstat::cli::add_info_command(app, &exit_code);
  trialstat::cli::add_stats_command(app, &exit_code);
  trialstat::cli::add_rules_command(app, &exit_code);
  trialstat::cli::add_watch_command(app, &exit_code);
  trialstat::cli::add_example_command(app, &exit_code);
  trialstat::cli::add_tensorboard_command(app, &exit_code);
  trialstat::cli::add_report_command(app, &exit_code);
  trialstat::cli::add_bench_command(app, &exit_code);
  trialstat::cli::add_selftest_command(app, &exit_code);
  trialstat::cli::add_store_command(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return world.finish(code == 0 ? 0 : 2);
  } catch (const std::exception& e) {
    world.abort(trialstat::status(trialstat::error_code::invalid_argument, e.what()), 2);
  }
  return world.finish(exit_code);
}
