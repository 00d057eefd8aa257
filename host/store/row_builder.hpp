// SPDX-License-Identifier: Apache-2.0
// A statistics record read from the trial, as the row that will describe it (or nothing when
// it must not be stored). Shared by the store-backed source and the live writer. Internal to
// host/store.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "host/store/record_identity.hpp"
#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/store/statistics_store.hpp"

namespace trialstat::store::detail {

/// The bytes of the records of `entry` that `request` reads (what `min_record_bytes` compares).
[[nodiscard]] uint64_t needed_record_bytes(const trial::tensor_entry& entry, const stats::statistics_request& request);

/// How the store keeps a record, as its size goes ("Small records" in README): an entry whose
/// records (the raw tensor and the saved reductions a run reads) add up to fewer than
/// `min_record_bytes` is *small*. A small entry is read each time rather than stored, unless its
/// event file also holds an entry the store keeps as a row of `records`: a warm run would open
/// that file for the small ones alone, so they are kept too, in the bundle of their step, worker
/// and request (one SQLite row for all of them: `record_bundles`).
class record_size_rule {
 public:
  explicit record_size_rule(int64_t min_record_bytes) : min_bytes_(min_record_bytes) {}
  /// Note `entry` (read for `request`) as one of the run's: its event file keeps every entry
  /// when this one is kept by size.
  void note(const trial::tensor_entry& entry, const stats::statistics_request& request);
  /// Whether `entry` is read rather than stored (once every entry of its file was noted).
  [[nodiscard]] bool small(const trial::tensor_entry& entry, const stats::statistics_request& request) const;
  /// Whether `entry`, when stored, goes into a bundle: smaller than the bound (whatever its file).
  [[nodiscard]] bool bundled(const trial::tensor_entry& entry, const stats::statistics_request& request) const;

 private:
  int64_t min_bytes_;
  std::unordered_set<trial::file_id> files_kept_;  // event files with an entry kept by size
};

/// Buffers `append_row` reuses from row to row (no allocation per row once warm).
struct row_scratch {
  row_identity identity;         ///< of the record's entry
  row_identity before;           ///< of an earlier record it compared with
  std::vector<std::byte> raw;    ///< `stats::append_record` bytes
  std::vector<std::byte> packed; ///< `pack_record` of them
};

/// Append to `out` the row of `record` (of `entry`, computed for `request`, whose signature is
/// `signature`); false (nothing appended) when it must not be stored: an outcome that may change
/// (a record cut short, corrupt bytes), kept values, an event file without an identity, a small
/// entry read rather than stored (`sizes`: one that is kept goes into its bundle), or pairwise comparisons this run cut short (a step range that starts after
/// the tensor's first steps: its row would replace the one whole runs use).
bool append_row(row_batch& out, const trial::catalog& trial, identity_cache& identities,
                const trial::tensor_entry& entry, const stats::statistics_request& request,
                std::string_view signature, const stats::statistics_record& record, const record_size_rule& sizes,
                row_scratch& scratch);

}  // namespace trialstat::store::detail
