// SPDX-License-Identifier: Apache-2.0
// Rows as SQLite hands them over (`statistics_store::read_row_views`), copied into one growing
// buffer: each row's texts and packed record side by side, no allocation per row. One arena per
// reading thread. Internal to host/store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "host/store/row_texts.hpp"
#include "trialstat/store/statistics_store.hpp"

namespace trialstat::store::detail {

class row_arena {
 public:
  /// Room for about `bytes` of row data (address space: memory is committed as it is written),
  /// so the buffer is not moved as rows arrive.
  void reserve(std::size_t bytes) { bytes_.reserve(bytes); }
  /// Copy `v` (every field but mode and mode_step, which serving does not use).
  void add(const row_view& v);
  [[nodiscard]] std::size_t size() const noexcept { return rows_.size(); }
  /// Row `i` (< size()) as views into the arena, valid until the next `add` or `clear` (mode
  /// and mode_step are 0).
  [[nodiscard]] row_view view(std::size_t i) const noexcept;
  void clear();

 private:
  struct row {
    int64_t step = 0;
    uint64_t file_size_bytes = 0;
    std::size_t offset = 0;  // into bytes_ (row_texts.hpp)
    uint32_t lengths[row_text_fields] = {};
  };
  std::vector<row> rows_;
  std::vector<char> bytes_;
};

}  // namespace trialstat::store::detail
