// SPDX-License-Identifier: Apache-2.0
#include "tests/support/shared_trials.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <unistd.h>

namespace trialstat::testing {

std::optional<std::filesystem::path> shared_trials_dir() {
  std::filesystem::path dir;
  if (const char* env = std::getenv("TRIALSTAT_SHARED_TRIALS"); env != nullptr && *env != '\0') {
    dir = env;
  } else {
    dir = TRIALSTAT_SHARED_TRIALS_DEFAULT;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return std::nullopt;
  return dir;
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
