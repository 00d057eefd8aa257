// SPDX-License-Identifier: Apache-2.0
/// @file open_catalog.hpp
/// @brief Opening a trial the way the embedding front ends do (C API `trialstat_open[_range]`,
/// Python `_core.Catalog.open`), and the text of a load warning, shared with the CLI.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "trialstat/status.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::frontend {

/// @brief Load the trial at `location` (a folder or `s3://bucket/prefix`) with S3 settings from
/// the TRIALSTAT_S3_* environment (io::s3_options_from_environment) and no other option.
/// @param range_begin, range_end  load only global steps s with begin <= s < end (unset: open)
/// @return errors: invalid_argument naming the variable when a TRIALSTAT_S3_* value is bad;
///   otherwise as trial::catalog::open.
[[nodiscard]] result<trial::catalog> open_catalog(const std::string& location,
                                                  std::optional<int64_t> range_begin = std::nullopt,
                                                  std::optional<int64_t> range_end = std::nullopt);

/// @brief A load warning in words: "<file relative to the trial root>: <code>: <message>".
[[nodiscard]] std::string load_warning_text(const trial::load_warning& warning);

}  // namespace trialstat::frontend
