// SPDX-License-Identifier: Apache-2.0
/// @file record_reader.hpp
/// @brief TFRecord framing of event files. Source: spec/FORMAT.md §2 (and TSL record_reader).
///
/// Layout of one record (all little-endian):
///   offset 0        u64 length                 payload length in bytes
///   offset 8        u32 masked_crc32c(bytes 0..8)
///   offset 12       payload                    one serialized `Event`
///   offset 12+len   u32 footer                 smdebug: masked_crc32c("0x12345678") = 0x062DC0B3;
///                                              TensorBoard: masked_crc32c(payload)
/// Index `length` values include the 16 framing bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "trialstat/status.hpp"

namespace trialstat::io {

inline constexpr std::size_t record_header_bytes = 12;  ///< u64 length + u32 length CRC
inline constexpr std::size_t record_footer_bytes = 4;   ///< u32 footer
inline constexpr std::size_t record_framing_bytes = record_header_bytes + record_footer_bytes;
/// @brief smdebug's footer constant: masked CRC-32C of the 10 ASCII bytes "0x12345678".
inline constexpr uint32_t smdebug_footer_magic = 0x062DC0B3u;

/// @brief Which footer a record carried (both are accepted; anything else is data_loss).
enum class footer_kind : uint8_t { smdebug_constant, payload_crc };

/// @brief One validated record: where it is and a view of its payload.
struct record_frame {
  uint64_t offset_bytes = 0;             ///< offset of the record's first byte in its file
  std::span<const std::byte> payload;    ///< the serialized Event (a view into the caller's bytes)
  footer_kind footer = footer_kind::smdebug_constant;
  /// @brief Whole record size including framing (= payload + 16).
  [[nodiscard]] uint64_t size_bytes() const noexcept { return payload.size() + record_framing_bytes; }
};

/// @brief Validate the record starting at `bytes[0]`.
/// @param bytes       the record's bytes; may extend past the record (the rest is ignored)
/// @param file_offset offset of `bytes[0]` in its file (for messages and `record_frame`)
/// @param file_name   the file's path (for messages)
/// @return the frame, or:
///   - truncated_record: `bytes` ends inside the header, or before payload+footer (a record cut
///     short at the tail, or a declared length larger than what remains of the file);
///   - data_loss: the length CRC does not match, or the footer is neither the smdebug constant
///     nor the masked payload CRC.
/// Messages name the file, the byte offset and what was expected; they begin
/// "<file_name>: record at byte <file_offset>: ". A declared length of any u64 value is safe
/// (no overflow, no allocation). Synchronous, thread-safe; the payload CRC is computed only when
/// the footer is not the smdebug constant.
[[nodiscard]] result<record_frame> parse_record(std::span<const std::byte> bytes,
                                                uint64_t file_offset, std::string_view file_name);

/// @brief Walks the records of one whole event file held in memory (used when a step has no
/// index file). A failed `next()` leaves the cursor unchanged except where documented.
class record_scanner {
 public:
  /// @param file_bytes the complete file, without padding (its size is the file size)
  /// @param file_name  the file's path, for messages
  record_scanner(std::span<const std::byte> file_bytes, std::string file_name);

  /// @brief The next record.
  /// @return end_of_stream at a clean end of file (cursor at the end);
  ///   truncated_record when the last record is cut short (cursor unchanged: retry after the
  ///   file grew); data_loss for a corrupt record: the cursor then moves to the next offset
  ///   where a valid record frame begins (or the end), so one corrupt record costs that record
  ///   only — call `next()` again to continue. The resynchronisation stops at the first later
  ///   offset holding a valid record (length CRC and footer valid), or at one whose header is
  ///   valid but whose record runs past the end (a tail still being written); else at the end.
  ///   Messages begin "<file>: record at byte <offset>: ".
  [[nodiscard]] result<record_frame> next();

  /// @brief Offset of the next record to read.
  [[nodiscard]] uint64_t offset_bytes() const noexcept { return offset_; }

  /// @brief Replace the bytes with a newer, longer copy of the same file (re-read after it
  /// grew), keeping the cursor, so a `next()` that returned truncated_record can be retried.
  /// @return invalid_argument (nothing changed) when `file_bytes` is shorter than the cursor.
  [[nodiscard]] status set_file_bytes(std::span<const std::byte> file_bytes);

 private:
  std::span<const std::byte> bytes_;
  std::string file_name_;
  uint64_t offset_ = 0;
};

}  // namespace trialstat::io
