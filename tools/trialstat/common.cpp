// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <set>
#include <tuple>

#include "tools/trialstat/commands.hpp"

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

result<trial::catalog> open_trial(const std::string& path) {
  auto catalog = trial::catalog::open(path);
  if (!catalog) return catalog;
  for (const auto& warning : catalog->warnings()) {
    fmt::print(stderr, "warning: {}: {}\n", warning.file.string(), warning.problem.to_string());
  }
  return catalog;
}

result<pipeline::pipeline_options> make_pipeline_options(const std::string& device) {
  auto choice = pipeline::parse_device_choice(device);
  if (!choice) return choice.error_status();
  auto resolved = pipeline::resolve_backend(*choice);
  if (!resolved) return resolved.error_status();
  pipeline::pipeline_options options;
  options.backend = resolved->backend;
  return options;
}

pipeline::rule_invocation make_rule_invocation(const std::string& configuration_name,
                                               const std::string& rule_name,
                                               const rules::rule_parameters& params) {
  pipeline::rule_invocation invocation;
  invocation.configuration_name = configuration_name;
  auto made = rules::make_rule(rule_name, params);
  if (made) {
    invocation.rule = std::move(*made);
  } else {
    invocation.error = made.error_status();
  }
  return invocation;
}

result<std::vector<std::pair<std::string, rules::rule_parameters>>> parse_rule_flags(
    const std::vector<std::string>& rule_names, const std::vector<std::string>& params,
    const std::vector<std::string>& order) {
  std::vector<std::pair<std::string, rules::rule_parameters>> specs;
  std::size_t next_rule = 0, next_param = 0;
  for (const std::string& kind : order) {
    if (kind == "rule") {
      specs.emplace_back(rule_names[next_rule++], rules::rule_parameters{});
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
    specs.back().second[text.substr(0, eq)] = text.substr(eq + 1);
  }
  return specs;
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

int report_error(const status& s) {
  fmt::print(stderr, "trialstat: {}\n", s.to_string());
  return 2;
}

}  // namespace trialstat::cli
