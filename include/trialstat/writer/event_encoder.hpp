// SPDX-License-Identifier: Apache-2.0
/// @file event_encoder.hpp
/// @brief Serializes one tensor as a complete TFRecord record holding an smdebug `Event`,
/// byte for byte as smdebug 1.0.34's `FileWriter.write_tensor` does.
/// Source: spec/FORMAT.md §2–§5 (smdebug/core/tfevent/event_file_writer.py, tfrecord/record_writer.py).
///
/// The payload is hand-encoded (no message objects) so that a tensor's element bytes can be
/// streamed to disk straight from the caller's buffer: a record is returned in three parts,
/// `head` (framing + every payload byte before the element bytes), the element bytes themselves
/// (not copied) and `tail` (the payload bytes after them + footer). Fields are written in
/// field-number order with proto3 default omission, exactly like the generated protobuf classes
/// smdebug uses; `tests/writer/event_encoder_test.cpp` proves byte identity against both the
/// golden smdebug trials and the generated classes (`proto/`), for every dtype.
///
/// Wire layout of the payload (proto3, field numbers of FORMAT §3):
///   Event{ 1 wall_time (omitted when its bits are 0), 2 step (omitted when 0),
///          5 summary{ 1 value{ 1 tag,
///                              8 tensor{ 1 dtype (omitted when 0),
///                                        2 tensor_shape{ 2 dim{1 size (omitted when 0),
///                                                              2 name "<tag>_<size>"}... }
///                                          (always present, empty for 0-d),
///                                        4 tensor_content (omitted when empty)
///                                        | 8 string_val... (string tensors) },
///                              9 metadata{ 1 plugin_data{1 "mode_step", 2 "<n>"},
///                                          1 plugin_data{1 "mode", 2 "<1..4>"} } } } }
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/mode.hpp"
#include "trialstat/status.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::writer {

/// @brief Which 4-byte footer follows each payload (FORMAT §2).
enum class footer_policy : uint8_t {
  /// smdebug's event files (`write_checksum=False`): the constant masked_crc32c("0x12345678")
  /// = 0x062DC0B3. What the hook writes, and what smdebug's default reader requires.
  smdebug_constant,
  /// The true masked CRC-32C of the payload (TensorBoard files, `write_checksum=True`).
  /// smdebug's default ("minimal") reader rejects such files; trialstat accepts both.
  payload_crc,
};

/// @brief The Event-level fields of one tensor record.
struct event_header {
  double wall_time = 0.0;  ///< seconds since the epoch (smdebug: `time.time()` at write)
  int64_t step = 0;        ///< global step of the file; must be >= 0
  std::string_view tag;    ///< tensor name (or `smdebug/reductions/...`); must be non-empty
  trialstat::mode mode = trialstat::mode::train;  ///< plugin data "mode" (its number)
  /// plugin data "mode_step" (decimal); >= −1 (−1: a mode that has not stepped yet, which
  /// smdebug writes for a scalar flushed right after `set_mode`, HOOK_API §6.5)
  int64_t mode_step = 0;
};

/// @brief One record in three pieces; the record is `head + content + tail`.
/// `content` aliases the caller's tensor bytes (valid as long as they are).
struct record_parts {
  std::vector<std::byte> head;          ///< 12 framing bytes + payload bytes before the content
  std::span<const std::byte> content;   ///< element bytes, not copied (empty for strings/empty)
  std::vector<std::byte> tail;          ///< payload bytes after the content + 4-byte footer
  /// @brief Whole record size in bytes (payload + 16); the index file's `length`.
  [[nodiscard]] uint64_t size_bytes() const noexcept {
    return head.size() + content.size() + tail.size();
  }
};

/// @brief Encode a numeric tensor record in pieces (for streaming; nothing is copied from
/// `tensor.data`).
/// @param header  Event fields; `header.tag` is also the dim-name prefix ("<tag>_<size>")
/// @param tensor  dense C-order little-endian elements; `shape` outermost first, empty = 0-d;
///                `num_elements` must equal the product of `shape` (1 for 0-d). Zero elements
///                are allowed (smdebug's FileWriter writes them with no `tensor_content`; the
///                hook drops them). NaN/Inf are just bytes here. Any fixed-size dtype of
///                dtype.hpp is accepted (bfloat16 too, although smdebug never writes it).
/// @param footer  which footer to write
/// @return the parts, or invalid_argument (empty tag, negative step/mode_step/dim, a shape whose
///   product differs from `num_elements`, null data with elements, a dtype without a fixed size
///   — string/invalid: use `encode_string_record` —, a non-host `memory_kind`), naming the tag.
/// Synchronous, thread-safe, deterministic.
[[nodiscard]] result<record_parts> encode_tensor_record_parts(const event_header& header,
                                                              const tensor_view& tensor,
                                                              footer_policy footer);

/// @brief `encode_tensor_record_parts` joined into one contiguous record (tests, small tensors).
[[nodiscard]] result<std::vector<std::byte>> encode_tensor_record(const event_header& header,
                                                                  const tensor_view& tensor,
                                                                  footer_policy footer);

/// @brief Encode a string tensor record as smdebug writes a numpy str array (FORMAT §4):
/// `dtype` left 0 (DT_INVALID, omitted), one dim of size `values.size()`, one `string_val`
/// item per value (bytes as given, UTF-8 expected). `content` of the result is empty.
/// @return the record, or invalid_argument (as above; also an empty `values`, which smdebug's
///   reader rejects).
[[nodiscard]] result<record_parts> encode_string_record_parts(const event_header& header,
                                                              std::span<const std::string> values,
                                                              footer_policy footer);

/// @brief The serialized `Event` payload alone (no framing) of a numeric tensor record, for
/// tests that feed a decoder directly. Errors as `encode_tensor_record_parts`.
[[nodiscard]] result<std::vector<std::byte>> encode_tensor_payload(const event_header& header,
                                                                   const tensor_view& tensor);

/// @brief The smdebug reduction record name `smdebug/reductions/[abs_]<op>/<tensor>` (FORMAT §7).
/// `op` is one of min, max, mean, std, variance, sum, prod, l1, l2 (not checked here). Outside
/// TensorFlow smdebug deletes every `:\d+` from the composed name; so does this function.
[[nodiscard]] std::string reduction_tag(std::string_view tensor_name, std::string_view op, bool abs);

}  // namespace trialstat::writer
