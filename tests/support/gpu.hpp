// SPDX-License-Identifier: Apache-2.0
// The gate of every GPU test: skip without a visible CUDA device, except in a GPU proof run
// (TRIALSTAT_REQUIRE_GPU=1), where a missing device fails the test, so that a proof cannot pass
// by skipping (issue 25 item 4; bench/gpu_check.sh sets it when it finds a GPU).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

#include "trialstat/stats/backend.hpp"

namespace trialstat::testing {

/// @brief Whether TRIALSTAT_REQUIRE_GPU is set to anything but "" or "0".
[[nodiscard]] inline bool gpu_required() {
  const char* v = std::getenv("TRIALSTAT_REQUIRE_GPU");
  return v != nullptr && std::string_view(v) != "" && std::string_view(v) != "0";
}

}  // namespace trialstat::testing

/// Skip the test without a visible CUDA device (or a build without CUDA); fail it instead when
/// TRIALSTAT_REQUIRE_GPU=1. Use at the top of every test that needs a GPU.
#define TRIALSTAT_REQUIRE_CUDA_DEVICE()                                                         \
  do {                                                                                          \
    if (!::trialstat::stats::cuda_device_available()) {                                         \
      if (::trialstat::testing::gpu_required()) {                                               \
        GTEST_FAIL() << "TRIALSTAT_REQUIRE_GPU=1 but no CUDA device is visible (or this build " \
                        "has no CUDA backend)";                                                 \
      }                                                                                         \
      GTEST_SKIP() << "no CUDA device visible (or built without CUDA); skipping";               \
    }                                                                                           \
  } while (false)
