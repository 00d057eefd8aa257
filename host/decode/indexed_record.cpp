// SPDX-License-Identifier: Apache-2.0
// The one decode of an indexed record (FORMAT §6): framing → Event decode → the index's checks.
// Failure paths format messages; the success path allocates nothing.
#include "trialstat/decode/indexed_record.hpp"

#include <algorithm>
#include <limits>
#include <new>
#include <string>

#include <fmt/format.h>

#include "trialstat/io/little_endian.hpp"

namespace trialstat::decode {
namespace {

status prefixed(error_code code, std::string_view file_name, uint64_t start_bytes,
                std::string_view detail) {
  return status(code, fmt::format("{}: record at byte {}: {}", file_name, start_bytes, detail));
}

}  // namespace

std::string saved_reduction_tag(std::string_view op_name, bool abs, std::string_view tensor_name) {
  return fmt::format("smdebug/reductions/{}{}/{}", abs ? "abs_" : "", op_name, tensor_name);
}

status decode_indexed_record(std::span<const std::byte> bytes, uint64_t file_size_bytes,
                             const record_expectation& expected, std::string_view file_name,
                             event_decoder& decoder, event_record& out,
                             io::record_frame* frame_out) {
  const uint64_t start = expected.start_bytes;
  const uint64_t length = expected.length_bytes;
  if (length < io::record_framing_bytes) {
    return prefixed(error_code::data_loss, file_name, start,
                    fmt::format("index length {} is smaller than the {} framing bytes of a record",
                                length, io::record_framing_bytes));
  }
  if (bytes.size() < length) {
    return prefixed(error_code::truncated_record, file_name, start,
                    fmt::format("the index says {} bytes but the file ends after {} (file size {} "
                                "bytes)",
                                length, bytes.size(), file_size_bytes));
  }
  const auto record = bytes.first(static_cast<std::size_t>(length));
  auto frame = io::parse_record(record, start, file_name);
  if (!frame) {
    if (frame.error_status().code() == error_code::truncated_record) {
      // The whole indexed range is present, so a record longer than it is an index mismatch,
      // not a tail still being written.
      const uint64_t declared = io::load_le64(record.data());
      return prefixed(error_code::data_loss, file_name, start,
                      fmt::format("index length {} does not match the record size {} (declared "
                                  "payload {} + {} framing bytes)",
                                  length,
                                  declared <= std::numeric_limits<uint64_t>::max() -
                                                  io::record_framing_bytes
                                      ? fmt::format("{}", declared + io::record_framing_bytes)
                                      : std::string("> 2^64"),
                                  declared, io::record_framing_bytes));
    }
    return frame.error_status();  // parse_record's messages already begin with the prefix
  }
  if (frame->size_bytes() != length) {
    return prefixed(error_code::data_loss, file_name, start,
                    fmt::format("index length {} does not match the record size {} (payload {} + "
                                "{} framing bytes)",
                                length, frame->size_bytes(), frame->payload.size(),
                                io::record_framing_bytes));
  }
  if (status decoded = decoder.decode(frame->payload, out); !decoded.ok()) {
    return prefixed(decoded.code(), file_name, start,
                    fmt::format("{} [payload starts at file byte {}]", decoded.message(),
                                start + io::record_header_bytes));
  }
  if (!expected.tag.empty() && out.tag != expected.tag) {
    return prefixed(error_code::data_loss, file_name, start,
                    fmt::format("holds '{}' but the index says '{}'", out.tag, expected.tag));
  }
  if (expected.one_number && (!dtype_is_real_numeric(out.type) || out.num_elements != 1)) {
    return prefixed(error_code::data_loss, file_name, start,
                    fmt::format("'{}': a saved reduction must be one number, found {} {} "
                                "element(s)",
                                out.tag, out.num_elements, dtype_name(out.type)));
  }
  if (frame_out != nullptr) *frame_out = *frame;
  return status::success();
}

status read_tensor_record(const io::object_reader& file, const record_expectation& expected,
                          record_read_buffers& buffers, event_record& out,
                          io::record_frame* frame_out) {
  const std::string file_name = file.display_name();
  const uint64_t file_size = file.size_bytes();
  const uint64_t start = expected.start_bytes;
  // Only the bytes the file has are read (a huge or far index entry allocates nothing); the
  // decode reports a range that ends past the end.
  const uint64_t available =
      start < file_size ? std::min(expected.length_bytes, file_size - start) : uint64_t{0};
  const auto size = static_cast<std::size_t>(available);
  if (buffers.bytes.size() < size + io::record_padding_bytes) {
    try {
      buffers.bytes.resize(size + io::record_padding_bytes);
    } catch (const std::bad_alloc&) {
      return prefixed(error_code::out_of_memory, file_name, start,
                      fmt::format("cannot allocate {} bytes for the record",
                                  size + io::record_padding_bytes));
    }
  }
  std::fill_n(buffers.bytes.begin() + static_cast<std::ptrdiff_t>(size), io::record_padding_bytes,
              std::byte{0});
  const std::span<std::byte> record(buffers.bytes.data(), size);
  if (size > 0 && expected.length_bytes >= io::record_framing_bytes) {
    if (status read = file.read_at(start, record); !read.ok()) {
      return prefixed(read.code(), file_name, start, read.message());
    }
  }
  return decode_indexed_record(record, file_size, expected, file_name, buffers.decoder, out,
                               frame_out);
}

}  // namespace trialstat::decode
