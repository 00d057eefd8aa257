// SPDX-License-Identifier: Apache-2.0
// How a store row's record blob is packed (`pack_record` / `unpack_record` in
// store/statistics_store.hpp), one eight-byte word at a time: the format's two loops, and the
// word steps they are built from for each instruction set (portable, SSSE3). Internal to
// host/store; the portable and SSSE3 entry points are named so tests can check both on any x86
// machine.
//
// Format (schema README "Statistics store", request signature "s2" and later):
//   blob  := LEB128(L) token*         L: the record's length in bytes; W = ceil(L / 8) words
//   token := m p[popcount(m)]         m != 0: one word; byte j is the next byte of p when bit j
//                                     of m is set, else zero
//          | 0x00 LEB128(n)           n + 1 words of zeros
// The words, in order, are the record with its last word padded with zeros to eight bytes.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "trialstat/status.hpp"

namespace trialstat::store::detail {

/// Whether this CPU runs the SSSE3 word steps (x86 with SSSE3; decided by CPUID).
[[nodiscard]] bool packing_ssse3_available() noexcept;

/// `pack_record` with the portable word steps / with SSSE3's byte shuffles (only where
/// packing_ssse3_available()). Same output from both.
void pack_record_portable(std::span<const std::byte> raw, std::vector<std::byte>& packed);
void pack_record_ssse3(std::span<const std::byte> raw, std::vector<std::byte>& packed);

/// `unpack_record` with the portable word steps / with SSSE3's byte shuffles. Same output and
/// the same errors from both.
[[nodiscard]] status unpack_record_portable(std::span<const std::byte> packed, std::vector<std::byte>& raw);
[[nodiscard]] status unpack_record_ssse3(std::span<const std::byte> packed, std::vector<std::byte>& raw);

}  // namespace trialstat::store::detail
