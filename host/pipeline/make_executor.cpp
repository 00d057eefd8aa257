// SPDX-License-Identifier: Apache-2.0
// Executor factory: the CPU twin always; CUDA when built and a device is visible.
#include "trialstat/config.hpp"
#include "trialstat/pipeline/statistics_executor.hpp"

namespace trialstat::pipeline {

std::unique_ptr<statistics_executor> make_cpu_statistics_executor();

result<std::unique_ptr<statistics_executor>> make_statistics_executor(stats::backend which) {
  switch (which) {
    case stats::backend::cpu:
      return make_cpu_statistics_executor();
    case stats::backend::cuda:
      if (!stats::cuda_device_available()) {
        return status(error_code::invalid_argument,
                      TRIALSTAT_HAS_CUDA ? "backend cuda: no CUDA device is visible"
                                         : "backend cuda: this build has no CUDA backend");
      }
      // The CUDA executor (pinned staging, streams, device-resident history) plugs in here.
      return status(error_code::invalid_argument, "backend cuda: the CUDA executor is not built yet");
  }
  return status(error_code::invalid_argument, "unknown backend");
}

}  // namespace trialstat::pipeline
