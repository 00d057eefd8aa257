// SPDX-License-Identifier: Apache-2.0
/// @file fault_injection.hpp
/// @brief A test switch for the verified batches of a CUDA run (issue 25, statistics_pipeline.hpp
/// `verify_device`): an executor wrapper that perturbs results or fails launches from a chosen
/// batch on, so the check, the warning and the CPU fallback can be exercised on any machine.
///
/// `TRIALSTAT_FAULT_INJECT=<kind>[@<batch>]`:
///  - `cuda-result`: from batch `batch` on, each batch's first record with moments gets its
///    `moments.nan_count` raised by one (a batch without moments records is left alone);
///  - `cuda-launch`: from batch `batch` on, `compute` fails with `cuda_error` before computing
///    anything (a launch failure that does not go away, as a sticky error would not);
///  - `batch`: 1-based, counting `statistics_executor::compute` calls of the run (one per
///    worker's event file of a step, and one more for typed-field fallbacks); default 1.
/// The fault persists from its batch on, as a broken kernel or a lost context does, so sampled
/// verification meets it at its next check. With a GPU the switch wraps the CUDA executor and
/// perturbs its real results; without one, a run with the switch set verifies a CPU executor
/// standing in for the device against the CPU reference, so the whole checked path runs on the
/// CPU (its output then equals `--device cpu`'s); the stand-in is checked (sampled) even under
/// `--verify-device off`, since checking it is its only purpose. Not for production runs.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "trialstat/stats/statistics_executor.hpp"
#include "trialstat/status.hpp"

namespace trialstat::stats {

/// @brief What the switch injects.
enum class fault_kind : uint8_t {
  none,
  result,  ///< `cuda-result`: a count off by one in each batch's first moments record
  launch,  ///< `cuda-launch`: compute fails with cuda_error
};

/// @brief A parsed `TRIALSTAT_FAULT_INJECT` value.
struct fault_injection {
  fault_kind kind = fault_kind::none;
  int64_t first_batch = 1;  ///< 1-based compute call from which every call is affected
  [[nodiscard]] bool active() const noexcept { return kind != fault_kind::none; }
};

/// @brief Parse `<kind>[@<batch>]` ("" = none).
/// @return errors: invalid_argument naming the text and the accepted forms.
[[nodiscard]] result<fault_injection> parse_fault_injection(std::string_view text);

/// @brief `TRIALSTAT_FAULT_INJECT` of this process, parsed (unset or empty = none).
/// @return errors: as parse_fault_injection, naming the variable.
[[nodiscard]] result<fault_injection> fault_injection_from_environment();

/// @brief `executor` with `fault` injected into its results or launches (`executor` itself when
/// no fault is set). The wrapper forwards `backend()` and `staging_pool()`.
[[nodiscard]] std::unique_ptr<statistics_executor> inject_faults(std::unique_ptr<statistics_executor> executor,
                                                                 const fault_injection& fault);

}  // namespace trialstat::stats
