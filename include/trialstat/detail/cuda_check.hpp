// SPDX-License-Identifier: Apache-2.0
/// @file cuda_check.hpp
/// @brief TRIALSTAT_CUDA_TRY / TRIALSTAT_CUDA_CHECK_LAUNCH: turn a failed CUDA runtime call into a
/// `trialstat::status` naming the call, file and line. Sticky errors (the context is lost:
/// illegal address, launch failure, ...) become `cuda_fatal`; allocation failures become
/// `out_of_memory`; everything else `cuda_error`, after clearing the (non-sticky) error so the
/// next call starts clean. Internal: include only from CUDA-enabled translation units
/// (`TRIALSTAT_HAS_CUDA`), never from public headers. Source: STYLE.md "Errors".
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "trialstat/config.hpp"
#include "trialstat/status.hpp"

namespace trialstat::detail {

/// @brief Whether `err` leaves the CUDA context unusable (every later call fails with it).
[[nodiscard]] inline bool cuda_error_is_sticky(cudaError_t err) noexcept {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorLaunchTimeout:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

/// @brief The status for a failed CUDA call `what` (the expression text) at file:line.
[[nodiscard]] inline status cuda_failure(cudaError_t err, const char* what, const char* file,
                                         int line) {
  std::string message = std::string(what) + " failed at " + file + ":" + std::to_string(line) +
                        ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  if (cuda_error_is_sticky(err)) return status(error_code::cuda_fatal, std::move(message));
  static_cast<void>(cudaGetLastError());  // clear the non-sticky error for the next call
  if (err == cudaErrorMemoryAllocation) {
    return status(error_code::out_of_memory, std::move(message));
  }
  return status(error_code::cuda_error, std::move(message));
}

}  // namespace trialstat::detail

/// Evaluate a CUDA runtime call; on failure return the matching `trialstat::status`.
#define TRIALSTAT_CUDA_TRY(expr)                                                          \
  do {                                                                                    \
    const cudaError_t trialstat_cuda_err_ = (expr);                                       \
    if (trialstat_cuda_err_ != cudaSuccess) {                                             \
      return ::trialstat::detail::cuda_failure(trialstat_cuda_err_, #expr, __FILE__,      \
                                               __LINE__);                                 \
    }                                                                                     \
  } while (0)

/// After a `<<<...>>>` launch on `stream`: report launch errors; with TRIALSTAT_DEBUG_SYNC also
/// synchronise the stream so that an asynchronous fault is attributed to this launch.
/// cudaGetLastError (not cudaPeekAtLastError): it clears what it reports, so an error left
/// behind by an earlier call (e.g. cudaErrorNotReady from an event query) is reported at most
/// once and never keeps failing later launches.
#if TRIALSTAT_DEBUG_SYNC
#define TRIALSTAT_CUDA_CHECK_LAUNCH(stream)            \
  do {                                                 \
    TRIALSTAT_CUDA_TRY(cudaGetLastError());            \
    TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream)); \
  } while (0)
#else
#define TRIALSTAT_CUDA_CHECK_LAUNCH(stream)    \
  do {                                         \
    static_cast<void>(stream);                 \
    TRIALSTAT_CUDA_TRY(cudaGetLastError());    \
  } while (0)
#endif
