// SPDX-License-Identifier: Apache-2.0
// trialstat-example-trial: train a small MLP with Eigen and write an smdebug trial.
// Example: trialstat-example-trial --out /tmp/t --steps 200 --eval-every 50 --pathology dead_relu
#include <cstdio>

#include <CLI/CLI.hpp>

#include "tools/example_trial/example_trial.hpp"
#include "tools/example_trial/example_trial_cli.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Train an MLP (Eigen, float32) on Gaussian blobs and write an smdebug trial "
               "exactly as the smdebug PyTorch hook would."};
  trialstat::example::cli_flags flags;
  trialstat::example::add_example_trial_flags(app, flags);
  CLI11_PARSE(app, argc, argv);
  auto options = trialstat::example::options_from_flags(flags);
  if (!options) {
    std::fprintf(stderr, "trialstat-example-trial: %s\n", options.error_status().to_string().c_str());
    return 2;
  }
  auto summary = trialstat::example::run_example_trial(*options);
  if (!summary) {
    std::fprintf(stderr, "trialstat-example-trial: %s\n", summary.error_status().to_string().c_str());
    return summary.error_status().code() == trialstat::error_code::invalid_argument ? 2 : 1;
  }
  std::printf("%s\n", trialstat::example::format_summary(*summary, options->kind).c_str());
  return 0;
}
