// SPDX-License-Identifier: Apache-2.0
// A small trial written by trialstat's own writer (trial_writer): the seed of the fuzz corpora
// (make_fuzz_seeds) and the fixed trial the collections target loads with a fuzzed collections
// file.
#pragma once

#include <filesystem>

#include "trialstat/status.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat::fuzz {

/// @brief Worker name of the sample trial's files.
inline constexpr const char* sample_worker = "worker_0";

/// @brief Write the sample trial under `root` (created): three steps (TRAIN 0 and 1, EVAL 2) of
/// float32, float64, int64, bool, float16, 0-d and empty tensors, a string tensor, reduction
/// records and a shape-only entry, with PyTorch's default collections plus one with
/// `include_regex`, reductions and save configs; record footers as `footer` says.
/// Errors: io_error from the writer.
[[nodiscard]] status write_sample_trial(
    const std::filesystem::path& root,
    writer::footer_policy footer = writer::footer_policy::smdebug_constant);

}  // namespace trialstat::fuzz
