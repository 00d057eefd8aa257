// SPDX-License-Identifier: Apache-2.0
/// @file rule_report.hpp
/// @brief Writes rule results (`trialstat rules`): human text, or JSON Lines with one object per
/// rule: `{rule, configuration_name, status, status_details?, warnings?, findings: [{step, mode,
/// mode_step, tensor, worker, value, message}]}` (text: each warning on a "warning:" line).
#pragma once

#include <cstdio>
#include <span>

#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/report/statistics_writer.hpp"

namespace trialstat::report {

/// @brief Write `results` to `out` as text (table/csv: text) or JSON Lines (json).
/// `max_findings_per_rule` limits the text listing (0 = all); JSON always lists all.
void write_rule_results(std::span<const pipeline::rule_result> results, output_format format,
                        std::FILE* out, std::size_t max_findings_per_rule = 20);

}  // namespace trialstat::report
