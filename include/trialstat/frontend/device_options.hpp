// SPDX-License-Identifier: Apache-2.0
/// @file device_options.hpp
/// @brief A front end's device settings (`--device`, `--pinned-mb`, the C API's and Python's
/// `device` argument) turned into statistics-pipeline options: the one place the CLI, the C API
/// and the Python module resolve a device.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/stats/statistics_executor.hpp"
#include "trialstat/status.hpp"

namespace trialstat::frontend {

/// @brief Default pinned host staging memory of the CUDA backend, in MiB (`--pinned-mb`).
inline constexpr int64_t default_pinned_mb =
    static_cast<int64_t>(stats::default_pinned_pool_bytes >> 20);
/// @brief Largest accepted `pinned_mb` (1 TiB of staging memory), in MiB.
inline constexpr int64_t max_pinned_mb = int64_t{1} << 20;

/// @brief What a user chose: the device and the CUDA staging memory.
struct device_options {
  /// "auto" (CUDA when built and a device is visible, else CPU; TRIALSTAT_FORCE_BACKEND
  /// overrides), "cpu" or "cuda" (CUDA or an error, never a silent fallback).
  std::string device = "auto";
  /// Pinned host staging memory of the CUDA backend in MiB, in [1, max_pinned_mb]; the CPU
  /// backend ignores it. Becomes `pipeline_options::pinned_pool_bytes` (MiB << 20).
  int64_t pinned_mb = default_pinned_mb;
  /// "off", "first" or "sampled" (`--verify-device`): how a CUDA run checks its results against
  /// the CPU twin (pipeline_options::verify_device); the CPU backend ignores it. Empty: the
  /// environment's `TRIALSTAT_VERIFY_DEVICE` when set (how the C API and Python choose it), else
  /// "sampled".
  std::string verify_device;
};

/// @brief The backend `device` ("auto" / "cpu" / "cuda") resolves to on this machine, with the
/// reason in words (`trialstat info`'s "backend:" line, the HTML report, Python `backend_for`).
/// Synchronous; probes the CUDA driver once.
/// @return errors: invalid_argument naming the bad value when `device` is none of the three
///   (pipeline::parse_device_choice), or when "cuda" is asked for and is not built or no device
///   is visible (pipeline::resolve_backend).
[[nodiscard]] result<pipeline::resolved_backend> resolve_device(std::string_view device);

/// @brief Pipeline options for `options`: the resolved backend, `pinned_pool_bytes` and
/// `verify_device`; every other field keeps pipeline_options' default (no step range, not
/// strict, no progress). The device is checked before the staging size.
/// @return errors: as resolve_device; invalid_argument "--pinned-mb must be in [1, 1048576]"
///   when `pinned_mb` is outside [1, max_pinned_mb], or naming a `verify_device` (or
///   `TRIALSTAT_VERIFY_DEVICE`) that is none of off, first, sampled.
[[nodiscard]] result<pipeline::pipeline_options> make_pipeline_options(const device_options& options);

/// @brief Shorthand: make_pipeline_options({device}) (default staging memory, sampled
/// verification). Errors: as resolve_device.
[[nodiscard]] result<pipeline::pipeline_options> make_pipeline_options(std::string_view device);

}  // namespace trialstat::frontend
