// SPDX-License-Identifier: Apache-2.0
// Internal to host/trial: the parser of a collections file (spec/FORMAT.md §8). Pure: bytes in,
// collections and warnings out — no source, no catalog state — so the catalog, the unit tests
// and the collections fuzzer (tests/fuzz/fuzz_collections_json.cpp) call the same function.
// Not a public header.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "trialstat/status.hpp"
#include "trialstat/trial/catalog.hpp"
#include "trialstat/trial/name_regex.hpp"

namespace trialstat::trial::detail {

/// @brief What one collections file gave.
struct parsed_collections {
  /// The collections in file order, one per key of `"collections"` whose value is an object.
  /// A mistyped field keeps its default (see `parse_collections_json`).
  std::vector<collection> collections;
  /// [collections.size()]: the `include_regex` patterns of each collection that compile, in
  /// file order (a pattern that does not compile matches nothing and is a warning).
  std::vector<std::vector<name_regex>> include_regexes;
  /// `_meta.num_workers` when it is an integer in [1, 2^30); nullopt when absent or invalid.
  std::optional<int> num_workers;
  /// Problems met: the top level's, `_meta`'s, then each collection's in file order; every
  /// message starts with "collections file <file_name>: ".
  std::vector<status> warnings;
};

/// @brief Parse the text of one collections file (FORMAT §8; smdebug
/// CollectionManager.load / Collection.from_dict). Never fails: a malformed file or field is a
/// warning, and what could be read is kept. The warnings (code, message):
///  - data_loss `expected a JSON object with "collections" and "_meta"; no collections loaded`:
///    not valid JSON, or a top level that is not an object (nothing else is read);
///  - data_loss `_meta.num_workers: expected a positive integer` (the collections are still read);
///  - data_loss `"collections": expected an object` (absent or mistyped; no collections);
///  - data_loss `collection '<key>': expected an object` (that collection is skipped);
///  - data_loss `collection '<name>': <problems> (those fields use defaults)`, the problems joined
///    by "; ": `include_regex`/`tensor_names`: expected a list of strings (nested lists are
///    flattened, as smdebug does, their non-strings dropped); `save_histogram: expected a
///    boolean`; `reduction_config: expected an object`; `reduction_config.save_raw_tensor` /
///    `.save_shape: expected a boolean`; `reduction_config.reductions: expected a string`;
///    `save_config: expected an object keyed by mode`; `save_config.<MODE>: expected an object
///    or null`; `save_config.<MODE>.save_interval` / `.start_step: expected an integer`;
///    `save_config.<MODE>.end_step: expected an integer or null`; `save_config.<MODE>.save_steps:
///    expected integers` / `expected a list` (a mode with any of these keeps no save config);
///  - invalid_argument `collection '<name>': <name_regex's error>; that pattern matches nothing`.
/// JSON null means absent everywhere; unknown keys and unknown mode names are ignored; a
/// collection's `name` field (when a string) overrides its key.
/// @param text the file's bytes (any content); @param file_name the file as messages name it
///   (the trial-relative key).
[[nodiscard]] parsed_collections parse_collections_json(std::string_view text, std::string_view file_name);

}  // namespace trialstat::trial::detail
