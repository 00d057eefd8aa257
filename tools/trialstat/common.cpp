// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <charconv>

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
  const auto bad = [&] {
    return status(error_code::invalid_argument,
                  fmt::format("--steps '{}': expected A:B, A:, :B or A (global steps)", text));
  };
  step_range range;
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    const auto step = parse_int(text);
    if (!step) return bad();
    range.begin = *step;
    range.end = *step + 1;
    return range;
  }
  const std::string_view first(text.data(), colon);
  const std::string_view second(text.data() + colon + 1, text.size() - colon - 1);
  if (!first.empty() && !(range.begin = parse_int(first))) return bad();
  if (!second.empty() && !(range.end = parse_int(second))) return bad();
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

int report_error(const status& s) {
  fmt::print(stderr, "trialstat: {}\n", s.to_string());
  return 2;
}

}  // namespace trialstat::cli
