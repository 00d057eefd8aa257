// SPDX-License-Identifier: Apache-2.0
// A row's eight variable-length fields (tensor, worker, request, event_file, ranges,
// file_version, previous, packed record) laid side by side in one buffer, and read back as
// views: how row_batch (rows to write) and row_arena (rows read) hold rows without an
// allocation per row. Internal to host/store.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "trialstat/store/statistics_store.hpp"

namespace trialstat::store::detail {

inline constexpr int row_text_fields = 8;

/// Append the fields of `v` to `bytes`; their lengths into `lengths`.
inline void append_row_texts(const row_view& v, std::vector<char>& bytes, uint32_t (&lengths)[row_text_fields]) {
  const std::string_view texts[row_text_fields] = {
      v.tensor, v.worker, v.request, v.event_file, v.ranges, v.file_version, v.previous,
      {reinterpret_cast<const char*>(v.record.data()), v.record.size()}};
  std::size_t total = 0;
  for (const std::string_view text : texts) total += text.size();
  const std::size_t offset = bytes.size();
  bytes.resize(offset + total);
  char* out = bytes.data() + offset;
  for (int f = 0; f < row_text_fields; ++f) {
    lengths[f] = static_cast<uint32_t>(texts[f].size());
    if (!texts[f].empty()) std::memcpy(out, texts[f].data(), texts[f].size());
    out += texts[f].size();
  }
}

/// Point the fields of `v` at the texts laid out from `at` with `lengths`.
inline void view_row_texts(const char* at, const uint32_t (&lengths)[row_text_fields], row_view& v) {
  std::string_view texts[row_text_fields];
  for (int f = 0; f < row_text_fields; ++f) {
    texts[f] = {at, lengths[f]};
    at += lengths[f];
  }
  v.tensor = texts[0];
  v.worker = texts[1];
  v.request = texts[2];
  v.event_file = texts[3];
  v.ranges = texts[4];
  v.file_version = texts[5];
  v.previous = texts[6];
  v.record = {reinterpret_cast<const std::byte*>(texts[7].data()), texts[7].size()};
}

}  // namespace trialstat::store::detail
