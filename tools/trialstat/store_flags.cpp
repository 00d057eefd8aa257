// SPDX-License-Identifier: Apache-2.0
// `--store PATH|auto|off` and the statistics source every reading command takes (issue 26).
#include <fmt/format.h>

#include <cstdlib>

#include "tools/trialstat/commands.hpp"
#include "trialstat/distributed/distributed_statistics.hpp"
#include "trialstat/distributed/world.hpp"
#include "trialstat/frontend/store_choice.hpp"
#include "trialstat/store/statistics_store.hpp"
#include "trialstat/store/store_source.hpp"

namespace trialstat::cli {

void add_store_option(CLI::App* cmd, std::string* choice) {
  if (const char* given = std::getenv("TRIALSTAT_STORE"); given != nullptr && *given != '\0') *choice = given;
  cmd->add_option("--store", *choice,
                  "Statistics store: a SQLite file, 'auto' (under $XDG_CACHE_HOME/trialstat/, keyed by the "
                  "trial's location) or 'off'; default: $TRIALSTAT_STORE, else auto. Statistics it holds for "
                  "the same records and request are not read again")
      ->capture_default_str();
}

struct command_statistics::state {
  std::unique_ptr<store::store_source> store;
  bool ranks_share = true;
};

command_statistics::command_statistics(const std::string& store_choice, std::string_view trial_location,
                                       const pipeline::pipeline_options& options, bool ranks_share)
    : state_(std::make_unique<state>()) {
  distributed::process_world& world = distributed::world();
  state_->ranks_share = ranks_share;
  if (world.size() > 1 && world.rank() != 0) return;  // rank 0 alone writes the store
  auto store = frontend::store_options(store_choice, trial_location, [](const status& s) {
    fmt::print(stderr, "warning: {}\n", s.message());
  });
  if (!store) {
    fmt::print(stderr, "warning: {} (the trial is read)\n", store.error_status().message());
    return;
  }
  if (!*store) return;  // --store off
  (*store)->serve = !(ranks_share && world.size() > 1);
  state_->store = std::make_unique<store::store_source>(
      std::move(**store), ranks_share ? pipeline::statistics_source(distributed::run_statistics)
                                      : pipeline::statistics_source());
  // The store's rows are read while the command opens the trial's catalog.
  state_->store->prefetch(trial_location, options.step_begin, options.step_end);
}

command_statistics::~command_statistics() = default;

pipeline::statistics_source command_statistics::source() {
  if (state_->store) return state_->store->source();
  if (!state_->ranks_share) return {};  // pipeline::run_statistics
  return distributed::run_statistics;
}

void command_statistics::report() const {
  if (!state_->store) return;
  print_store_summary(state_->store->summary(), state_->store->path());
}

void print_store_summary(const store::store_run_summary& s, const std::filesystem::path& path) {
  if (s.served == 0) return;  // a cold run says nothing: its outputs are those of --store off
  fmt::print(stderr, "trialstat: store: {} record(s) from {}, {} read from the trial ({} bytes), {} written{}\n",
             s.served, path.string(), s.read, s.bytes_read, s.written,
             s.small > 0 ? fmt::format(" ({} small record(s) read: their event files hold no larger record the store keeps, and they "
                                       "cost less to read than to store; "
                                       "TRIALSTAT_STORE_MIN_RECORD_BYTES, default {} for a local trial)",
                                       s.small, store::default_min_record_bytes)
                         : std::string());
}

}  // namespace trialstat::cli
