// SPDX-License-Identifier: Apache-2.0
// Internal to host/trial: listing a folder of the trial, alone or shared by a load group (the
// MPI ranks that load one catalog together). Not a public header.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/io/trial_source.hpp"
#include "trialstat/status.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::trial::detail {

/// @brief The trial-relative keys ('/'-separated) of the objects under `<root>/<sub>`, sorted,
/// into `out` (cleared first); only those after `start_after` when it is not empty.
/// In a group of more than one process, each process lists its share of the folder
/// (`trial_source::list_share`) and the group exchanges the shares, so that each folder is opened
/// once per group rather than once per process (the step folders of events/ are most of a big
/// trial's listing); every process of the group gets the same listing, or the same error (the
/// first failing rank's).
/// @param skip_folder as `trial_source::list_share`: folders directly under `sub` not needed (a
///   source may list them anyway); empty to list everything.
/// @return ok; the source's listing errors (io_error); in a group: invalid_argument for a group
///   without an exchange, the exchange's errors, data_loss when it returns a share count other
///   than the group size or a malformed share.
[[nodiscard]] status list_trial_keys(const io::trial_source& source, const std::optional<load_group>& group,
                                     std::string_view sub, std::string_view start_after,
                                     const io::folder_filter& skip_folder, std::vector<std::string>& out);

}  // namespace trialstat::trial::detail
