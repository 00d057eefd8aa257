// SPDX-License-Identifier: Apache-2.0
// Rule results as text or JSON Lines (nlohmann-json: one object per rule, not a hot path).
#include "trialstat/report/rule_report.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "host/pipeline/skipped_records_json.hpp"

namespace trialstat::report {
namespace {

nlohmann::json number_or_string(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

void write_json(std::span<const pipeline::rule_result> results, std::FILE* out) {
  for (const auto& r : results) {
    nlohmann::json row;
    row["rule"] = r.rule_name;
    row["configuration_name"] = r.configuration_name;
    row["status"] = rules::rule_status_name(r.status);
    if (!r.status_details.empty()) row["status_details"] = r.status_details;
    if (!r.warnings.empty()) row["warnings"] = r.warnings;
    auto& findings = row["findings"] = nlohmann::json::array();
    for (const auto& f : r.findings) {
      findings.push_back({{"step", f.step},
                          {"mode", mode_name(f.mode)},
                          {"mode_step", f.mode_step},
                          {"tensor", f.tensor},
                          {"worker", f.worker},
                          {"value", number_or_string(f.value)},
                          {"message", f.message}});
    }
    pipeline::detail::add_skipped_records_json(r, row);
    fmt::print(out, "{}\n", row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
}

void write_text(std::span<const pipeline::rule_result> results, std::FILE* out,
                std::size_t max_findings) {
  for (const auto& r : results) {
    const std::string label = r.configuration_name == r.rule_name
                                  ? r.rule_name
                                  : fmt::format("{} ({})", r.configuration_name, r.rule_name);
    fmt::print(out, "{:<40} {}", label, rules::rule_status_name(r.status));
    if (!r.findings.empty()) fmt::print(out, "  {} finding(s)", r.findings.size());
    fmt::print(out, "\n");
    if (!r.status_details.empty()) fmt::print(out, "    {}\n", r.status_details);
    for (const auto& w : r.warnings) fmt::print(out, "    warning: {}\n", w);
    if (!r.skipped.empty()) {
      fmt::print(out, "    {} record(s) of its tensors could not be read: the verdict did not see "
                      "them (first: {})\n",
                 r.skipped.size(), r.skipped.front().reason.to_string());
    }
    std::size_t shown = 0;
    for (const auto& f : r.findings) {
      if (max_findings != 0 && shown == max_findings) {
        fmt::print(out, "    ... {} more (use --format json for all)\n", r.findings.size() - shown);
        break;
      }
      fmt::print(out, "    step {} ({} {})", f.step, mode_name(f.mode), f.mode_step);
      if (!f.tensor.empty()) fmt::print(out, " {}", f.tensor);
      if (!f.worker.empty()) fmt::print(out, " [{}]", f.worker);
      fmt::print(out, ": {}\n", f.message);
      ++shown;
    }
  }
}

}  // namespace

void write_rule_results(std::span<const pipeline::rule_result> results, output_format format,
                        std::FILE* out, std::size_t max_findings_per_rule) {
  if (format == output_format::json) {
    write_json(results, out);
  } else {
    write_text(results, out, max_findings_per_rule);
  }
  std::fflush(out);
}

}  // namespace trialstat::report
