// SPDX-License-Identifier: Apache-2.0
// Internal to host/trial: the parsed form of one index JSON file (spec/FORMAT.md §6), shared by
// the index path and the event-file scan fallback. Not a public header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/mode.hpp"
#include "trialstat/status.hpp"

namespace trialstat::trial::detail {

/// @brief One index file (or one scanned event file), flattened: every name lives in one arena
/// so parsing a file does not allocate per entry once the buffers have grown.
struct parsed_index {
  struct tensor_item {
    uint32_t name_offset = 0;
    uint32_t name_length = 0;
    uint64_t start_bytes = 0;
    uint64_t length_bytes = 0;
  };
  struct shape_item {
    uint32_t name_offset = 0;
    uint32_t name_length = 0;
    uint32_t dims_offset = 0;
    uint32_t dims_count = 0;
  };

  std::optional<trialstat::mode> mode;
  std::optional<int64_t> mode_step;
  bool has_event_file_name = false;
  std::string event_file_name;
  std::string names;  ///< arena of tensor names
  std::vector<tensor_item> tensors;
  std::vector<shape_item> shapes;
  std::vector<int64_t> dims;

  void clear() {
    mode.reset();
    mode_step.reset();
    has_event_file_name = false;
    event_file_name.clear();
    names.clear();
    tensors.clear();
    shapes.clear();
    dims.clear();
  }
  [[nodiscard]] std::string_view name(uint32_t offset, uint32_t length) const {
    return std::string_view(names).substr(offset, length);
  }
  void add_tensor(std::string_view name, uint64_t start_bytes, uint64_t length_bytes) {
    tensors.push_back({static_cast<uint32_t>(names.size()), static_cast<uint32_t>(name.size()),
                       start_bytes, length_bytes});
    names.append(name);
  }
};

/// @brief Parse the text of one index file into `out` (cleared first).
/// @return ok; or data_loss with a message saying what was expected where (the caller adds the
///   file name): unparsable JSON (with nlohmann's byte position), a top level that is not an
///   object, missing or empty `meta`, `meta.mode` not a mode name, `meta.mode_step` not an
///   integer, neither `tensor_payload` nor `shape_payload`, an item with a missing or mistyped
///   field, a negative `start_idx`/`length`/dimension, or a non-empty `tensor_payload` without
///   `meta.event_file_name`. Unknown keys are ignored. Source: smdebug IndexReader._validate
///   and _update_tensors_from_json.
///   Most files take a fast tokenizer for the json.dumps subset; anything outside it is parsed
///   by nlohmann-json, with identical results (tests/trial/index_json_test.cpp checks both).
[[nodiscard]] status parse_index_json(std::string_view text, parsed_index& out);

/// @brief `parse_index_json` through nlohmann-json only (the reference for the fast path).
[[nodiscard]] status parse_index_json_nlohmann(std::string_view text, parsed_index& out);

}  // namespace trialstat::trial::detail
