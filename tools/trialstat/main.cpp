// SPDX-License-Identifier: Apache-2.0
// trialstat: tensor statistics and smdebug rules over SageMaker Debugger trials.
#include <CLI/CLI.hpp>

#include <array>
#include <exception>
#include <string_view>

#include <fmt/format.h>

#include "tools/trialstat/commands.hpp"
#include "trialstat/distributed/world.hpp"
#include "trialstat/config.hpp"

namespace trialstat::cli {
namespace {

struct command_entry {
  std::string_view name;
  void (*add)(CLI::App&, int*);
};

// Every subcommand, by the name its add_*_command registers.
constexpr std::array<command_entry, 10> commands{{
    {"info", add_info_command},
    {"stats", add_stats_command},
    {"rules", add_rules_command},
    {"watch", add_watch_command},
    {"example", add_example_command},
    {"tensorboard", add_tensorboard_command},
    {"report", add_report_command},
    {"bench", add_bench_command},
    {"selftest", add_selftest_command},
    {"store", add_store_command},
}};

// Registers the subcommand argv[1] names, or all of them when it names none (`--help`,
// `--version`, a typo: CLI11 then lists or rejects them as usual). Building every subcommand's
// options costs ~2 M instructions (~0.6 ms) per process, a tenth of a warm store run's start.
void add_commands(CLI::App& app, int argc, char** argv, int* exit_code) {
  if (argc > 1) {
    for (const auto& command : commands) {
      if (command.name == argv[1]) {
        command.add(app, exit_code);
        return;
      }
    }
  }
  for (const auto& command : commands) command.add(app, exit_code);
}

}  // namespace
}  // namespace trialstat::cli

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
  trialstat::cli::add_commands(app, argc, argv, &exit_code);
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
