// SPDX-License-Identifier: Apache-2.0
/// @file store_choice.hpp
/// @brief The statistics store (issue 26) a front end's `--store` / `store=` /
/// `trialstat_set_store` choice names, as the options of a store-backed source or live writer:
/// shared by the CLI, Python and the C API.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "trialstat/status.hpp"
#include "trialstat/store/store_source.hpp"

namespace trialstat::frontend {

/// @brief The store options `choice` names for the trial at `trial_location`.
/// @param choice  "auto" (or ""): the user's cache folder (store::default_store_path); "off": no
///   store; anything else: that SQLite file
/// @param warn    told every later problem of the store (the run then reads the trial)
/// `TRIALSTAT_STORE_MAX_MB` (MiB) sets `max_store_bytes`; the other fields keep their defaults.
/// @return nullopt for "off"; errors: invalid_argument when "auto" has no cache folder (neither
///   XDG_CACHE_HOME nor HOME is set). Opening the file is left to the first run (its problems
///   are warnings then, never errors).
[[nodiscard]] result<std::optional<store::store_source_options>> store_options(
    std::string_view choice, std::string_view trial_location, std::function<void(const status&)> warn);

}  // namespace trialstat::frontend
