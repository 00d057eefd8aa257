// SPDX-License-Identifier: Apache-2.0
// A trial under an S3 prefix: ListObjectsV2 listings (the index's step-bucket folders listed in
// parallel; StartAfter for refreshes), whole-object GETs for index and collection files, and
// coalesced ranged GETs of event-file records, many in flight, fetched ahead of the reader within
// a byte budget. Internal to host/io; users get it from io::open_trial_source("s3://...").
#pragma once

#include <memory>
#include <string_view>

#include "trialstat/io/trial_source.hpp"

namespace trialstat::io::detail {

/// The S3 source for `location` (`s3://bucket[/prefix]`, trimmed). Errors: as
/// parse_s3_location and resolve_s3_config.
[[nodiscard]] result<std::shared_ptr<trial_source>> make_s3_source(std::string_view location,
                                                                   const s3_options& options);

}  // namespace trialstat::io::detail
