// SPDX-License-Identifier: Apache-2.0
// The packed record format's two loops (record_packing.hpp says the format), written once over
// a word-step type `Ops`, and included by each file that compiles them for an instruction set:
// record_packing.cpp (portable) and record_packing_ssse3.cpp (under `#pragma GCC target`). So
// everything here has internal linkage (an anonymous namespace): each file keeps its own copy,
// compiled for its own instruction set. Whatever it includes must be included before the target
// pragma of a file that includes it (record_packing_ssse3.cpp). `Ops` provides
//   std::byte* compress(const std::byte* word, unsigned mask, std::byte* out)
//     stores the bytes of the eight-byte `word` whose bits of `mask` are set, in order, at `out`
//     (it may store up to eight bytes there), and returns `out` past them;
//   void expand8(const std::byte* in, unsigned mask, std::byte* word)
//     stores into the zeroed eight-byte `word` the next popcount(mask) bytes of `in` at the
//     positions of mask's set bits (eight bytes at `in` are readable; the blob's last few words
//     go through expand_bytes instead).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "trialstat/status.hpp"

namespace trialstat::store::detail {
namespace {

/// A record is kilobytes; a blob that claims more is refused before anything is allocated.
constexpr uint64_t packed_record_max_bytes = uint64_t{1} << 32;

/// Set bits of each byte value (a table: POPCNT is not baseline x86-64).
constexpr std::array<uint8_t, 256> byte_popcount = [] {
  std::array<uint8_t, 256> t{};
  for (unsigned m = 0; m < 256; ++m) t[m] = static_cast<uint8_t>(std::popcount(m));
  return t;
}();

inline uint64_t load_word(const std::byte* at) noexcept {
  uint64_t word = 0;
  std::memcpy(&word, at, 8);
  return word;
}

/// Bit j set where byte j (in memory order) of the eight at `at` is not zero. The high bit of
/// each byte is set exactly where the byte is nonzero (no borrow crosses bytes: the low seven
/// bits are added apart from the eighth), then the eight bits are gathered by one multiply (each
/// lands on its own bit of the top byte, no two products share a bit).
inline unsigned nonzero_mask(const std::byte* at) noexcept {
  uint64_t x = load_word(at);
  if constexpr (std::endian::native == std::endian::big) x = __builtin_bswap64(x);
  constexpr uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;
  const uint64_t high = (((x & low7) + low7) | x) & ~low7;
  return static_cast<unsigned>(((high >> 7) * 0x0102040810204080ULL) >> 56);
}

inline std::byte* put_leb128(std::byte* out, uint64_t value) noexcept {
  do {
    auto b = static_cast<uint8_t>(value & 0x7f);
    value >>= 7;
    if (value != 0) b |= 0x80;
    *out++ = std::byte{b};
  } while (value != 0);
  return out;
}

/// The LEB128 number at `p` (moved past it); false when it runs past `end` or over 64 bits.
inline bool get_leb128(const std::byte*& p, const std::byte* end, uint64_t& value) noexcept {
  value = 0;
  for (int shift = 0; p < end && shift < 64; shift += 7) {
    const auto b = static_cast<uint8_t>(*p++);
    value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

/// The next popcount(mask) bytes of `in` into the zeroed eight-byte `word` at the positions of
/// mask's set bits, one byte at a time (reads no byte past them).
inline void expand_bytes(const std::byte* in, unsigned mask, std::byte* word) noexcept {
  for (unsigned m = mask; m != 0; m &= m - 1) word[__builtin_ctz(m)] = *in++;
}

template <typename Ops>
void pack_words(std::span<const std::byte> raw, std::vector<std::byte>& packed) {
  const std::size_t words = (raw.size() + 7) / 8;
  const std::size_t full_words = raw.size() / 8;
  // The last word padded with zeros (when the record is not a whole number of words).
  std::byte tail[8] = {};
  if (full_words != words) std::memcpy(tail, raw.data() + full_words * 8, raw.size() - full_words * 8);
  const auto word_at = [&](std::size_t w) { return w < full_words ? raw.data() + w * 8 : tail; };
  // At most: the length, then a mask and eight bytes a word, and room for one eight-byte store
  // past the end (written through a local pointer: no bounds check a word).
  const std::size_t bound = 10 + words * 9 + 8;
  if (packed.size() < bound) packed.resize(bound);
  std::byte* out = put_leb128(packed.data(), raw.size());
  for (std::size_t w = 0; w < words;) {
    const std::byte* word = word_at(w);
    const unsigned mask = nonzero_mask(word);
    if (mask != 0) {
      *out++ = static_cast<std::byte>(mask);
      out = Ops::compress(word, mask, out);
      ++w;
      continue;
    }
    std::size_t run = 1;
    while (w + run < words && load_word(word_at(w + run)) == 0) ++run;
    *out++ = std::byte{0};
    out = put_leb128(out, run - 1);
    w += run;
  }
  packed.resize(static_cast<std::size_t>(out - packed.data()));
}

template <typename Ops>
status unpack_words(std::span<const std::byte> packed, std::vector<std::byte>& raw) {
  const std::byte* const begin = packed.data();
  const std::byte* const end = begin + packed.size();
  const std::byte* p = begin;
  const auto malformed = [&](std::string_view what) {
    return status(error_code::data_loss, fmt::format("record blob: {} at byte {}", what, p - begin));
  };
  uint64_t length = 0;
  if (!get_leb128(p, end, length) || length > packed_record_max_bytes) return malformed("no valid length");
  const auto words = static_cast<std::size_t>((length + 7) / 8);
  // Zeroed once: a run of zero words is then only a count to skip.
  if (raw.size() < words * 8) raw.resize(words * 8);
  std::byte* const out = raw.data();
  if (words != 0) std::memset(out, 0, words * 8);  // an empty record: raw.data() may be null
  for (std::size_t w = 0; w < words;) {
    unsigned mask = 0;
    if (end - p >= 16) [[likely]] {
      // A mask and its (at most eight) bytes are all in the blob: no checks but the word count.
      mask = static_cast<unsigned>(*p++);
      if (mask != 0) {
        Ops::expand8(p, mask, out + w * 8);
        p += byte_popcount[mask];
        ++w;
        continue;
      }
    } else {
      if (p == end) return malformed(fmt::format("the blob ends before word {} of {}", w, words));
      mask = static_cast<unsigned>(*p++);
      if (mask != 0) {
        if (byte_popcount[mask] > end - p) return malformed(fmt::format("word {} cut off", w));
        expand_bytes(p, mask, out + w * 8);
        p += byte_popcount[mask];
        ++w;
        continue;
      }
    }
    uint64_t more = 0;
    if (!get_leb128(p, end, more) || more >= words - w) return malformed("a zero run past the record's end");
    w += static_cast<std::size_t>(more) + 1;
  }
  if (p != end) return malformed("bytes after the last word");
  for (std::size_t i = static_cast<std::size_t>(length); i < words * 8; ++i) {
    if (out[i] != std::byte{0}) return malformed("a nonzero byte past the record's length");
  }
  raw.resize(static_cast<std::size_t>(length));
  return status::success();
}

}  // namespace
}  // namespace trialstat::store::detail
