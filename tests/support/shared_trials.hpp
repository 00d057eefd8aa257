// SPDX-License-Identifier: Apache-2.0
// Locating the golden smdebug trials for tests (README "Golden trials"): the set generated at
// test time by smdebug's own PyTorch hook (ctest fixture golden.make_trials →
// <build>/golden_trials) or the shared set beside the checkout (../shared/trials). Without them a
// golden test skips — or fails where they are required (TRIALSTAT_REQUIRE_GOLDEN=1, or CI=true).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace trialstat::testing {

/// @brief The seven golden trials every golden set holds (../shared/trials/README.md), sorted:
/// dead_relu, dtypes, exploding, healthy_mlp, overfit, reductions_only, vanishing. Fixed, so a
/// parameterized golden test has the same instances whether or not the trials exist yet (ctest
/// lists tests before the fixture that generates them runs).
const std::vector<std::string>& golden_trial_names();

/// @brief Whether `dir` holds every golden trial: `<name>/` and `<name>.expected.json` for each of
/// `golden_trial_names()`.
bool is_golden_set(const std::filesystem::path& dir);

/// @brief The golden trials folder: $TRIALSTAT_SHARED_TRIALS when set (ctest sets it: the
/// generated set, or the shared set for the `.shared` entries), else the first complete one of
/// `<build>/golden_trials` and ../shared/trials next to the source checkout. nullopt when that
/// folder is not a complete golden set (`is_golden_set`).
std::optional<std::filesystem::path> shared_trials_dir();

/// @brief Names of the trials in `shared_trials_dir()` (folders with a sibling
/// <name>.expected.json), sorted; empty without a golden folder.
std::vector<std::string> shared_trial_names();

/// @brief Whether a missing golden set is a failure rather than a skip: $TRIALSTAT_REQUIRE_GOLDEN
/// "1" (yes) or "0" (no); unset or anything else: yes exactly when $CI is "true" (any case).
bool golden_trials_required();

/// @brief A fresh, empty scratch folder, unique per call, inside this process's
/// `<temp>/trialstat_test_<pid>/`, which is removed when the process exits normally (set
/// TRIALSTAT_KEEP_TEST_DIRS=1 to keep it).
std::filesystem::path make_scratch_dir(const std::string& label);

}  // namespace trialstat::testing

/// Binds `dir_var` to the golden trials folder; without one, skips the current test with a
/// message — or fails it when `golden_trials_required()` (in CI a golden test never skips).
#define TRIALSTAT_REQUIRE_SHARED_TRIALS(dir_var)                                                \
  const auto dir_var##_opt = ::trialstat::testing::shared_trials_dir();                          \
  if (!dir_var##_opt) {                                                                          \
    if (::trialstat::testing::golden_trials_required()) {                                        \
      GTEST_FAIL() << "golden trials not found ($TRIALSTAT_SHARED_TRIALS, <build>/golden_trials " \
                      "or ../shared/trials) and they are required here "                         \
                      "(TRIALSTAT_REQUIRE_GOLDEN=1 or CI=true): run ctest's golden.make_trials";  \
    }                                                                                            \
    GTEST_SKIP() << "golden trials not found ($TRIALSTAT_SHARED_TRIALS, <build>/golden_trials "   \
                    "or ../shared/trials); skipping";                                            \
  }                                                                                              \
  const std::filesystem::path dir_var = *dir_var##_opt
