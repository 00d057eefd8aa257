// SPDX-License-Identifier: Apache-2.0
// The packed record format with portable word steps, and the public pack_record / unpack_record,
// which take the SSSE3 steps where the CPU has them (decided once, on first use).
#include "host/store/record_packing.hpp"

#include "host/store/record_packing_loops.hpp"
#include "trialstat/store/statistics_store.hpp"

namespace trialstat::store {
namespace detail {
namespace {

struct portable_word_steps {
  static std::byte* compress(const std::byte* word, unsigned mask, std::byte* out) noexcept {
    for (int j = 0; j < 8; ++j) {  // every byte stored, the cursor moved past the kept ones
      *out = word[j];
      out += (mask >> j) & 1;
    }
    return out;
  }
  static void expand8(const std::byte* in, unsigned mask, std::byte* word) noexcept { expand_bytes(in, mask, word); }
};

}  // namespace

void pack_record_portable(std::span<const std::byte> raw, std::vector<std::byte>& packed) {
  pack_words<portable_word_steps>(raw, packed);
}

status unpack_record_portable(std::span<const std::byte> packed, std::vector<std::byte>& raw) {
  return unpack_words<portable_word_steps>(packed, raw);
}

}  // namespace detail

std::vector<std::byte> pack_record(std::span<const std::byte> raw) {
  std::vector<std::byte> out;
  pack_record(raw, out);
  return out;
}

void pack_record(std::span<const std::byte> raw, std::vector<std::byte>& packed) {
  static const bool ssse3 = detail::packing_ssse3_available();
  if (ssse3) {
    detail::pack_record_ssse3(raw, packed);
  } else {
    detail::pack_record_portable(raw, packed);
  }
}

status unpack_record(std::span<const std::byte> packed, std::vector<std::byte>& raw) {
  static const bool ssse3 = detail::packing_ssse3_available();
  return ssse3 ? detail::unpack_record_ssse3(packed, raw) : detail::unpack_record_portable(packed, raw);
}

}  // namespace trialstat::store
