// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>
#include <tuple>

#include "tools/trialstat/commands.hpp"
#include "trialstat/distributed/catalog_group.hpp"
#include "trialstat/distributed/world.hpp"
#include "trialstat/frontend/open_catalog.hpp"
#include "trialstat/rules/rule_config.hpp"

namespace trialstat::cli {
namespace {

std::optional<int64_t> parse_int(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

result<step_range> parse_step_range(const std::string& text) {
  const auto bad = [&](std::string_view why) {
    return status(error_code::invalid_argument,
                  fmt::format("--steps '{}': {}", text, why));
  };
  constexpr std::string_view syntax = "expected A:B, A:, :B or A (global steps)";
  step_range range;
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    const auto step = parse_int(text);
    if (!step) return bad(syntax);
    if (*step < 0) return bad("steps are never negative");
    if (*step == std::numeric_limits<int64_t>::max()) return bad("step is too large");
    range.begin = *step;
    range.end = *step + 1;
    return range;
  }
  const std::string_view first(text.data(), colon);
  const std::string_view second(text.data() + colon + 1, text.size() - colon - 1);
  if (!first.empty() && !(range.begin = parse_int(first))) return bad(syntax);
  if (!second.empty() && !(range.end = parse_int(second))) return bad(syntax);
  if ((range.begin && *range.begin < 0) || (range.end && *range.end < 0)) {
    return bad("steps are never negative");
  }
  if (range.end && *range.end <= range.begin.value_or(0)) {
    return bad(fmt::format("the range is empty (end {} is not greater than begin {})", *range.end,
                           range.begin.value_or(0)));
  }
  return range;
}

namespace {

/// The command line's source settings (one command runs per process).
struct source_flags {
  bool no_sign_request = false;
  int max_in_flight = 0;
  int64_t coalesce_gap_bytes = -1;
  int64_t budget_mb = 0;
  int max_attempts = 0;
  int timeout_ms = 0;
};
source_flags& flags() {
  static source_flags f;
  return f;
}

}  // namespace

void add_source_options(CLI::App* cmd) {
  source_flags& f = flags();
  cmd->add_flag("--no-sign-request", f.no_sign_request, "S3: unsigned requests (public buckets)");
  cmd->add_option("--s3-max-in-flight", f.max_in_flight, "S3: requests in flight at once (default 32)");
  cmd->add_option("--s3-coalesce-gap", f.coalesce_gap_bytes,
                  "S3: fetch record ranges closer than this many bytes together (default 65536)");
  cmd->add_option("--s3-budget-mb", f.budget_mb, "S3: MiB fetched ahead of the reader at most (default 128)");
  cmd->add_option("--s3-max-attempts", f.max_attempts, "S3: tries per request (default 6)");
  cmd->add_option("--s3-timeout-ms", f.timeout_ms, "S3: per-request timeout (default 120000)");
}

io::source_options command_source_options() {
  io::source_options options;
  if (auto env = io::s3_options_from_environment()) {
    options.s3 = *env;
  } else {
    fmt::print(stderr, "warning: {} (defaults used)\n", env.error_status().message());
  }
  const source_flags& f = flags();
  if (f.no_sign_request) options.s3.no_sign_request = true;
  if (f.max_in_flight > 0) options.s3.max_in_flight = f.max_in_flight;
  if (f.coalesce_gap_bytes >= 0) options.s3.coalesce_gap_bytes = static_cast<uint64_t>(f.coalesce_gap_bytes);
  if (f.budget_mb > 0) options.s3.in_flight_budget_bytes = static_cast<uint64_t>(f.budget_mb) << 20;
  if (f.max_attempts > 0) options.s3.max_attempts = f.max_attempts;
  if (f.timeout_ms > 0) options.s3.request_timeout_ms = f.timeout_ms;
  options.s3.progress = true;  // the catalog's S3 reads, while stderr is a terminal
  return options;
}

void report_transfers(const trial::catalog& trial) {
  const std::string summary = trial.source().transfer_summary();
  if (!summary.empty()) fmt::print(stderr, "{}\n", summary);
}

status apply_step_range(const std::string& text, pipeline::pipeline_options& options) {
  if (text.empty()) return status::success();
  auto range = parse_step_range(text);
  if (!range) return range.error_status();
  options.step_begin = range->begin;
  options.step_end = range->end;
  return status::success();
}

void add_rule_flags(CLI::App* cmd, std::vector<std::string>* rule_names,
                    std::vector<std::string>* params, std::vector<std::string>* order,
                    std::function<void()> run) {
  auto* rule_opt = cmd->add_option("--rule", *rule_names,
                                   "Built-in rule name, e.g. VanishingGradient (repeatable); default: " +
                                       fmt::format("{}", fmt::join(frontend::default_rule_names(), ", ")));
  auto* param_opt = cmd->add_option("--param", *params, "key=value for the preceding --rule (repeatable)");
  cmd->callback([=] {
    for (const CLI::Option* opt : cmd->parse_order()) {
      if (opt == rule_opt) order->emplace_back("rule");
      if (opt == param_opt) order->emplace_back("param");
    }
    run();
  });
}

int rules_exit_code(std::span<const pipeline::rule_result> results) {
  const auto any = [&](rules::rule_status s) {
    return std::any_of(results.begin(), results.end(), [&](const auto& r) { return r.status == s; });
  };
  if (any(rules::rule_status::error)) return 2;
  return any(rules::rule_status::issues_found) ? 1 : 0;
}

result<trial::catalog> open_trial(const std::string& path) {
  trial::catalog_options options;
  options.source = command_source_options();
  // Under mpirun the ranks share the load: each parses 1/N of the index files.
  if (distributed::world().size() > 1) options.group = distributed::catalog_group(distributed::world());
  auto catalog = trial::catalog::open(path, options);
  if (!catalog) return catalog;
  if (distributed::world().rank() != 0) return catalog;  // rank 0 reports them once
  for (const auto& warning : catalog->warnings()) {
    fmt::print(stderr, "warning: {}\n", frontend::load_warning_text(warning));
  }
  return catalog;
}

result<std::vector<rules::rule_config_entry>> parse_rule_flags(
    const std::vector<std::string>& rule_names, const std::vector<std::string>& params,
    const std::vector<std::string>& order) {
  std::vector<rules::rule_config_entry> specs;
  std::size_t next_rule = 0, next_param = 0;
  for (const std::string& kind : order) {
    if (kind == "rule") {
      rules::rule_config_entry& entry = specs.emplace_back();
      entry.configuration_name = entry.rule_name = rule_names[next_rule++];
      continue;
    }
    const std::string& text = params[next_param++];
    const auto eq = text.find('=');
    if (specs.empty()) {
      return status(error_code::invalid_argument,
                    fmt::format("--param {}: give --rule NAME before its --param", text));
    }
    if (eq == std::string::npos || eq == 0) {
      return status(error_code::invalid_argument, fmt::format("--param '{}': expected key=value", text));
    }
    specs.back().parameters[text.substr(0, eq)] = text.substr(eq + 1);
  }
  return specs;
}

result<std::vector<rules::rule_config_entry>> rule_configs_from_flags(
    const std::string& config_path, const std::vector<std::string>& rule_names,
    const std::vector<std::string>& params, const std::vector<std::string>& order) {
  std::vector<rules::rule_config_entry> configs;
  if (!config_path.empty()) {
    auto loaded = rules::load_rule_config(config_path);
    if (!loaded) return loaded.error_status();
    configs = std::move(*loaded);
  }
  auto flagged = parse_rule_flags(rule_names, params, order);
  if (!flagged) return flagged.error_status();
  for (auto& entry : *flagged) configs.push_back(std::move(entry));
  if (configs.empty()) return frontend::default_rule_configs();
  return configs;
}

void add_progress_flags(CLI::App* cmd, progress_mode* mode) {
  auto* group = cmd->add_option_group("progress");
  group->add_flag_callback("--progress", [mode] { *mode = progress_mode::on; },
                           "Show progress (steps, MB, rate, ETA) on stderr even when it is not a terminal");
  group->add_flag_callback("--no-progress", [mode] { *mode = progress_mode::off; },
                           "Never show progress (default: shown when stderr is a terminal)");
  group->require_option(0, 1);
}

void add_device_flags(CLI::App* cmd, frontend::device_options* options, bool with_pinned_mb) {
  cmd->add_option("--device", options->device, "Statistics backend: auto, cpu or cuda")->capture_default_str();
  cmd->add_option("--verify-device", options->verify_device,
                  fmt::format("CUDA backend: check results against the CPU twin — off, first (the first step) or "
                              "sampled (the first, every {}th and the last step; records held until the next check "
                              "passes). On a difference or a CUDA error: a warning, and the run finishes on the CPU. "
                              "Default: TRIALSTAT_VERIFY_DEVICE, else sampled",
                              pipeline::default_verify_interval))
      ->check(CLI::IsMember({"off", "first", "sampled"}));
  if (with_pinned_mb) {
    cmd->add_option("--pinned-mb", options->pinned_mb,
                    "CUDA backend: pinned host staging memory in MiB (8 buffers; a tensor larger than "
                    "one buffer is split)")->capture_default_str();
  }
}

std::unique_ptr<progress_reporter> make_progress(progress_mode mode, std::string label) {
  return make_terminal_progress(mode, std::move(label), stderr);
}

std::size_t report_skipped(std::span<const pipeline::rule_result> results) {
  std::set<std::tuple<std::string, uint64_t, bool, std::string, int64_t>> seen;
  for (const auto& r : results) {
    for (const auto& k : r.skipped) {
      if (!seen.emplace(k.file, k.offset_bytes, k.saved_reduction, k.tensor, k.step).second) continue;
      fmt::print(stderr, "warning: {} at step {} [{}]{}: {}\n", k.tensor, k.step, k.worker,
                 k.saved_reduction ? " (saved reduction)" : "", k.reason.to_string());
    }
  }
  if (!seen.empty()) {
    fmt::print(stderr,
               "trialstat: {} record(s) could not be read; the rules' verdicts did not see them "
               "(--format json lists them per rule; --strict makes this an error)\n",
               seen.size());
  }
  return seen.size();
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

int report_error(const status& s) {
  if (distributed::world().size() > 1) distributed::world().abort(s, 2);
  fmt::print(stderr, "trialstat: {}\n", s.to_string());
  return 2;
}

status check_runs_distributed(int argc, char** argv) {
  if (distributed::world().size() <= 1) return status::success();
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg.starts_with('-')) continue;
    if (arg == "watch" || arg == "example") {
      return status(error_code::invalid_argument,
                    fmt::format("'trialstat {}' runs as one process: start it without mpirun", arg));
    }
    break;
  }
  return status::success();
}

}  // namespace trialstat::cli
