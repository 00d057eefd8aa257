// SPDX-License-Identifier: Apache-2.0
// Locating the golden smdebug trials (../shared/trials) for tests; skip cleanly without them.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace trialstat::testing {

/// @brief The golden trials folder: $TRIALSTAT_SHARED_TRIALS if set, else ../shared/trials next
/// to the source checkout. nullopt when it does not exist (as on a user's machine).
std::optional<std::filesystem::path> shared_trials_dir();

/// @brief Names of the golden trials (folders with a sibling <name>.expected.json), sorted.
std::vector<std::string> shared_trial_names();

/// @brief A fresh, empty scratch folder, unique per call, inside this process's
/// `<temp>/trialstat_test_<pid>/`, which is removed when the process exits normally (set
/// TRIALSTAT_KEEP_TEST_DIRS=1 to keep it).
std::filesystem::path make_scratch_dir(const std::string& label);

}  // namespace trialstat::testing

/// Skip the current test, with a message, when the golden trials are absent.
#define TRIALSTAT_REQUIRE_SHARED_TRIALS(dir_var)                                              \
  const auto dir_var##_opt = ::trialstat::testing::shared_trials_dir();                        \
  if (!dir_var##_opt) {                                                                        \
    GTEST_SKIP() << "golden trials not found (../shared/trials or $TRIALSTAT_SHARED_TRIALS); " \
                    "skipping";                                                                \
  }                                                                                            \
  const std::filesystem::path dir_var = *dir_var##_opt
