// SPDX-License-Identifier: Apache-2.0
// Rows to write, their texts and records in one buffer (statistics_store.hpp `row_batch`).
#include "host/store/row_texts.hpp"
#include "trialstat/store/statistics_store.hpp"

namespace trialstat::store {

static_assert(row_batch::text_fields == detail::row_text_fields);

void row_batch::add(const row_view& v, const row_columns& columns, bool bundled) {
  row r;
  r.bundled = bundled;
  r.step = v.step;
  r.mode_step = v.mode_step;
  r.file_size_bytes = v.file_size_bytes;
  r.mode = v.mode;
  r.columns = columns;
  r.offset = bytes_.size();
  detail::append_row_texts(v, bytes_, r.lengths);
  rows_.push_back(std::move(r));
}

row_view row_batch::view(std::size_t i) const noexcept {
  const row& r = rows_[i];
  row_view v;
  v.step = r.step;
  v.mode = r.mode;
  v.mode_step = r.mode_step;
  v.file_size_bytes = r.file_size_bytes;
  detail::view_row_texts(bytes_.data() + r.offset, r.lengths, v);
  return v;
}

void row_batch::clear() noexcept {
  rows_.clear();
  bytes_.clear();
}

}  // namespace trialstat::store
