// SPDX-License-Identifier: Apache-2.0
// `trialstat store path|info|clear TRIAL`: where a trial's statistics store is, what it holds,
// and removing it (README "Statistics store").
#include <fmt/format.h>

#include "tools/trialstat/commands.hpp"
#include "trialstat/store/statistics_store.hpp"

namespace trialstat::cli {
namespace {

struct store_options {
  std::string action;
  std::string trial;
  std::string store = "auto";
};

int run_store(const store_options& o) {
  const std::string choice = o.store == "off" ? std::string("auto") : o.store;
  auto path = store::resolve_store_path(choice, o.trial);
  if (!path) return report_error(path.error_status());
  const std::filesystem::path& file = **path;
  if (o.action == "path") {
    fmt::print("{}\n", file.string());
    return 0;
  }
  if (o.action == "clear") {
    if (status s = store::remove_store(file); !s.ok()) return report_error(s);
    fmt::print(stderr, "trialstat: removed {}\n", file.string());
    return 0;
  }
  auto opened = store::statistics_store::open_existing(file);
  if (!opened) {
    if (opened.error_status().code() == error_code::not_found) {
      fmt::print("{}: no store yet\n", file.string());
      return 0;
    }
    return report_error(opened.error_status());
  }
  auto info = opened->info();
  if (!info) return report_error(info.error_status());
  fmt::print("store: {}\ntrial: {}\nschema version: {}\nrows: {}\ntensors: {}\nsteps: {}\nworkers: {}\n"
             "requests: {}\nsmall records in bundles: {} (in {} bundles)\nbytes: {}\n",
             file.string(), info->trial, info->version, info->rows, info->tensors, info->steps, info->workers,
             info->requests, info->bundled_rows, info->bundles, info->file_bytes);
  return 0;
}

}  // namespace

void add_store_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("store", "The statistics store of a trial: path, info or clear");
  auto o = std::make_shared<store_options>();
  cmd->add_option("action", o->action, "path, info or clear")
      ->required()
      ->check(CLI::IsMember({"path", "info", "clear"}));
  cmd->add_option("trial", o->trial, "Trial folder or s3://bucket/prefix")->required();
  cmd->add_option("--store", o->store, "The store file, or 'auto' (the trial's store under the cache folder)")
      ->capture_default_str();
  cmd->callback([=] { *exit_code = run_store(*o); });
}

}  // namespace trialstat::cli
