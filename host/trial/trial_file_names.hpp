// SPDX-License-Identifier: Apache-2.0
// Internal to host/trial: the naming rules of a trial (spec/FORMAT.md §1, §7) — the names of its
// index, event and collections files and of its end marker, and the names of the reduction
// records inside its event files. Pure functions of strings; no source, no catalog state.
// Not a public header (the public reduction names are in trialstat/trial/catalog.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "trialstat/trial/catalog.hpp"

namespace trialstat::trial::detail {

/// @brief The end marker's key, relative to the trial root (FORMAT §1): smdebug writes it after
/// every index and event file of the job.
inline constexpr std::string_view end_marker_key = "training_job_end.ts";

/// @brief The prefix of every reduction record name (FORMAT §7).
inline constexpr std::string_view reductions_prefix = "smdebug/reductions/";

/// @brief Whether the basename of `rel` ends with `ext` (e.g. ".json", ".tfevents"): the files
/// of a folder that are candidates at all (`*.tmp` being written, `*.csv` and others are not).
[[nodiscard]] bool has_extension(std::string_view rel, std::string_view ext) noexcept;

/// @brief smdebug's deserialize_tf_device: every `_` becomes `/`, then every `-` becomes `:`
/// ("_job-worker_replica-0" → "/job:worker/replica:0"). Source: smdebug
/// `smdebug.core.utils.deserialize_tf_device`.
[[nodiscard]] std::string deserialize_tf_device(std::string_view name);

/// @brief The step and worker an index or event file name gives.
struct step_file_name {
  int64_t step = 0;    ///< global step (the name's leading digits)
  std::string worker;  ///< worker name, de-serialized where smdebug does
};

/// @brief Parse `^(\d+)_(.+)\.<ext>$` on the basename of `rel` (FORMAT §1, §6:
/// "index/000000000/000000000005_worker_0.json", "events/000000000005/000000000005_worker_0.tfevents").
/// The worker is de-serialized (`deserialize_tf_device`) when `rel` contains `__` (smdebug
/// parse_worker_name_from_file). smdebug tests its full path, root included; this tests the
/// trial-relative path, so where a trial happens to live (e.g. /tmp/my__runs/) cannot rename
/// its workers.
/// @param rel the trial-relative key ('/'-separated); @param ext the extension, dot included.
/// @return nullopt when the basename does not match (no leading digits, no `_` after them, an
///   empty worker, another extension, or a step outside int64).
[[nodiscard]] std::optional<step_file_name> parse_step_file_name(std::string_view rel, std::string_view ext);

/// @brief Parse a collections file name, `collections/<folder>/<worker>_collections.(json|ts)`
/// (FORMAT §8; smdebug's `.*/collections/.+/(.+)_collections\.(json|ts)$` on the path). The
/// worker is de-serialized when it starts with `_` (smdebug get_worker_name_from_collection_file).
/// @param rel the trial-relative key; @param is_json set to whether the file is `.json` (only
///   when the name matches).
/// @return the worker name, or nullopt when `rel` is not a collections file name.
[[nodiscard]] std::optional<std::string> parse_collection_file_name(std::string_view rel, bool* is_json);

/// @brief A reduction record name, `smdebug/reductions/[abs_]<op>/<tensor>` (FORMAT §7), taken apart.
struct reduction_record_name {
  reduction_op op = reduction_op::min;
  bool abs = false;
  std::string_view tensor;  ///< the base tensor's name (a view into the parsed name)
};

/// @brief Whether `name` starts with `reductions_prefix` (a reduction record, well-formed or not).
[[nodiscard]] bool is_reduction_record_name(std::string_view name) noexcept;

/// @brief Parse a reduction record name.
/// @return nullopt when `name` lacks the prefix, has no `/` after the reduction, an empty tensor
///   name, or a reduction other than min, max, mean, std, variance, sum, prod, l1, l2.
[[nodiscard]] std::optional<reduction_record_name> parse_reduction_record_name(std::string_view name) noexcept;

}  // namespace trialstat::trial::detail
