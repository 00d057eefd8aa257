// SPDX-License-Identifier: Apache-2.0
/// @file mode.hpp
/// @brief Training modes (smdebug `ModeKeys`): TRAIN=1, EVAL=2, PREDICT=3, GLOBAL=4.
/// Source: spec/TRIAL_API.md §6, spec/FORMAT.md §5.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace trialstat {

/// @brief smdebug ModeKeys; the numeric values are the ones written into event files.
enum class mode : int { train = 1, eval = 2, predict = 3, global = 4 };

/// @brief All modes in enum order.
inline constexpr std::array<mode, 4> all_modes = {mode::train, mode::eval, mode::predict,
                                                  mode::global};

/// @brief "TRAIN", "EVAL", "PREDICT" or "GLOBAL" (the names index files and JSON use).
[[nodiscard]] std::string_view mode_name(mode m) noexcept;

/// @brief Parse a mode name, case-insensitively ("TRAIN", "train", ...).
/// @return nullopt for anything else.
[[nodiscard]] std::optional<mode> parse_mode_name(std::string_view name) noexcept;

/// @brief Parse the numeric plugin-data value ("1".."4") written into an event record.
/// @return nullopt for anything else.
[[nodiscard]] std::optional<mode> parse_mode_number(std::string_view digits) noexcept;

}  // namespace trialstat
