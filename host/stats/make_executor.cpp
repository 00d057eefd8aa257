// SPDX-License-Identifier: Apache-2.0
// Executor factory: the CPU executor always; CUDA when built and a device is visible.
#include "trialstat/config.hpp"
#include "trialstat/stats/statistics_executor.hpp"

#if TRIALSTAT_HAS_CUDA
#include "host/stats/cuda_executor.hpp"
#endif

namespace trialstat::stats {

std::unique_ptr<statistics_executor> make_cpu_statistics_executor(const executor_options& options);

result<std::unique_ptr<statistics_executor>> make_statistics_executor(stats::backend which) {
  return make_statistics_executor(which, executor_options{});
}

result<std::unique_ptr<statistics_executor>> make_statistics_executor(
    stats::backend which, const executor_options& options) {
  switch (which) {
    case stats::backend::cpu:
      return make_cpu_statistics_executor(options);
    case stats::backend::cuda:
      if (!stats::cuda_device_available()) {
        return status(error_code::invalid_argument,
                      TRIALSTAT_HAS_CUDA ? "backend cuda: no CUDA device is visible"
                                         : "backend cuda: this build has no CUDA backend");
      }
#if TRIALSTAT_HAS_CUDA
      return make_cuda_statistics_executor(options);
#else
      return status(error_code::invalid_argument, "backend cuda: this build has no CUDA backend");
#endif
  }
  return status(error_code::invalid_argument, "unknown backend");
}

}  // namespace trialstat::stats
