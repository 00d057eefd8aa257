// SPDX-License-Identifier: Apache-2.0
// Internal to host/io: surrounding whitespace of locations, settings and config-file values.
#pragma once

#include <cctype>
#include <string_view>

namespace trialstat::io::detail {

/// `text` without leading and trailing whitespace (std::isspace in the C locale).
inline std::string_view trim(std::string_view text) noexcept {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

}  // namespace trialstat::io::detail
