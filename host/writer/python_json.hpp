// SPDX-License-Identifier: Apache-2.0
// Private to trialstat_writer: JSON text exactly as Python's `json.dumps(obj)` writes it with
// default arguments (separators ", " and ": ", ensure_ascii=True, no indentation), which is how
// smdebug writes index and collection files (FORMAT §6, §8).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "trialstat/status.hpp"

namespace trialstat::writer::detail {

/// @brief Append `value` to `out` as Python's `json.dumps` would. Object keys keep their
/// insertion order (ordered_json). Strings must be valid UTF-8; non-ASCII and control characters
/// are escaped as `\uXXXX` (lowercase hex, surrogate pairs above U+FFFF), like Python.
/// Floats are not supported (smdebug's files hold none): invalid_argument.
/// @return invalid_argument for invalid UTF-8 or a float, naming the offending string.
[[nodiscard]] status append_python_json(const nlohmann::ordered_json& value, std::string& out);

}  // namespace trialstat::writer::detail
