// SPDX-License-Identifier: Apache-2.0
// JSON text for doubles as the golden files write them: shortest round-trip digits; non-finite
// values as the strings "NaN", "Infinity", "-Infinity" (JSON has no literal for them).
#pragma once

#include <cmath>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace trialstat::report::detail {

template <typename Out>
void append_json_number(Out& out, double v) {
  if (std::isnan(v) || std::isinf(v)) {
    const std::string_view text = std::isnan(v) ? "\"NaN\"" : (v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    out.append(text.data(), text.data() + text.size());
  } else {
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
}

/// A JSON string literal with the characters JSON requires escaped.
template <typename Out>
void append_json_string(Out& out, std::string_view s) {
  out.push_back('"');
  for (const char c : s) {
    switch (c) {
      case '"': out.push_back('\\'); out.push_back('"'); break;
      case '\\': out.push_back('\\'); out.push_back('\\'); break;
      case '\n': out.push_back('\\'); out.push_back('n'); break;
      case '\r': out.push_back('\\'); out.push_back('r'); break;
      case '\t': out.push_back('\\'); out.push_back('t'); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

}  // namespace trialstat::report::detail
