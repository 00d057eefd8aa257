// SPDX-License-Identifier: Apache-2.0
// The rows of one bundle as one blob and back (`record_bundles`, README "Statistics store"):
// the small records of one (global step, worker, request) that the store keeps because their
// event file holds a record it keeps as a row of `records` — one SQLite row for all of them, so
// that writing them costs one insert and a warm run opens no event file. Internal to host/store.
//
// Layout (little-endian; format 1): byte 0 the format, then a uint32 row count, then per row:
// tensor, event_file, ranges, file_version, previous and the packed record, each as a uint32
// length and its bytes, and mode (uint32), mode_step (int64) and file_size (uint64). The step,
// worker and request of every row are the bundle's key columns. The blob's CRC-32C is the
// `bundle_checksum` column; a blob that fails it, or does not parse, gives no row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "trialstat/store/statistics_store.hpp"

namespace trialstat::store::detail {

/// The format byte this build writes and reads.
inline constexpr uint8_t bundle_format = 1;

/// `rows` as one bundle blob into `blob` (replaced, capacity reused). Their step, worker and
/// request are not written (the bundle's key gives them back).
void encode_bundle(std::span<const row_view> rows, std::vector<std::byte>& blob);

/// The rows of `blob`, appended to `rows` as views into `blob` with `step`, `worker` and
/// `request` set (`mode` and `mode_step` as written). False, with `rows` as it was, when the
/// blob is malformed (an unknown format, a length past its end, bytes left over).
[[nodiscard]] bool decode_bundle(std::span<const std::byte> blob, int64_t step, std::string_view worker,
                                 std::string_view request, std::vector<row_view>& rows);

/// The rows of a bundle after `fresh` is written over `existing` (the rows the store holds under
/// the same key): every row of `fresh`, and those of `existing` whose tensor `fresh` lacks (a
/// run that reads some of a step's small records keeps the others). Views into both.
void merge_bundle_rows(std::span<const row_view> existing, std::span<const row_view> fresh,
                       std::vector<row_view>& merged);

}  // namespace trialstat::store::detail
