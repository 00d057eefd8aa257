// SPDX-License-Identifier: Apache-2.0
// Test helpers: build TFRecord-framed records (FORMAT §2) byte by byte, independently of the
// reader under test (only the CRC-32C primitive, itself tested against RFC 3720, is shared).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/io/crc32c.hpp"

namespace trialstat::testing {

inline std::vector<std::byte> bytes_of(std::string_view text) {
  std::vector<std::byte> out(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) out[i] = static_cast<std::byte>(text[i]);
  return out;
}

inline std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

inline void append_le(std::vector<std::byte>& out, uint64_t value, int width) {
  for (int i = 0; i < width; ++i) out.push_back(static_cast<std::byte>((value >> (8 * i)) & 0xff));
}

enum class test_footer { smdebug, payload_crc };

/// One record: u64 length, masked CRC of the length bytes, payload, footer.
inline std::vector<std::byte> make_record(std::span<const std::byte> payload,
                                          test_footer footer = test_footer::smdebug) {
  std::vector<std::byte> out;
  append_le(out, payload.size(), 8);
  append_le(out, io::mask_crc32c(io::crc32c(std::span<const std::byte>(out.data(), 8))), 4);
  out.insert(out.end(), payload.begin(), payload.end());
  const uint32_t tail = footer == test_footer::smdebug
                            ? 0x062DC0B3u
                            : io::mask_crc32c(io::crc32c(payload));
  append_le(out, tail, 4);
  return out;
}

/// A header declaring `declared_length` with a correct length CRC, and nothing else.
inline std::vector<std::byte> make_header(uint64_t declared_length) {
  std::vector<std::byte> out;
  append_le(out, declared_length, 8);
  append_le(out, io::mask_crc32c(io::crc32c(std::span<const std::byte>(out.data(), 8))), 4);
  return out;
}

inline void append(std::vector<std::byte>& out, std::span<const std::byte> more) {
  out.insert(out.end(), more.begin(), more.end());
}

}  // namespace trialstat::testing
