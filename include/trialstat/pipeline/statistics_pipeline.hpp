// SPDX-License-Identifier: Apache-2.0
/// @file statistics_pipeline.hpp
/// @brief Drives stages 4–5 of DESIGN.md for a read plan: for every saved global step in order,
/// reads the event files of that step once (whole file when most of it is needed, byte ranges
/// otherwise), decodes the requested records, computes their statistics as one segmented batch
/// per event file, and hands the step's records to a callback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "trialstat/plan/read_plan.hpp"
#include "trialstat/plan/statistics_record.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/status.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::pipeline {

/// @brief `--device`: which statistics backend to use.
enum class device_choice : uint8_t {
  automatic,  ///< CUDA when built and a device is visible, else CPU
  cpu,
  cuda,       ///< CUDA or an error (never a silent fallback)
};

/// @brief Parse "auto" / "cpu" / "cuda". Errors: invalid_argument.
[[nodiscard]] result<device_choice> parse_device_choice(std::string_view text);

/// @brief The backend a choice resolves to on this machine, with the reason in words
/// (e.g. "cpu: built without CUDA"). Errors: invalid_argument when `cuda` is asked for and is
/// not built or no device is visible. `TRIALSTAT_FORCE_BACKEND=cpu|cuda` overrides `automatic`.
struct resolved_backend {
  stats::backend backend = stats::backend::cpu;
  std::string reason;
};
[[nodiscard]] result<resolved_backend> resolve_backend(device_choice choice);

/// @brief Options of a statistics run.
struct pipeline_options {
  stats::backend backend = stats::backend::cpu;
  /// Event files larger than this are read by byte ranges instead of whole (bytes).
  std::size_t whole_file_limit_bytes = std::size_t{1} << 30;
  /// Global steps [step_begin, step_end) to visit, intersected with the plan's range.
  std::optional<int64_t> step_begin;
  std::optional<int64_t> step_end;
};

/// @brief Counters of one run (for reports and benchmarks).
struct pipeline_counters {
  int64_t steps = 0;              ///< global steps visited
  int64_t records = 0;            ///< statistics records produced
  int64_t failed_records = 0;     ///< records whose raw tensor could not be used (raw_status)
  int64_t bytes_read = 0;         ///< event-file bytes read
  int64_t tensor_bytes = 0;       ///< tensor content bytes reduced
};

/// @brief Called once per saved global step (ascending) with all records of that step.
/// The records are valid only during the call.
using step_callback = std::function<void(const plan::step_statistics&)>;

/// @brief Compute the statistics `plan` asks for over `trial`, step by step.
///
/// Records come in (step, worker, index order). A record whose bytes are corrupt, truncated or of
/// an unsupported dtype has `raw_status` set and no statistics: it costs only itself. Pairwise
/// statistics compare with the last `history_depth` saved steps of the same tensor and worker
/// (copies kept in host memory: O(requested tensors × depth), independent of trial length).
/// @return counters; errors: only failures that stop the whole run (io_error listing the trial,
///   invalid_argument for an unusable backend).
[[nodiscard]] result<pipeline_counters> run_statistics(const trial::catalog& trial,
                                                       const plan::read_plan& plan,
                                                       const pipeline_options& options,
                                                       const step_callback& on_step);

}  // namespace trialstat::pipeline
