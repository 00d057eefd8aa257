// SPDX-License-Identifier: Apache-2.0
#include "trialstat/mode.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace trialstat {

std::string_view mode_name(mode m) noexcept {
  switch (m) {
    case mode::train: return "TRAIN";
    case mode::eval: return "EVAL";
    case mode::predict: return "PREDICT";
    case mode::global: return "GLOBAL";
  }
  return "GLOBAL";
}

std::optional<mode> parse_mode_name(std::string_view name) noexcept {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (mode m : all_modes) {
    if (upper == mode_name(m)) return m;
  }
  return std::nullopt;
}

std::optional<mode> parse_mode_number(std::string_view digits) noexcept {
  if (digits.size() != 1 || digits[0] < '1' || digits[0] > '4') return std::nullopt;
  return static_cast<mode>(digits[0] - '0');
}

}  // namespace trialstat
