// SPDX-License-Identifier: Apache-2.0
// Internal to host/trial: the parsed form of one index JSON file (spec/FORMAT.md §6), shared by
// the index path and the event-file scan fallback, and the simdjson-based parser that fills it.
// Not a public header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
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
  /// Top-level keys the schema does not use (e.g. a misspelt "tensor_Payload"), in file order.
  std::vector<std::string> unknown_keys;

  void clear() {
    unknown_keys.clear();
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

/// @brief Bytes that must be readable (any content; zeros in practice) after the text handed to
/// `index_json_parser::parse`: simdjson's SIMDJSON_PADDING (index_json.cpp checks the value).
/// `io::read_file` buffers carry `io::record_padding_bytes` of them, which is at least this.
inline constexpr std::size_t index_json_padding_bytes = 64;

/// @brief Parses index files (spec/FORMAT.md §6) with simdjson's On-Demand API: no DOM, and the
/// simdjson parser and its buffers are reused from file to file, so a catalog load keeps one
/// `index_json_parser` and pays for no per-entry allocation once the buffers have grown.
/// Not thread-safe: one parser per thread.
class index_json_parser {
 public:
  index_json_parser();
  ~index_json_parser();
  index_json_parser(index_json_parser&&) noexcept;
  index_json_parser& operator=(index_json_parser&&) noexcept;
  index_json_parser(const index_json_parser&) = delete;
  index_json_parser& operator=(const index_json_parser&) = delete;

  /// @brief Parse the text of one index file into `out` (cleared first).
  /// @param text the file's bytes; `buffer_size_bytes` bytes starting at `text.data()` must be
  ///   readable, at least `text.size() + index_json_padding_bytes` (an `io::read_file` buffer:
  ///   pass its `size()`).
  /// @return ok; invalid_argument when the buffer is not padded; out_of_memory when simdjson
  ///   cannot allocate; or data_loss with a message saying what was expected where (the caller
  ///   adds the file name): not valid JSON (`not valid JSON (byte N): <simdjson's reason>`, the
  ///   byte where simdjson stopped when it knows it; anything outside RFC 8259 is rejected,
  ///   including inside ignored keys, and trailing content), a top level that is not an object,
  ///   missing or empty `meta`, `meta.mode` not a mode name, `meta.mode_step` not a
  ///   non-negative integer, neither `tensor_payload` nor `shape_payload`, an item with a
  ///   missing or mistyped field (e.g. `tensor_payload[3]: expected "start_idx" to be a
  ///   non-negative integer, got a string`), a negative or fractional `start_idx`/`length`/
  ///   dimension, or a non-empty `tensor_payload` without `meta.event_file_name`. Unknown keys
  ///   are ignored (but must be valid JSON). A repeated key is read again in document order (the
  ///   last value wins; repeated payload arrays add up). An integer literal outside 64 bits is
  ///   "a floating-point number", as in Python/nlohmann. Source: smdebug IndexReader._validate
  ///   and _update_tensors_from_json.
  [[nodiscard]] status parse(std::string_view text, std::size_t buffer_size_bytes, parsed_index& out);

  /// @brief `parse` for text without padding (tests, small inputs): copied into an internal
  /// padded buffer first.
  [[nodiscard]] status parse_unpadded(std::string_view text, parsed_index& out);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace trialstat::trial::detail
