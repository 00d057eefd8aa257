// SPDX-License-Identifier: Apache-2.0
// `trialstat info TRIAL`: workers, steps per mode, tensors per collection, completeness, backend.
#include <fmt/format.h>

#include <algorithm>

#include "tools/trialstat/commands.hpp"
#include "trialstat/distributed/world.hpp"

namespace trialstat::cli {
namespace {

std::string step_summary(const std::vector<int64_t>& steps) {
  if (steps.empty()) return "none";
  return fmt::format("{} ({}..{})", steps.size(), steps.front(), steps.back());
}

int run_info(const std::string& path, const std::string& device) {
  auto opened = open_trial(path);  // under mpirun every rank loads its share of the catalog
  if (!opened) return report_error(opened.error_status());
  if (distributed::world().rank() != 0) return 0;  // rank 0 alone prints it
  const trial::catalog& trial = *opened;

  fmt::print("trial:          {}\n", trial.location());
  fmt::print("training ended: {}\n", trial.training_ended() ? "yes (training_job_end.ts)" : "no");
  std::vector<std::string> worker_names;
  for (auto id : trial.sorted_worker_ids()) worker_names.push_back(trial.workers()[id]);
  fmt::print("workers:        {} seen, {} expected: {}\n", worker_names.size(), trial.num_workers(),
             fmt::join(worker_names, ", "));
  fmt::print("steps:          GLOBAL {}\n", step_summary(trial.steps(mode::global, true)));
  for (mode m : trial.modes()) {
    fmt::print("                {:<7} {} mode steps\n", mode_name(m), step_summary(trial.steps(m, true)));
  }
  std::vector<int64_t> incomplete;
  for (const auto& info : trial.step_infos()) {
    if (!trial.is_complete(info.step)) incomplete.push_back(info.step);
  }
  fmt::print("complete:       last complete step {}", trial.last_complete_step());
  if (incomplete.empty()) {
    fmt::print(", every step complete\n");
  } else {
    fmt::print(", {} incomplete step(s):", incomplete.size());
    for (std::size_t i = 0; i < std::min<std::size_t>(incomplete.size(), 10); ++i) {
      const auto* info = trial.find_step(incomplete[i]);
      fmt::print(" {} ({} of {} workers)", incomplete[i], info->workers.size(), trial.num_workers());
    }
    fmt::print("{}\n", incomplete.size() > 10 ? " ..." : "");
  }
  fmt::print("tensors:        {}\n", trial.tensor_names().size());
  fmt::print("collections:\n");
  for (const auto& c : trial.collections()) {
    const std::string name = c.name;
    auto members = trial.select(std::vector<std::string>{name}, {});
    if (!members) continue;
    std::vector<std::string> names;
    for (auto id : *members) names.push_back(trial.tensor_names()[id]);
    fmt::print("  {:<22} {:>4} tensor(s){}{}\n", c.name, names.size(), names.empty() ? "" : ": ",
               fmt::join(names.begin(), names.begin() + std::min<std::size_t>(names.size(), 6), ", "),
               names.size() > 6 ? ", ..." : "");
  }
  if (!trial.warnings().empty()) fmt::print("warnings:       {} (see stderr)\n", trial.warnings().size());

  auto backend = frontend::resolve_device(device);
  if (!backend) return report_error(backend.error_status());
  fmt::print("backend:        {}\n", backend->reason);
  return 0;
}

}  // namespace

void add_info_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("info", "Workers, steps per mode, tensors per collection, completeness");
  auto trial_path = std::make_shared<std::string>();
  auto device = std::make_shared<std::string>("auto");
  cmd->add_option("trial", *trial_path, "Trial folder or s3://bucket/prefix")->required();
  add_source_options(cmd);
  cmd->add_option("--device", *device, "Statistics backend: auto, cpu or cuda")->capture_default_str();
  cmd->callback([=] {
    *exit_code = run_info(*trial_path, *device);
  });
}

}  // namespace trialstat::cli
