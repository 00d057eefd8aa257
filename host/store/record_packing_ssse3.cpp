// SPDX-License-Identifier: Apache-2.0
// The packed record format's word steps as one byte shuffle (SSSE3 `pshufb`) a word, by tables
// indexed by the word's mask. Compiled for SSSE3 with `#pragma GCC target` (no -march flags on
// the library); called only where packing_ssse3_available() (record_packing.cpp). Elsewhere the
// entry points run the portable steps.
#include "host/store/record_packing.hpp"

// Everything the loops use is included before the target pragma, so that only this file's own
// functions (internal linkage) are compiled for SSSE3, never a shared inline or template
// instantiation the linker might pick for the whole program.
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "trialstat/status.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#define TRIALSTAT_PACKING_SSSE3 1
#include <tmmintrin.h>
#endif

#if TRIALSTAT_PACKING_SSSE3
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("ssse3"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("ssse3")
#endif
#endif

#include "host/store/record_packing_loops.hpp"

namespace trialstat::store::detail {

#if TRIALSTAT_PACKING_SSSE3
namespace {

using shuffle_table = std::array<std::array<uint8_t, 8>, 256>;

/// For each mask: byte j of the word comes from the packed byte at the given index (the number
/// of set bits below bit j), or is zero (0x80: pshufb stores zero).
constexpr shuffle_table expand_shuffles = [] {
  shuffle_table t{};
  for (unsigned m = 0; m < 256; ++m) {
    uint8_t next = 0;
    for (unsigned j = 0; j < 8; ++j) t[m][j] = ((m >> j) & 1) != 0 ? next++ : 0x80;
  }
  return t;
}();

/// For each mask: the k-th packed byte is byte t[m][k] of the word (its k-th set bit); past the
/// set bits, zero.
constexpr shuffle_table compress_shuffles = [] {
  shuffle_table t{};
  for (unsigned m = 0; m < 256; ++m) {
    unsigned k = 0;
    for (unsigned j = 0; j < 8; ++j) {
      if (((m >> j) & 1) != 0) t[m][k++] = static_cast<uint8_t>(j);
    }
    for (; k < 8; ++k) t[m][k] = 0x80;
  }
  return t;
}();

inline __m128i load8(const void* at) noexcept { return _mm_loadl_epi64(static_cast<const __m128i*>(at)); }

struct ssse3_word_steps {
  static std::byte* compress(const std::byte* word, unsigned mask, std::byte* out) noexcept {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_shuffle_epi8(load8(word), load8(compress_shuffles[mask].data())));
    return out + byte_popcount[mask];
  }
  static void expand8(const std::byte* in, unsigned mask, std::byte* word) noexcept {
    // The load reads eight bytes, of which the shuffle keeps popcount(mask).
    _mm_storel_epi64(reinterpret_cast<__m128i*>(word), _mm_shuffle_epi8(load8(in), load8(expand_shuffles[mask].data())));
  }
};

}  // namespace

bool packing_ssse3_available() noexcept { return __builtin_cpu_supports("ssse3") != 0; }

void pack_record_ssse3(std::span<const std::byte> raw, std::vector<std::byte>& packed) {
  pack_words<ssse3_word_steps>(raw, packed);
}

status unpack_record_ssse3(std::span<const std::byte> packed, std::vector<std::byte>& raw) {
  return unpack_words<ssse3_word_steps>(packed, raw);
}

#else  // no SSSE3 on this architecture: the portable steps

bool packing_ssse3_available() noexcept { return false; }

void pack_record_ssse3(std::span<const std::byte> raw, std::vector<std::byte>& packed) {
  pack_record_portable(raw, packed);
}

status unpack_record_ssse3(std::span<const std::byte> packed, std::vector<std::byte>& raw) {
  return unpack_record_portable(packed, raw);
}

#endif

}  // namespace trialstat::store::detail

#if TRIALSTAT_PACKING_SSSE3
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
