// SPDX-License-Identifier: Apache-2.0
// Shared by the libFuzzer targets of tests/fuzz: FUZZ_CHECK, an assertion that stays on in every
// build type (libFuzzer reports the abort as a crash and saves the input), and the byte/text
// views the targets hand to the parsers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

/// @brief Abort with the failed condition and a note when `cond` is false.
#define FUZZ_CHECK(cond, note)                                                             \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      const std::string fuzz_note_{std::string_view(note)}; /* a copy: note may be a temporary */ \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", __FILE__, __LINE__, #cond,   \
                   fuzz_note_.c_str());                                                    \
      std::abort();                                                                        \
    }                                                                                      \
  } while (false)

namespace trialstat::fuzz {

/// @brief The fuzz input as bytes.
inline std::span<const std::byte> as_bytes(const uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

/// @brief The fuzz input as text.
inline std::string_view as_text(const uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// @brief Whether `message` starts with `prefix` (error messages name their file first).
inline bool starts_with(std::string_view message, std::string_view prefix) {
  return message.substr(0, prefix.size()) == prefix;
}

}  // namespace trialstat::fuzz
