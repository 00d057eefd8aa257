// SPDX-License-Identifier: Apache-2.0
// The `trialstat` subcommands. Each `add_*_command` registers its options on `app` and sets
// `*exit_code` when it runs: 0 success / no issues, 1 issues found (rules), 2 error.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/frontend/device_options.hpp"
#include "trialstat/frontend/rule_invocations.hpp"
#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/progress.hpp"
#include "trialstat/status.hpp"
#include "trialstat/store/store_source.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::cli {

void add_info_command(CLI::App& app, int* exit_code);
void add_stats_command(CLI::App& app, int* exit_code);
void add_rules_command(CLI::App& app, int* exit_code);
void add_watch_command(CLI::App& app, int* exit_code);
void add_example_command(CLI::App& app, int* exit_code);
void add_tensorboard_command(CLI::App& app, int* exit_code);
void add_report_command(CLI::App& app, int* exit_code);
void add_bench_command(CLI::App& app, int* exit_code);
void add_selftest_command(CLI::App& app, int* exit_code);
void add_store_command(CLI::App& app, int* exit_code);

/// `--store PATH|auto|off` on `cmd` (default: $TRIALSTAT_STORE, else auto, the user's cache
/// folder; README "Statistics store").
void add_store_option(CLI::App* cmd, std::string* choice);
/// One line on stderr: what came from the statistics store (`s.served`) and what was read
/// (`s.read` records, `s.bytes_read` bytes), what was written; nothing when nothing was served.
void print_store_summary(const store::store_run_summary& s, const std::filesystem::path& path);

/// The statistics of one command: `distributed::run_statistics` (one process, or the merged
/// steps of MPI ranks) behind the statistics store unless `--store off`. A store that cannot be
/// used is a warning and the trial is read. Under mpirun with several ranks, rank 0 writes the
/// rows of the merged records and nothing is served (every rank reads its share of the trial).
class command_statistics {
 public:
  /// Made before the trial's catalog is opened: the store's rows for the steps of `options`
  /// are read meanwhile (`store::store_source::prefetch`).
  /// @param trial_location  the trial as the user gave it (a folder or s3:// location)
  /// @param ranks_share  the ranks compute the statistics together (`rules`, `stats`,
  ///   `tensorboard`); false: this process alone (`report`, on rank 0)
  command_statistics(const std::string& store_choice, std::string_view trial_location,
                     const pipeline::pipeline_options& options, bool ranks_share = true);
  ~command_statistics();
  /// The source to hand to the command (valid while this object lives).
  [[nodiscard]] pipeline::statistics_source source();
  /// One line on stderr: what came from the store and what was read (nothing without a store).
  void report() const;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

/// `--progress` / `--no-progress` on `cmd` (default: progress when stderr is a terminal).
void add_progress_flags(CLI::App* cmd, progress_mode* mode);
/// `--device`, `--verify-device`, and `--pinned-mb` when `with_pinned_mb` (commands that stream
/// large trials), into `options`.
void add_device_flags(CLI::App* cmd, frontend::device_options* options, bool with_pinned_mb);
/// The stderr progress line for `mode` (null when off: pass `.get()` to pipeline_options).
[[nodiscard]] std::unique_ptr<progress_reporter> make_progress(progress_mode mode, std::string label);

/// Global step range [begin, end) parsed from "A:B", "A:", ":B" or "A" (= A:A+1).
struct step_range {
  std::optional<int64_t> begin;
  std::optional<int64_t> end;
};
[[nodiscard]] result<step_range> parse_step_range(const std::string& text);

/// Register the trial-source options on a subcommand (S3: --no-sign-request and the --s3-*
/// tuning); they apply to every trial the command opens.
void add_source_options(CLI::App* cmd);
/// The source options set on the command line (TRIALSTAT_S3_* from the environment beneath).
[[nodiscard]] io::source_options command_source_options();

/// `--steps TEXT` into `options` (nothing when empty). Errors: as parse_step_range.
[[nodiscard]] status apply_step_range(const std::string& text, pipeline::pipeline_options& options);

/// `--rule NAME --param k=v ...`: registers both on `cmd` and, when the command runs, records
/// their command-line order into `*order` ("rule"/"param", for parse_rule_flags) before
/// calling `run`.
void add_rule_flags(CLI::App* cmd, std::vector<std::string>* rule_names,
                    std::vector<std::string>* params, std::vector<std::string>* order,
                    std::function<void()> run);

/// Exit status of rule results: 2 if a rule is Error, 1 if one found issues, else 0.
[[nodiscard]] int rules_exit_code(std::span<const pipeline::rule_result> results);

/// Open a trial (a folder or s3://bucket/prefix), printing load warnings to stderr.
/// Errors: as catalog::open.
[[nodiscard]] result<trial::catalog> open_trial(const std::string& path);

/// For an S3 trial, print what was transferred (requests, bytes, retries) to stderr.
void report_transfers(const trial::catalog& trial);

/// `--rule A --param k=v --rule B ...` (options in command-line `order`, "rule"/"param"): each
/// --param belongs to the --rule before it; each rule's configuration name is its name, and it
/// has no actions. Errors: invalid_argument for a --param before any --rule or without
/// `key=value`.
[[nodiscard]] result<std::vector<rules::rule_config_entry>> parse_rule_flags(
    const std::vector<std::string>& rule_names, const std::vector<std::string>& params,
    const std::vector<std::string>& order);

/// Print each record the rules could not read (file, byte offset, reason; each once) and a count
/// to stderr. Returns the number of distinct records.
std::size_t report_skipped(std::span<const pipeline::rule_result> results);

/// The rules of `trialstat rules` / `report` / `watch`: those of `config_path` (a SageMaker rule
/// config with its actions; "" = none), then those of --rule/--param (see parse_rule_flags),
/// else frontend::default_rule_configs(). Errors: the config's load errors; parse_rule_flags's.
[[nodiscard]] result<std::vector<rules::rule_config_entry>> rule_configs_from_flags(
    const std::string& config_path, const std::vector<std::string>& rule_names,
    const std::vector<std::string>& params, const std::vector<std::string>& order);

/// `text` as a JSON string literal (quotes, backslashes and control characters escaped).
[[nodiscard]] std::string json_string(std::string_view text);
/// Print "trialstat: <status>" to stderr and return exit code 2. Under mpirun with several
/// ranks, end the whole job instead (exit 2, the rank's message): the other ranks may be
/// waiting for this one.
int report_error(const status& s);

/// Under mpirun with several ranks, refuse the subcommands that run as one process only
/// (`watch`, `example`): invalid_argument. ok otherwise.
[[nodiscard]] status check_runs_distributed(int argc, char** argv);

}  // namespace trialstat::cli
