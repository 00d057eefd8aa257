// SPDX-License-Identifier: Apache-2.0
// `trialstat example --out DIR`: train the example MLP and write an smdebug trial (the same
// trainer as `trialstat-example-trial`, tools/example_trial/).
#include <fmt/format.h>

#include "tools/example_trial/example_trial.hpp"
#include "tools/example_trial/example_trial_cli.hpp"
#include "tools/trialstat/commands.hpp"

namespace trialstat::cli {

void add_example_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "example", "Train a small MLP (Eigen) and write an smdebug trial, healthy or with a pathology");
  auto flags = std::make_shared<example::cli_flags>();
  example::add_example_trial_flags(*cmd, *flags);
  cmd->callback([=] {
    auto options = example::options_from_flags(*flags);
    if (!options) {
      *exit_code = report_error(options.error_status());
      return;
    }
    auto summary = example::run_example_trial(*options);
    if (!summary) {
      *exit_code = report_error(summary.error_status());
      return;
    }
    fmt::print("{}\n", example::format_summary(*summary, options->kind));
    *exit_code = 0;
  });
}

}  // namespace trialstat::cli
