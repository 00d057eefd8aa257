// SPDX-License-Identifier: Apache-2.0
// TFRecord framing (FORMAT §2): validation of one record and a sequential scanner that survives
// a corrupt record by resynchronising on the next valid frame.
#include "trialstat/io/record_reader.hpp"

#include <fmt/format.h>

#include "trialstat/io/crc32c.hpp"
#include "trialstat/io/little_endian.hpp"

namespace trialstat::io {
namespace {

/// What `check_frame` found; the message is built only on failure, by the caller.
enum class frame_check : uint8_t {
  ok,
  header_cut,      ///< fewer than 12 bytes
  length_crc,      ///< stored length CRC differs
  body_cut,        ///< payload + footer run past the available bytes
  footer_mismatch  ///< footer is neither the constant nor the payload CRC
};

struct frame_facts {
  frame_check check = frame_check::ok;
  uint64_t declared_length = 0;
  uint32_t stored_length_crc = 0;
  uint32_t expected_length_crc = 0;
  uint32_t stored_footer = 0;
  uint32_t payload_crc = 0;  ///< masked CRC-32C of the payload (only for footer_mismatch)
  footer_kind footer = footer_kind::smdebug_constant;
};

/// Validates without building strings: the scanner's resynchronisation calls this at every offset.
frame_facts check_frame(std::span<const std::byte> bytes) noexcept {
  frame_facts facts;
  if (bytes.size() < record_header_bytes) {
    facts.check = frame_check::header_cut;
    return facts;
  }
  facts.declared_length = load_le64(bytes.data());
  facts.stored_length_crc = load_le32(bytes.data() + 8);
  facts.expected_length_crc = mask_crc32c(crc32c(bytes.first(8)));
  if (facts.stored_length_crc != facts.expected_length_crc) {
    facts.check = frame_check::length_crc;
    return facts;
  }
  // Compare without forming header + length + footer, which can wrap for lengths near 2^64.
  const uint64_t available = bytes.size() - record_header_bytes;
  if (facts.declared_length > available ||
      available - facts.declared_length < record_footer_bytes) {
    facts.check = frame_check::body_cut;
    return facts;
  }
  const auto length = static_cast<std::size_t>(facts.declared_length);
  facts.stored_footer = load_le32(bytes.data() + record_header_bytes + length);
  if (facts.stored_footer == smdebug_footer_magic) {
    facts.footer = footer_kind::smdebug_constant;
    return facts;
  }
  facts.payload_crc = mask_crc32c(crc32c(bytes.subspan(record_header_bytes, length)));
  if (facts.stored_footer == facts.payload_crc) {
    facts.footer = footer_kind::payload_crc;
    return facts;
  }
  facts.check = frame_check::footer_mismatch;
  return facts;
}

status frame_error(const frame_facts& facts, std::size_t available_bytes, uint64_t file_offset,
                   std::string_view file_name) {
  switch (facts.check) {
    case frame_check::header_cut:
      return status(error_code::truncated_record,
                    fmt::format("{}: record at byte {}: header cut short: expected {} header "
                                "bytes, only {} available",
                                file_name, file_offset, record_header_bytes, available_bytes));
    case frame_check::length_crc:
      return status(error_code::data_loss,
                    fmt::format("{}: record at byte {}: length CRC mismatch: stored 0x{:08X}, "
                                "expected masked CRC-32C 0x{:08X} of the length bytes (declared "
                                "payload length {})",
                                file_name, file_offset, facts.stored_length_crc,
                                facts.expected_length_crc, facts.declared_length));
    case frame_check::body_cut:
      return status(error_code::truncated_record,
                    fmt::format("{}: record at byte {}: record cut short: declared payload "
                                "length {} needs {} bytes after the header (payload + footer), "
                                "only {} available",
                                file_name, file_offset, facts.declared_length,
                                facts.declared_length <= UINT64_MAX - record_footer_bytes
                                    ? fmt::format("{}", facts.declared_length + record_footer_bytes)
                                    : fmt::format("{} + {}", facts.declared_length,
                                                  record_footer_bytes),
                                available_bytes - record_header_bytes));
    case frame_check::footer_mismatch:
      return status(error_code::data_loss,
                    fmt::format("{}: record at byte {}: bad footer at byte {}: stored 0x{:08X}, "
                                "expected the smdebug constant 0x{:08X} or the masked payload "
                                "CRC-32C 0x{:08X} (payload length {})",
                                file_name, file_offset,
                                file_offset + record_header_bytes + facts.declared_length,
                                facts.stored_footer, smdebug_footer_magic, facts.payload_crc,
                                facts.declared_length));
    case frame_check::ok:
      break;
  }
  return status::success();
}

}  // namespace

result<record_frame> parse_record(std::span<const std::byte> bytes, uint64_t file_offset,
                                  std::string_view file_name) {
  const frame_facts facts = check_frame(bytes);
  if (facts.check != frame_check::ok) {
    return frame_error(facts, bytes.size(), file_offset, file_name);
  }
  record_frame frame;
  frame.offset_bytes = file_offset;
  frame.payload =
      bytes.subspan(record_header_bytes, static_cast<std::size_t>(facts.declared_length));
  frame.footer = facts.footer;
  return frame;
}

record_scanner::record_scanner(std::span<const std::byte> file_bytes, std::string file_name)
    : bytes_(file_bytes), file_name_(std::move(file_name)) {}

status record_scanner::set_file_bytes(std::span<const std::byte> file_bytes) {
  if (file_bytes.size() < offset_) {
    return status(error_code::invalid_argument,
                  fmt::format("{}: new file bytes ({} bytes) end before the scanner's cursor at "
                              "byte {}",
                              file_name_, file_bytes.size(), offset_));
  }
  bytes_ = file_bytes;
  return status::success();
}

result<record_frame> record_scanner::next() {
  if (offset_ >= bytes_.size()) {
    return status(error_code::end_of_stream,
                  fmt::format("{}: end of file at byte {}", file_name_, offset_));
  }
  const auto start = static_cast<std::size_t>(offset_);
  const auto rest = bytes_.subspan(start);
  const frame_facts facts = check_frame(rest);
  if (facts.check == frame_check::ok) {
    record_frame frame;
    frame.offset_bytes = offset_;
    frame.payload =
        rest.subspan(record_header_bytes, static_cast<std::size_t>(facts.declared_length));
    frame.footer = facts.footer;
    offset_ += frame.size_bytes();
    return frame;
  }
  status failure = frame_error(facts, rest.size(), offset_, file_name_);
  if (failure.code() != error_code::data_loss) return failure;  // truncated: cursor unchanged

  // Corrupt record: find where the next frame begins. A frame whose header is valid but which
  // runs past the end is a tail still being written: stop there so a retry can read it.
  std::size_t resume = bytes_.size();
  for (std::size_t candidate = start + 1; candidate + record_header_bytes <= bytes_.size();
       ++candidate) {
    const frame_check c = check_frame(bytes_.subspan(candidate)).check;
    if (c == frame_check::ok || c == frame_check::body_cut) {
      resume = candidate;
      break;
    }
  }
  offset_ = resume;
  return status(failure.code(),
                fmt::format("{}; skipped to byte {}{}", failure.message(), resume,
                            resume == bytes_.size() ? " (end of file)" : ""));
}

}  // namespace trialstat::io
