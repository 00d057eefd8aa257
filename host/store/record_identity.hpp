// SPDX-License-Identifier: Apache-2.0
// Whether a stored row still describes its record: the identity of a catalog entry's records as
// the trial is now (event file key, byte ranges, the file's size and mtime or ETag), one stat or
// HEAD per event file per run. Internal to host/store.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "trialstat/io/trial_source.hpp"
#include "trialstat/stats/statistics_request.hpp"
#include "trialstat/store/statistics_store.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::store::detail {

/// The identities of a trial's event files, each asked of the source once.
class identity_cache {
 public:
  explicit identity_cache(const trial::catalog& trial) : trial_(trial) {}

  /// invalid_argument when the source cannot tell versions at all (then the store is not used);
  /// ok otherwise (also for a trial without event files).
  [[nodiscard]] status probe();

  /// The identity of the records of `entry` that `request` reads (previous left empty); nullopt
  /// when it reads none, or when its event file is missing or cannot be asked (read it).
  [[nodiscard]] std::optional<row_identity> of(const trial::tensor_entry& entry,
                                               const stats::statistics_request& request);
  /// As above into `out` (its strings' capacity reused: no allocation per entry once warm);
  /// false where the above gives nullopt (`out` is then unspecified).
  [[nodiscard]] bool of(const trial::tensor_entry& entry, const stats::statistics_request& request,
                        row_identity& out);

 private:
  const trial::catalog& trial_;
  std::unordered_map<trial::file_id, std::optional<io::object_identity>> files_;
};

/// FNV-1a 64 of the text "event_file:ranges:file_size_bytes:file_version" of `identity` (all
/// its fields but `previous`: what a later row compares with), hashed in place.
[[nodiscard]] uint64_t identity_hash(const row_identity& identity) noexcept;
/// Append "step:<hash, 16 hex digits>", an item of row_identity::previous (a changed identity
/// changes it but for a 2^-64 chance).
void append_previous_item(std::string& out, int64_t step, uint64_t hash);

}  // namespace trialstat::store::detail
