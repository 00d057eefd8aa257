// SPDX-License-Identifier: Apache-2.0
#include "host/store/held_rows.hpp"

#include <bit>
#include <cstring>

namespace trialstat::store::detail {

uint64_t entry_key_hash(const entry_key& key) noexcept {
  uint64_t h = static_cast<uint64_t>(key.step) * 0x9e3779b97f4a7c15ULL ^
               (static_cast<uint64_t>(key.tensor) << 32 | static_cast<uint64_t>(key.worker));
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h;
}

void held_rows::build_index() {
  const std::size_t capacity = std::bit_ceil(std::max<std::size_t>(16, rows_.size() * 2));
  slots_.assign(capacity, slot{});
  const std::size_t mask = capacity - 1;
  for (uint32_t i = 0; i < rows_.size(); ++i) {
    const uint64_t hash = entry_key_hash(rows_[i].key);
    const auto tag = static_cast<uint32_t>(hash >> 32);
    std::size_t at = hash & mask;
    while (slots_[at].row != none && !(slots_[at].tag == tag && rows_[slots_[at].row].key == rows_[i].key)) {
      at = (at + 1) & mask;
    }
    slots_[at] = slot{i, tag};  // a later row of the same key replaces the earlier one
  }
}

uint32_t held_rows::find(const entry_key& key) const noexcept {
  if (slots_.empty()) return none;
  const std::size_t mask = slots_.size() - 1;
  const uint64_t hash = entry_key_hash(key);
  const auto tag = static_cast<uint32_t>(hash >> 32);
  for (std::size_t at = hash & mask;; at = (at + 1) & mask) {
    const slot s = slots_[at];
    if (s.row == none) return none;
    if (s.tag == tag && rows_[s.row].key == key) return s.row;
  }
}

void held_rows::clear() {
  rows_.clear();
  slots_.clear();
  rows_.shrink_to_fit();
}

bool held_rows::describes(uint32_t i, const row_identity& identity) const noexcept {
  return file_size_bytes(i) == identity.file_size_bytes && event_file(i) == identity.event_file &&
         ranges(i) == identity.ranges && file_version(i) == identity.file_version;
}

}  // namespace trialstat::store::detail
