// SPDX-License-Identifier: Apache-2.0
/// @file html_report.hpp
/// @brief `trialstat report`: one self-contained HTML file (opens offline: the charting library,
/// BokehJS, is inlined with its licence; the data is embedded as JSON) with
///   - the trial: workers, steps per mode, completeness, tensors per collection, backend, records
///     that could not be read;
///   - every rule's status and findings;
///   - per collection, small multiples over steps for each tensor (l2; mean ± std with the
///     min/max band; the weight-update ratio on a log axis for `weights`/`biases`), one line per
///     worker, steps with NaN/±Inf marked, findings marked at their step;
///   - the log-scale histogram (stats/log_histogram.hpp) as a heatmap over steps for the tensors
///     the rules flagged and those matching `heatmap_regexes`.
///
/// Cost: one pass for the rules and the curves together (the report's statistics join the rules'
/// read plan, like `trialstat rules` with one more rule), then, when there are heatmaps, a second
/// pass that reads only the heatmap tensors at only the displayed steps: one saved step in ten,
/// at least 16 and at most `max_heatmap_steps`, spread evenly, plus the step where each rule first
/// flagged the tensor. Memory and size are bounded: each curve keeps at
/// most about 2 × `max_points` evenly spaced steps (stride doubling) plus every step with a
/// non-finite value, a finding or an unreadable record; down-sampling is for display only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "trialstat/pipeline/rule_session.hpp"
#include "trialstat/status.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::report {

/// @brief What the report shows.
struct html_report_options {
  std::vector<std::string> heatmap_regexes;  ///< `--tensor-regex`: heatmaps for these too
  pipeline::pipeline_options pipeline;       ///< backend, step range, progress
  /// Where both passes take their statistics (empty: `pipeline::run_statistics`), e.g. the
  /// statistics store's source (issue 26). Called on this process alone.
  pipeline::statistics_source statistics;
  std::string backend_description;           ///< e.g. "cpu: built without CUDA" (shown as is)
  int max_points = 300;                      ///< curve points kept evenly (see the file comment)
  int max_heatmap_steps = 120;               ///< most heatmap columns (see the file comment)
  int max_heatmaps = 48;                     ///< tensors with a heatmap, flagged ones first
  std::size_t max_findings_listed = 1000;    ///< per rule in the findings table (all are counted)
};

/// @brief What was written.
struct html_report_summary {
  std::vector<pipeline::rule_result> results;  ///< as `evaluate_rules` returns them
  int64_t steps = 0;
  int64_t failed_records = 0;
  int64_t tensors_plotted = 0;
  int64_t heatmaps = 0;
  uint64_t bytes = 0;                           ///< size of the HTML file
};

/// @brief Whether this build can write reports (BokehJS was found when it was configured).
[[nodiscard]] bool html_report_available() noexcept;

/// @brief Evaluate `rules` and write the report to `out_path` (through `<out_path>.tmp`).
/// `warn` gets each record that could not be read. @return the summary (rules' statuses
/// included); errors: invalid_argument (bad regex; no charting library in this build), io_error,
/// and the pipeline's run-wide failures.
[[nodiscard]] result<html_report_summary> write_html_report(
    const trial::catalog& trial, std::vector<pipeline::rule_invocation> rules,
    const html_report_options& options, const std::filesystem::path& out_path,
    const std::function<void(const status&)>& warn = {});

}  // namespace trialstat::report
