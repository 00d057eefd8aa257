// SPDX-License-Identifier: Apache-2.0
/// @file read_tensor_record.hpp
/// @brief Read one indexed tensor record: pread its byte range, verify the TFRecord framing and
/// decode the Event. The index-driven read of FORMAT §6 ("seek to start_idx, read length bytes,
/// parse one record, take summary.value[0].tensor"), used by the catalog and pipeline stages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "trialstat/io/event_decoder.hpp"
#include "trialstat/io/file_reader.hpp"  // the local object_reader, for callers
#include "trialstat/io/object_reader.hpp"
#include "trialstat/io/record_reader.hpp"
#include "trialstat/status.hpp"

namespace trialstat::io {

/// @brief Reusable buffers for `read_tensor_record`: the record's bytes (with
/// `record_padding_bytes` of zeroed tail padding) and the decoder with its scratch. Keep one per
/// thread; steady-state reads of records no larger than earlier ones do not allocate.
struct record_read_buffers {
  std::vector<std::byte> bytes;  ///< the last record read, framing included, then padding
  event_decoder decoder;
};

/// @brief Read, verify and decode the record at `[start_bytes, start_bytes + length_bytes)` of
/// `file`, where `length_bytes` includes the 16 framing bytes (an index `length`, FORMAT §6).
/// @param file          an open event file (local or S3)
/// @param start_bytes   offset of the record's first byte (index `start_idx`)
/// @param length_bytes  whole record size (index `length`) = payload + 16
/// @param buffers       reused across calls; `out`'s views point into `buffers`
/// @param out           the decoded record; unspecified after a failure
/// @param frame_out     optional: receives the validated frame (its payload views `buffers`)
/// @return ok, or a status whose message begins "<file>: record at byte <start_bytes>: ":
///   - truncated_record: the range ends past the file's size (`file.size_bytes()`, as of open
///     or the last `refresh_size`) — refresh and retry for a growing file;
///   - data_loss: `length_bytes` < 16, or not equal to the record's own size (payload + 16),
///     a bad length CRC or footer, or a malformed Event (decoder message, payload offsets);
///   - unsupported_dtype: an unknown DataType (named, with the tag);
///   - io_error: the OS read failed; out_of_memory: the buffer could not grow.
/// Synchronous; thread-safe for distinct `buffers`/`out`. Source: smdebug
/// `IndexReader.read_index_files` + `TensorLocation` reads, spec/FORMAT.md §2, §6.
[[nodiscard]] status read_tensor_record(const object_reader& file, uint64_t start_bytes,
                                        uint64_t length_bytes, record_read_buffers& buffers,
                                        event_record& out, record_frame* frame_out = nullptr);

}  // namespace trialstat::io
