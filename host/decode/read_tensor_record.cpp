// SPDX-License-Identifier: Apache-2.0
// Index-driven read of one tensor record (FORMAT §6): pread → framing → Event decode.
#include "trialstat/io/read_tensor_record.hpp"

#include <algorithm>
#include <limits>
#include <new>
#include <string>

#include <fmt/format.h>

namespace trialstat::io {
namespace {

uint64_t load_le64(const std::byte* p) noexcept {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint64_t>(p[i]);
  return v;
}

}  // namespace

status read_tensor_record(const object_reader& file, uint64_t start_bytes, uint64_t length_bytes,
                          record_read_buffers& buffers, event_record& out,
                          record_frame* frame_out) {
  const std::string file_name = file.display_name();
  const auto prefixed = [&](error_code code, std::string_view detail) {
    return status(code, fmt::format("{}: record at byte {}: {}", file_name, start_bytes, detail));
  };

  if (length_bytes < record_framing_bytes) {
    return prefixed(error_code::data_loss,
                    fmt::format("index length {} is smaller than the {} framing bytes of a record",
                                length_bytes, record_framing_bytes));
  }
  const uint64_t file_size = file.size_bytes();
  if (start_bytes > file_size || length_bytes > file_size - start_bytes) {
    return prefixed(error_code::truncated_record,
                    fmt::format("range of {} bytes ends past the end of the file ({} bytes)",
                                length_bytes, file_size));
  }
  const auto length = static_cast<std::size_t>(length_bytes);
  if (buffers.bytes.size() < length + record_padding_bytes) {
    try {
      buffers.bytes.resize(length + record_padding_bytes);
    } catch (const std::bad_alloc&) {
      return prefixed(error_code::out_of_memory,
                      fmt::format("cannot allocate {} bytes for the record",
                                  length + record_padding_bytes));
    }
  }
  std::fill_n(buffers.bytes.begin() + static_cast<std::ptrdiff_t>(length), record_padding_bytes,
              std::byte{0});
  const std::span<std::byte> record(buffers.bytes.data(), length);
  if (status read = file.read_at(start_bytes, record); !read.ok()) {
    return prefixed(read.code(), read.message());
  }

  auto frame = parse_record(record, start_bytes, file_name);
  if (!frame) {
    status failure = frame.error_status();
    if (failure.code() == error_code::truncated_record) {
      // The whole indexed range is present, so a record longer than it is an index mismatch,
      // not a tail still being written.
      return prefixed(error_code::data_loss,
                      fmt::format("index length {} does not match the record size {} (declared "
                                  "payload {} + {} framing bytes)",
                                  length_bytes,
                                  load_le64(record.data()) <=
                                          std::numeric_limits<uint64_t>::max() - record_framing_bytes
                                      ? fmt::format("{}", load_le64(record.data()) +
                                                              record_framing_bytes)
                                      : std::string("> 2^64"),
                                  load_le64(record.data()), record_framing_bytes));
    }
    return failure;  // parse_record's messages already begin with the prefix
  }
  if (frame->size_bytes() != length_bytes) {
    return prefixed(error_code::data_loss,
                    fmt::format("index length {} does not match the record size {} (payload {} + "
                                "{} framing bytes)",
                                length_bytes, frame->size_bytes(), frame->payload.size(),
                                record_framing_bytes));
  }
  if (status decoded = buffers.decoder.decode(frame->payload, out); !decoded.ok()) {
    return prefixed(decoded.code(),
                    fmt::format("{} [payload starts at file byte {}]", decoded.message(),
                                start_bytes + record_header_bytes));
  }
  if (frame_out != nullptr) *frame_out = *frame;
  return status::success();
}

}  // namespace trialstat::io
