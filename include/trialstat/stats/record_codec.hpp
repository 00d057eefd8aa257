// SPDX-License-Identifier: Apache-2.0
/// @file record_codec.hpp
/// @brief One `stats::statistics_record` to bytes and back, field for field: the one
/// serialisation of a record, shared by the MPI step messages (distributed/record_codec.hpp,
/// issue 10) and the statistics store's record blobs (store/statistics_store.hpp, issue 26).
/// Binary, host byte order, no version of its own: callers frame it (the MPI step header; the
/// store's schema version). A new record field is added to `fields` in
/// host/stats/record_codec.cpp (`RecordCodec.RoundTripsEveryField` checks every field).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "trialstat/stats/statistics_record.hpp"

namespace trialstat::stats {

/// @brief Append every field of `record` to `out`, the kept values (`values_data`,
/// num_elements × dtype size bytes) included when present.
void append_record(const statistics_record& record, std::vector<std::byte>& out);

/// @brief Read one record as `append_record` wrote it from `bytes` at byte `at`, advancing `at`
/// past it. Kept values point into `bytes`, which must outlive the record's use of them.
/// @return false when the bytes are cut short or malformed (`record` and `at` are then
///   unspecified; never reads outside `bytes`).
[[nodiscard]] bool read_record(std::span<const std::byte> bytes, std::size_t& at, statistics_record& record);

}  // namespace trialstat::stats
