// SPDX-License-Identifier: Apache-2.0
/// @file name_regex.hpp
/// @brief Tensor-name regular expressions with Python `re.search` semantics (unanchored; look-
/// ahead such as smdebug's default `^(?!gradient).*weight` supported). Backed by PCRE2.
/// Source: spec/TRIAL_API.md §9.
#pragma once

#include <cstdint>
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

  /// @brief Whether the pattern matches anywhere in `name` (Python `re.search`).
  /// Hostile patterns (`(a+)+$`) are bounded by PCRE2's match limit (`regex_match_limit`
  /// backtracking steps) and the JIT stack. Errors: invalid_argument naming the pattern and the
  /// name when the match cannot be decided within those limits (Python would decide it, slowly:
  /// never report that as "no match").
  [[nodiscard]] result<bool> find(std::string_view name) const;

  /// @brief `find`, with an undecidable match read as false (callers that cannot report).
  [[nodiscard]] bool search(std::string_view name) const;

  [[nodiscard]] const std::string& pattern() const noexcept { return pattern_; }

 private:
  struct compiled;
  std::shared_ptr<const compiled> compiled_;
  std::string pattern_;
};

/// @brief Backtracking steps a match may take before it is refused (PCRE2 match limit).
inline constexpr uint32_t regex_match_limit = 10'000'000;

/// @brief True when any pattern in `patterns` matches (a list matches if any element does).
[[nodiscard]] bool search_any(std::span<const name_regex> patterns, std::string_view name);

/// @brief `search_any` through `find`. Errors: as `name_regex::find` (the first undecidable).
[[nodiscard]] result<bool> find_any(std::span<const name_regex> patterns, std::string_view name);

}  // namespace trialstat::trial
