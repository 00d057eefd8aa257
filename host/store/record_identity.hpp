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

 private:
  const trial::catalog& trial_;
  std::unordered_map<trial::file_id, std::optional<io::object_identity>> files_;
};

/// One text for all the fields of `identity` but `previous` (what a later row compares with).
[[nodiscard]] std::string fingerprint(const row_identity& identity);
/// "step:<FNV-1a 64 of fingerprint, 16 hex digits>", an item of row_identity::previous (a
/// changed identity changes it but for a 2^-64 chance).
[[nodiscard]] std::string previous_fingerprint(int64_t step, std::string_view fingerprint);

}  // namespace trialstat::store::detail
