// SPDX-License-Identifier: Apache-2.0
// Internal to host/trial: the fallback for a step without a usable index file — read the
// entries of one event file from its records (spec/FORMAT.md §2, §3, §5) into the same parsed
// form an index file gives. Pure: bytes in, entries and warnings out; the catalog reads the
// file and commits the result. Not a public header.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "host/trial/index_json.hpp"
#include "host/trial/trial_file_names.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::trial::detail {

/// @brief Scan the TFRecord records of one event file and list every decodable record in `out`
/// (cleared first) as an index file would: its tag, byte offset and whole-record length, in file
/// order; `out.mode` / `out.mode_step` from the first decodable record (GLOBAL and its Event.step
/// when the record carries no mode). Problems become `warnings` (file `rel`), never a failure:
///  - a framing error (e.g. data_loss for a CRC mismatch) names the file, its step and worker;
///    scanning resumes after a bad record when the scanner could move past it, else stops;
///  - a record that does not decode is skipped, naming its byte offset;
///  - the first record whose Event.step differs from the file name's step (data_loss; the file
///    name's step is used).
/// @param bytes the whole file; @param rel its trial-relative key (messages and warnings);
/// @param name the step and worker its name gives.
void scan_event_file_records(std::span<const std::byte> bytes, std::string_view rel, const step_file_name& name,
                             parsed_index& out, std::vector<load_warning>& warnings);

}  // namespace trialstat::trial::detail
