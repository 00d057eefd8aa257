// SPDX-License-Identifier: Apache-2.0
// A statistics record read from the trial, as the row that will describe it (or nothing when
// it must not be stored). Shared by the store-backed source and the live writer. Internal to
// host/store.
#pragma once

#include <string_view>
#include <vector>

#include "host/store/record_identity.hpp"
#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/store/statistics_store.hpp"

namespace trialstat::store::detail {

/// The bytes of the records of `entry` that `request` reads (what `min_record_bytes` compares).
[[nodiscard]] uint64_t needed_record_bytes(const trial::tensor_entry& entry, const stats::statistics_request& request);

/// Buffers `append_row` reuses from row to row (no allocation per row once warm).
struct row_scratch {
  row_identity identity;         ///< of the record's entry
  row_identity before;           ///< of an earlier record it compared with
  std::vector<std::byte> raw;    ///< `stats::append_record` bytes
  std::vector<std::byte> packed; ///< `pack_record` of them
};

/// Append to `out` the row of `record` (of `entry`, computed for `request`, whose signature is
/// `signature`); false (nothing appended) when it must not be stored: an outcome that may change
/// (a record cut short, corrupt bytes), kept values, an event file without an identity, records
/// smaller than `min_record_bytes`, or pairwise comparisons this run cut short (a step range that
/// starts after the tensor's first steps: its row would replace the one whole runs use).
bool append_row(row_batch& out, const trial::catalog& trial, identity_cache& identities,
                const trial::tensor_entry& entry, const stats::statistics_request& request,
                std::string_view signature, const stats::statistics_record& record, int64_t min_record_bytes,
                row_scratch& scratch);

}  // namespace trialstat::store::detail
