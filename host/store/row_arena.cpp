// SPDX-License-Identifier: Apache-2.0
#include "host/store/row_arena.hpp"

#include <cstring>
#include <string_view>

namespace trialstat::store::detail {

void row_arena::add(const row_view& v) {
  row r;
  r.step = v.step;
  r.file_size_bytes = v.file_size_bytes;
  r.offset = bytes_.size();
  const std::string_view record(reinterpret_cast<const char*>(v.record.data()), v.record.size());
  const std::string_view texts[fields] = {v.tensor, v.worker, v.request, v.event_file, v.ranges, v.file_version,
                                          v.previous, record};
  std::size_t total = 0;
  for (const std::string_view text : texts) total += text.size();
  bytes_.resize(bytes_.size() + total);
  char* out = bytes_.data() + r.offset;
  for (int f = 0; f < fields; ++f) {
    r.lengths[f] = static_cast<uint32_t>(texts[f].size());
    if (!texts[f].empty()) std::memcpy(out, texts[f].data(), texts[f].size());
    out += texts[f].size();
  }
  rows_.push_back(r);
}

row_view row_arena::view(std::size_t i) const noexcept {
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
  v.event_file = texts[3];
  v.ranges = texts[4];
  v.file_size_bytes = r.file_size_bytes;
  v.file_version = texts[5];
  v.previous = texts[6];
  v.record = {reinterpret_cast<const std::byte*>(texts[7].data()), texts[7].size()};
  return v;
}

void row_arena::clear() {
  rows_.clear();
  bytes_.clear();
  rows_.shrink_to_fit();
  bytes_.shrink_to_fit();
}

}  // namespace trialstat::store::detail
