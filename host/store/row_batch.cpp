// SPDX-License-Identifier: Apache-2.0
// Rows to write, their texts and records in one buffer (statistics_store.hpp `row_batch`).
#include <cstring>

#include "trialstat/store/statistics_store.hpp"

namespace trialstat::store {

void row_batch::add(const row_view& v, const row_columns& columns) {
  row r;
  r.step = v.step;
  r.mode_step = v.mode_step;
  r.file_size_bytes = v.file_size_bytes;
  r.mode = v.mode;
  r.columns = columns;
  r.offset = bytes_.size();
  const std::string_view texts[fields] = {
      v.tensor, v.worker, v.request, v.event_file, v.ranges, v.file_version, v.previous,
      {reinterpret_cast<const char*>(v.record.data()), v.record.size()}};
  std::size_t total = 0;
  for (const std::string_view t : texts) total += t.size();
  bytes_.resize(bytes_.size() + total);
  char* out = bytes_.data() + r.offset;
  for (int f = 0; f < fields; ++f) {
    r.lengths[f] = static_cast<uint32_t>(texts[f].size());
    if (!texts[f].empty()) std::memcpy(out, texts[f].data(), texts[f].size());
    out += texts[f].size();
  }
  rows_.push_back(std::move(r));
}

row_view row_batch::view(std::size_t i) const noexcept {
  const row& r = rows_[i];
  std::string_view texts[fields];
  const char* at = bytes_.data() + r.offset;
  for (int f = 0; f < fields; ++f) {
    texts[f] = {at, r.lengths[f]};
    at += r.lengths[f];
  }
  row_view v;
  v.tensor = texts[0];
  v.step = r.step;
  v.worker = texts[1];
  v.request = texts[2];
  v.mode = r.mode;
  v.mode_step = r.mode_step;
  v.event_file = texts[3];
  v.ranges = texts[4];
  v.file_size_bytes = r.file_size_bytes;
  v.file_version = texts[5];
  v.previous = texts[6];
  v.record = {reinterpret_cast<const std::byte*>(texts[7].data()), texts[7].size()};
  return v;
}

void row_batch::clear() noexcept {
  rows_.clear();
  bytes_.clear();
}

}  // namespace trialstat::store
