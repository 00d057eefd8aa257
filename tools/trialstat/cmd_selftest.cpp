// SPDX-License-Identifier: Apache-2.0
// `trialstat selftest`: the first thing to run on a new (GPU) machine (issue 25, item 2). Every
// statistic on CUDA against the CPU twin where a device is visible, and always each SIMD level of
// the CPU twin against its baseline level, over generated data of every dtype and the edge cases
// (stats::run_selftest, include/trialstat/stats/selftest.hpp). Exit 0: every check passed; 1: a
// difference was found; 2: an error (bad option, --device cuda without a device).
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "tools/trialstat/commands.hpp"
#include "trialstat/config.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/stats/selftest.hpp"

namespace trialstat::cli {
namespace {

struct selftest_flags {
  std::string device = "auto";
  std::string format = "table";
  bool large = false;
};

/// "0", "count ±3", "1.2e-16" (relative) or "inf".
std::string largest_difference(const stats::selftest_check& c) {
  if (c.max_count_difference != 0) return fmt::format("count ±{}", c.max_count_difference);
  if (c.max_relative_difference == 0) return "0";
  return fmt::format("{:.2g}", c.max_relative_difference);
}

void print_table(const std::string& device_line, const stats::selftest_report& report) {
  fmt::print("{}\n", device_line);
  for (const auto& n : report.notes) fmt::print("{}\n", n);
  fmt::print("{:<14} {:<9} {:<20} {:>10} {:<6} {}\n", "statistic", "data", "backends", "elements", "result",
             "largest difference");
  std::size_t failed = 0;
  for (const auto& c : report.checks) {
    failed += c.passed ? 0 : 1;
    fmt::print("{:<14} {:<9} {:<20} {:>10} {:<6} {}\n", c.statistic, c.data_case, c.backends, c.num_elements,
               c.passed ? "ok" : "FAIL", largest_difference(c));
  }
  for (const auto& c : report.checks) {
    if (!c.passed) fmt::print("FAIL {} {} {}: {}\n", c.statistic, c.data_case, c.backends, c.mismatch);
  }
  if (failed == 0) {
    fmt::print("selftest: all {} checks passed\n", report.checks.size());
  } else {
    fmt::print("selftest: {} of {} checks FAILED\n", failed, report.checks.size());
  }
}

std::string json_number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string("null");  // null: +Inf (NaN vs number)
}

void print_json(const std::string& backend, const std::string& reason, const stats::selftest_report& report) {
  std::string out = fmt::format("{{\"backend\": {}, \"reason\": {}, \"passed\": {}, \"notes\": [", json_string(backend),
                                json_string(reason), report.passed() ? "true" : "false");
  for (std::size_t i = 0; i < report.notes.size(); ++i) out += (i ? ", " : "") + json_string(report.notes[i]);
  out += "],\n \"checks\": [";
  for (std::size_t i = 0; i < report.checks.size(); ++i) {
    const auto& c = report.checks[i];
    out += fmt::format(
        "{}\n  {{\"statistic\": {}, \"data\": {}, \"backends\": {}, \"elements\": {}, \"passed\": {}, "
        "\"max_count_difference\": {}, \"max_relative_difference\": {}, \"mismatch\": {}}}",
        i ? "," : "", json_string(c.statistic), json_string(c.data_case), json_string(c.backends), c.num_elements,
        c.passed ? "true" : "false", c.max_count_difference, json_number(c.max_relative_difference),
        json_string(c.mismatch));
  }
  out += "]}\n";
  fmt::print("{}", out);
}

int run_selftest(const selftest_flags& flags) {
  if (flags.format != "table" && flags.format != "json") {
    return report_error(status(error_code::invalid_argument, "--format must be table or json"));
  }
  // "cuda" without a device is an error here (exit 2), never a CPU run.
  auto resolved = frontend::resolve_device(flags.device);
  if (!resolved) return report_error(resolved.error_status());
  stats::selftest_options options;
  options.compare_cuda = resolved->backend == stats::backend::cuda;
  options.large = flags.large;
  const std::string device_line =
      options.compare_cuda
          ? fmt::format("device: cuda ({}): comparing CUDA against the CPU twin, and each CPU SIMD level against "
                        "the baseline", resolved->reason)
          : fmt::format("device: cpu ({}); {}: running the CPU-only checks (each CPU SIMD level against the "
                        "baseline)",
                        resolved->reason,
                        !TRIALSTAT_HAS_CUDA             ? "this build has no CUDA backend"
                        : stats::cuda_device_available() ? "CUDA not selected"
                                                         : "no CUDA device visible");
  auto report = stats::run_selftest(options);
  if (!report) return report_error(report.error_status());
  if (flags.format == "json") {
    print_json(std::string(stats::backend_name(resolved->backend)), resolved->reason, *report);
  } else {
    print_table(device_line, *report);
  }
  return report->passed() ? 0 : 1;
}

}  // namespace

void add_selftest_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "selftest", "Check every statistic: CUDA against the CPU twin (where a device is visible) and each CPU SIMD "
                  "level against the baseline, over generated data of every dtype and edge case");
  auto flags = std::make_shared<selftest_flags>();
  cmd->add_option("--device", flags->device,
                  "auto (CUDA against the CPU where a device is visible), cpu (CPU levels only) or cuda (an error "
                  "without a device)")
      ->capture_default_str();
  cmd->add_option("--format", flags->format, "table or json")->capture_default_str();
  cmd->add_flag("--large", flags->large,
                "Also a 2^31+4099-element tensor (index arithmetic past 2^31) when host and device memory allow; "
                "skipped with a note otherwise");
  cmd->callback([=] { *exit_code = run_selftest(*flags); });
}

}  // namespace trialstat::cli
