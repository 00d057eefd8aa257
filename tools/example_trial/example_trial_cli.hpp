// SPDX-License-Identifier: Apache-2.0
/// @file example_trial_cli.hpp
/// @brief Command-line flags of the example-trial trainer, shared by `trialstat-example-trial`
/// and any CLI that embeds it as a subcommand (CLI11). Header-only.
#pragma once

#include <cctype>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "tools/example_trial/example_trial.hpp"

namespace trialstat::example {

/// @brief Raw flag values; `options_from_flags` turns them into `trainer_options`.
struct cli_flags {
  trainer_options options;
  std::string pathology = "none";
  double lr = 0.0;              ///< 0 = the pathology's default
  double momentum = -1.0;       ///< < 0 = the pathology's default
  std::string target_size;      ///< "" = use --steps; else bytes with optional K/M/G/T suffix (×1024)
};

/// @brief Register the flags on `app`: --out, --steps, --save-interval, --width, --layers,
/// --batch, --input-dim, --classes, --lr, --momentum, --seed, --workers, --eval-every, --eval-batches,
/// --pathology, --target-bytes, --threads, --overwrite, --no-end-marker.
inline void add_example_trial_flags(CLI::App& app, cli_flags& f) {
  auto& o = f.options;
  app.add_option("--out,-o", o.out, "trial folder to write (must be empty or absent)")->required();
  app.add_option("--steps", o.steps, "TRAIN steps")->capture_default_str();
  app.add_option("--save-interval", o.save_interval, "save every N TRAIN mode steps")
      ->capture_default_str();
  app.add_option("--width", o.width, "hidden layer width")->capture_default_str();
  app.add_option("--layers", o.hidden_layers, "number of hidden layers (>= 2)")->capture_default_str();
  app.add_option("--batch", o.batch, "samples per step per worker")->capture_default_str();
  app.add_option("--input-dim", o.input_dim, "input features")->capture_default_str();
  app.add_option("--classes", o.classes, "output classes")->capture_default_str();
  app.add_option("--lr", f.lr, "SGD learning rate (default 0.05; vanishing, dead_relu: 0.1; exploding: 2.5 x classes)");
  app.add_option("--momentum", f.momentum, "SGD momentum (default 0.9; pathologies: 0)");
  app.add_option("--seed", o.seed, "random seed (data and init)")->capture_default_str();
  app.add_option("--workers", o.workers, "data-parallel workers, one set of files each")
      ->capture_default_str();
  app.add_option("--eval-every", o.eval_every, "EVAL phase after every N TRAIN steps (0 = none)")
      ->capture_default_str();
  app.add_option("--eval-batches", o.eval_batches, "EVAL steps per phase")->capture_default_str();
  app.add_option("--pathology", f.pathology, "none | exploding | vanishing | dead_relu | desync")
      ->check(CLI::IsMember({"none", "exploding", "vanishing", "dead_relu", "desync"}))
      ->capture_default_str();
  app.add_option("--target-bytes", f.target_size,
                 "pick the number of steps to make the trial about this big (e.g. 2G, 500M)");
  app.add_option("--threads", o.threads, "threads for matrix products (0 = all cores)")
      ->capture_default_str();
  app.add_flag("--overwrite", o.overwrite, "delete an existing output folder first");
  app.add_flag("!--no-end-marker", o.write_end_marker, "do not write training_job_end.ts");
}

/// @brief Parse "123", "64K", "500M", "2G", "1T" (binary multiples). Errors: invalid_argument.
inline result<uint64_t> parse_size_bytes(const std::string& text) {
  std::size_t pos = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &pos);
  } catch (const std::exception&) {
    return status(error_code::invalid_argument, "not a size: '" + text + "'");
  }
  std::string suffix = text.substr(pos);
  if (suffix.size() > 1 && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  if (suffix.size() > 1 && (suffix.back() == 'i')) suffix.pop_back();
  if (suffix.size() > 1) return status(error_code::invalid_argument, "not a size: '" + text + "'");
  int shift = 0;
  if (!suffix.empty()) {
    switch (std::toupper(static_cast<unsigned char>(suffix[0]))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      case 'B': break;
      default: return status(error_code::invalid_argument, "not a size: '" + text + "'");
    }
  }
  return static_cast<uint64_t>(value) << shift;
}

/// @brief The trainer options the flags describe. Errors: invalid_argument (bad size text).
inline result<trainer_options> options_from_flags(const cli_flags& f) {
  trainer_options o = f.options;
  o.kind = parse_pathology(f.pathology).value_or(pathology::none);
  if (f.lr > 0) o.lr = f.lr;
  if (f.momentum >= 0) o.momentum = f.momentum;
  if (!f.target_size.empty()) {
    auto bytes = parse_size_bytes(f.target_size);
    if (!bytes) return bytes.error_status();
    o.target_bytes = *bytes;
  }
  return o;
}

}  // namespace trialstat::example
