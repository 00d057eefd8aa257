// SPDX-License-Identifier: Apache-2.0
// The JSON row writer's text for finite doubles: the shortest decimal that reads back as the same
// double (Dragonbox, fmt's `to_decimal`), laid out exactly as fmt's "{}" lays it out, without
// fmt's general formatting machinery (padding, locale, grouping). Internal to host/report.
#pragma once

namespace trialstat::report::detail {

/// Bytes `write_shortest_double` may write past the text it returns (it copies digits in fixed
/// blocks): the caller's buffer must have this much room after the longest text (24 characters).
inline constexpr int shortest_double_slack_bytes = 32;

/// Longest text `write_shortest_double` returns ("-1.2345678901234567e-308": 24 characters).
inline constexpr int shortest_double_max_chars = 24;

/// @brief Write finite `v` as fmt::format("{}", v) writes it, at `out`; returns the end.
///
/// The text: '-' for a negative sign bit (also −0.0: "-0"); the shortest round-trip digits
/// d1..dn of |v| = d1.d2..dn · 10^E; when −4 ≤ E < 16 fixed notation without trailing ".0"
/// ("3", "0.001", "123.25", "1200"), otherwise "d1[.d2..dn]e±XX" (at least two exponent
/// digits: "1e+16", "1.5e-05", "2.2250738585072014e-308").
/// `out` needs shortest_double_max_chars + shortest_double_slack_bytes bytes: bytes after the
/// returned end may be overwritten. NaN and ±Inf are not accepted (JSON writes them as strings;
/// the caller handles them). Synchronous, allocation-free, deterministic.
char* write_shortest_double(double v, char* out) noexcept;

}  // namespace trialstat::report::detail
