// SPDX-License-Identifier: Apache-2.0
#include "host/store/row_arena.hpp"

namespace trialstat::store::detail {

void row_arena::add(const row_view& v) {
  row r;
  r.step = v.step;
  r.file_size_bytes = v.file_size_bytes;
  r.offset = bytes_.size();
  append_row_texts(v, bytes_, r.lengths);
  rows_.push_back(r);
}

row_view row_arena::view(std::size_t i) const noexcept {
  const row& r = rows_[i];
  row_view v;
  v.step = r.step;
  v.file_size_bytes = r.file_size_bytes;
  view_row_texts(bytes_.data() + r.offset, r.lengths, v);
  return v;
}

void row_arena::clear() {
  rows_.clear();
  bytes_.clear();
  rows_.shrink_to_fit();
  bytes_.shrink_to_fit();
}

}  // namespace trialstat::store::detail
