// SPDX-License-Identifier: Apache-2.0
// `--device auto|cpu|cuda` and TRIALSTAT_FORCE_BACKEND: which statistics backend runs, and why;
// `--verify-device off|first|sampled`.
#include <cstdlib>
#include <string>

#include "trialstat/config.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/stats/backend.hpp"

namespace trialstat::pipeline {

result<device_choice> parse_device_choice(std::string_view text) {
  if (text == "auto") return device_choice::automatic;
  if (text == "cpu") return device_choice::cpu;
  if (text == "cuda") return device_choice::cuda;
  return status(error_code::invalid_argument,
                "device '" + std::string(text) + "': expected auto, cpu or cuda");
}

result<device_verification> parse_device_verification(std::string_view text) {
  if (text == "off") return device_verification::off;
  if (text == "first") return device_verification::first;
  if (text == "sampled") return device_verification::sampled;
  return status(error_code::invalid_argument,
                "--verify-device '" + std::string(text) + "': expected off, first or sampled");
}

result<resolved_backend> resolve_backend(device_choice choice) {
  if (choice == device_choice::automatic) {
    if (const char* forced = std::getenv("TRIALSTAT_FORCE_BACKEND"); forced && *forced) {
      auto parsed = parse_device_choice(forced);
      if (!parsed || *parsed == device_choice::automatic) {
        return status(error_code::invalid_argument,
                      std::string("TRIALSTAT_FORCE_BACKEND='") + forced + "': expected cpu or cuda");
      }
      auto forced_backend = resolve_backend(*parsed);
      if (forced_backend) forced_backend->reason += " (TRIALSTAT_FORCE_BACKEND)";
      return forced_backend;
    }
  }
  const bool cuda_usable = stats::cuda_device_available();
  switch (choice) {
    case device_choice::cpu:
      return resolved_backend{stats::backend::cpu, "cpu: requested with --device cpu"};
    case device_choice::cuda:
      if (!cuda_usable) {
        return status(error_code::invalid_argument,
                      TRIALSTAT_HAS_CUDA ? "--device cuda: no CUDA device is visible"
                                         : "--device cuda: this build has no CUDA backend");
      }
      return resolved_backend{stats::backend::cuda, "cuda: requested with --device cuda"};
    case device_choice::automatic:
      break;
  }
  if (cuda_usable) return resolved_backend{stats::backend::cuda, "cuda: a CUDA device is visible"};
  return resolved_backend{stats::backend::cpu, TRIALSTAT_HAS_CUDA
                                                   ? "cpu: built with CUDA but no device is visible"
                                                   : "cpu: built without CUDA"};
}

}  // namespace trialstat::pipeline
