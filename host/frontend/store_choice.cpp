// SPDX-License-Identifier: Apache-2.0
#include "trialstat/frontend/store_choice.hpp"

#include <cstdlib>

#include "trialstat/store/statistics_store.hpp"

namespace trialstat::frontend {

result<std::optional<store::store_source_options>> store_options(std::string_view choice,
                                                                 std::string_view trial_location,
                                                                 std::function<void(const status&)> warn) {
  auto path = store::resolve_store_path(choice, trial_location);
  if (!path) return path.error_status();
  if (!*path) return std::optional<store::store_source_options>();  // off
  store::store_source_options options;
  options.path = std::move(**path);
  if (const char* cap = std::getenv("TRIALSTAT_STORE_MAX_MB"); cap != nullptr && *cap != '\0') {
    options.max_store_bytes = static_cast<int64_t>(std::strtod(cap, nullptr) * 1048576.0);
  }
  options.warn = std::move(warn);
  return std::optional<store::store_source_options>(std::move(options));
}

}  // namespace trialstat::frontend
