// SPDX-License-Identifier: Apache-2.0
/// @file name_regex.hpp
/// @brief Tensor-name regular expressions with Python `re.search` semantics (unanchored; look-
/// ahead such as smdebug's default `^(?!gradient).*weight` supported). Backed by PCRE2.
/// Source: spec/TRIAL_API.md §9.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/status.hpp"

namespace trialstat::trial {

/// @brief A compiled pattern. Thread-safe for concurrent `search` calls. Copyable (shared).
class name_regex {
 public:
  /// @brief Compile `pattern`. Errors: invalid_argument naming the pattern, the offset and
  /// PCRE2's reason.
  [[nodiscard]] static result<name_regex> compile(std::string_view pattern);

  /// @brief True when the pattern matches anywhere in `name` (Python `re.search`).
  [[nodiscard]] bool search(std::string_view name) const;

  [[nodiscard]] const std::string& pattern() const noexcept { return pattern_; }

 private:
  struct compiled;
  std::shared_ptr<const compiled> compiled_;
  std::string pattern_;
};

/// @brief True when any pattern in `patterns` matches (a list matches if any element does).
[[nodiscard]] bool search_any(std::span<const name_regex> patterns, std::string_view name);

}  // namespace trialstat::trial
