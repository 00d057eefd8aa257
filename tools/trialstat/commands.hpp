// SPDX-License-Identifier: Apache-2.0
// The `trialstat` subcommands. Each `add_*_command` registers its options on `app` and sets
// `*exit_code` when it runs: 0 success / no issues, 1 issues found (rules), 2 error.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trialstat/pipeline/rule_runner.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/status.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::cli {

void add_info_command(CLI::App& app, int* exit_code);
void add_stats_command(CLI::App& app, int* exit_code);
void add_rules_command(CLI::App& app, int* exit_code);
void add_watch_command(CLI::App& app, int* exit_code);
void add_example_command(CLI::App& app, int* exit_code);

/// Global step range [begin, end) parsed from "A:B", "A:", ":B" or "A" (= A:A+1).
struct step_range {
  std::optional<int64_t> begin;
  std::optional<int64_t> end;
};
[[nodiscard]] result<step_range> parse_step_range(const std::string& text);

/// Open a trial, printing load warnings to stderr. Errors: as catalog::open.
[[nodiscard]] result<trial::catalog> open_trial(const std::string& path);

/// Resolve `--device`, returning pipeline options for it. Errors: invalid_argument.
[[nodiscard]] result<pipeline::pipeline_options> make_pipeline_options(const std::string& device);

/// Build a rule by name; a failure is kept in the invocation (the rule's status becomes Error).
[[nodiscard]] pipeline::rule_invocation make_rule_invocation(const std::string& configuration_name,
                                                             const std::string& rule_name,
                                                             const rules::rule_parameters& params);

/// `--rule A --param k=v --rule B ...` (options in command-line `order`, "rule"/"param"): each
/// --param belongs to the --rule before it. Errors: invalid_argument for a --param before any
/// --rule or without `key=value`.
[[nodiscard]] result<std::vector<std::pair<std::string, rules::rule_parameters>>> parse_rule_flags(
    const std::vector<std::string>& rule_names, const std::vector<std::string>& params,
    const std::vector<std::string>& order);

/// Print each record the rules could not read (file, byte offset, reason; each once) and a count
/// to stderr. Returns the number of distinct records.
std::size_t report_skipped(std::span<const pipeline::rule_result> results);

/// Print "trialstat: <status>" to stderr and return exit code 2.
int report_error(const status& s);

}  // namespace trialstat::cli
