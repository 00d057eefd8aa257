// SPDX-License-Identifier: Apache-2.0
#include "tests/support/shared_trials.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <string_view>
#include <unistd.h>

namespace trialstat::testing {

const std::vector<std::string>& golden_trial_names() {
  static const std::vector<std::string> names = {"dead_relu", "dtypes",  "exploding",
                                                 "healthy_mlp", "overfit", "reductions_only",
                                                 "vanishing"};
  return names;
}

bool is_golden_set(const std::filesystem::path& dir) {
  std::error_code ec;
  for (const auto& name : golden_trial_names()) {
    if (!std::filesystem::is_directory(dir / name, ec) ||
        !std::filesystem::is_regular_file(dir / (name + ".expected.json"), ec)) {
      return false;
    }
  }
  return true;
}

std::optional<std::filesystem::path> shared_trials_dir() {
  if (const char* env = std::getenv("TRIALSTAT_SHARED_TRIALS"); env != nullptr && *env != '\0') {
    if (is_golden_set(env)) return std::filesystem::path(env);
    return std::nullopt;
  }
  for (const char* candidate : {TRIALSTAT_GOLDEN_TRIALS_DEFAULT, TRIALSTAT_SHARED_TRIALS_DEFAULT}) {
    if (is_golden_set(candidate)) return std::filesystem::path(candidate);
  }
  return std::nullopt;
}

std::vector<std::string> shared_trial_names() {
  std::vector<std::string> names;
  const auto dir = shared_trials_dir();
  if (!dir) return names;
  for (const auto& entry : std::filesystem::directory_iterator(*dir)) {
    if (!entry.is_directory()) continue;
    const auto name = entry.path().filename().string();
    if (std::filesystem::exists(*dir / (name + ".expected.json"))) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool golden_trials_required() {
  if (const char* env = std::getenv("TRIALSTAT_REQUIRE_GOLDEN"); env != nullptr) {
    if (std::string_view(env) == "1") return true;
    if (std::string_view(env) == "0") return false;
  }
  const char* ci = std::getenv("CI");
  if (ci == nullptr) return false;
  std::string value(ci);
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return value == "true";
}

namespace {

/// This process's folder of scratch folders, removed when the process exits normally (unless
/// TRIALSTAT_KEEP_TEST_DIRS is set, to look at what a test wrote). A forked child that exits
/// leaves it alone: only the process that created it removes it.
const std::filesystem::path& scratch_root() {
  // Never destroyed: the exit handler below runs after static destructors would have.
  static const pid_t owner = ::getpid();
  static const std::filesystem::path* root = [] {
    auto* dir = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                          ("trialstat_test_" + std::to_string(::getpid())));
    std::filesystem::remove_all(*dir);
    std::filesystem::create_directories(*dir);
    const char* keep = std::getenv("TRIALSTAT_KEEP_TEST_DIRS");
    if (keep == nullptr || *keep == '\0') {
      std::atexit([] {
        if (::getpid() != owner) return;
        std::error_code ec;
        std::filesystem::remove_all(*root, ec);
      });
    }
    return dir;
  }();
  return *root;
}

}  // namespace

std::filesystem::path make_scratch_dir(const std::string& label) {
  static std::atomic<int> counter{0};
  auto dir = scratch_root() / (label + "_" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace trialstat::testing
