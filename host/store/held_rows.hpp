// SPDX-License-Identifier: Apache-2.0
// The stored rows one run may serve, as views into the arenas they were read into
// (row_arena.hpp), and an open-addressing index by (global step, tensor, worker). No copy and no
// allocation per row. Internal to host/store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "trialstat/store/statistics_store.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::store::detail {

/// (global step, tensor, worker) of one catalog entry.
struct entry_key {
  int64_t step = 0;
  trial::tensor_id tensor = 0;
  trial::worker_id worker = 0;
  friend bool operator==(const entry_key&, const entry_key&) = default;
};

/// A 64-bit mix of all three fields (the finaliser of SplitMix64): neighbouring steps, tensors
/// and workers land far apart, so a power-of-two table needs no prime modulus.
[[nodiscard]] uint64_t entry_key_hash(const entry_key& key) noexcept;

class held_rows {
 public:
  /// No row.
  static constexpr uint32_t none = UINT32_MAX;

  /// Hold the row `v` (for the catalog entry `key`): its views must stay valid while this
  /// object holds it (until `clear`). A second row of the same key replaces the first in the
  /// index. Call `build_index` after the last `add`.
  void add(const entry_key& key, const row_view& v) { rows_.push_back(row{key, v}); }
  /// Room for `rows` rows (no reallocation while they are added).
  void reserve(std::size_t rows) { rows_.reserve(rows); }
  /// Make `find` answer (after the rows are added).
  void build_index();
  /// The index of the row of `key`, or `none`.
  [[nodiscard]] uint32_t find(const entry_key& key) const noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return rows_.size(); }
  void clear();

  /// The identity fields of row `i`.
  [[nodiscard]] std::string_view event_file(uint32_t i) const noexcept { return rows_[i].view.event_file; }
  [[nodiscard]] std::string_view ranges(uint32_t i) const noexcept { return rows_[i].view.ranges; }
  [[nodiscard]] std::string_view file_version(uint32_t i) const noexcept { return rows_[i].view.file_version; }
  [[nodiscard]] std::string_view previous(uint32_t i) const noexcept { return rows_[i].view.previous; }
  [[nodiscard]] uint64_t file_size_bytes(uint32_t i) const noexcept { return rows_[i].view.file_size_bytes; }
  /// The packed record (`pack_record`) of row `i`.
  [[nodiscard]] std::span<const std::byte> record(uint32_t i) const noexcept { return rows_[i].view.record; }
  /// Whether row `i` describes the record `identity` names (all but `previous` compared).
  [[nodiscard]] bool describes(uint32_t i, const row_identity& identity) const noexcept;

 private:
  struct row {
    entry_key key;
    row_view view;
  };

  std::vector<row> rows_;
  /// A slot of the index: the row, and the high half of its key's hash (a probe compares the
  /// tag first and looks at the row only when it matches: an absent key, such as a small record
  /// that is never stored, costs no access to `rows_`).
  struct slot {
    uint32_t row = none;
    uint32_t tag = 0;
  };
  std::vector<slot> slots_;  // power of two; `row == none`: empty
};

}  // namespace trialstat::store::detail
