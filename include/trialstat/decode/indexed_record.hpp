// SPDX-License-Identifier: Apache-2.0
/// @file indexed_record.hpp
/// @brief The one decode of an indexed tensor record (FORMAT §6: "seek to start_idx, read
/// length bytes, parse one record, take summary.value[0].tensor"): verify the TFRecord framing
/// against the index entry, decode the Event, and check what the index says it holds.
///
/// Two entry points, one decode:
///   - `decode_indexed_record` works on bytes already in memory. The statistics stage's step
///     reader (host/pipeline/step_reader.cpp) calls it for every raw tensor and saved-reduction
///     record it reads, on the event file's buffer (numeric content stays a view into it);
///   - `read_tensor_record` preads one record into reusable buffers and then calls
///     `decode_indexed_record`. Callers: the Python `Tensor.value` path
///     (tools/python/core_module.cpp) and `trialstat bench` (tools/trialstat/cmd_bench.cpp).
/// Rules never read records: what they need is requested in the read plan and delivered in
/// `stats::statistics_record` (docs/architecture.md §2.6).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/decode/event_decoder.hpp"
#include "trialstat/io/file_reader.hpp"  // the local object_reader, for callers
#include "trialstat/io/object_reader.hpp"
#include "trialstat/io/record_reader.hpp"
#include "trialstat/status.hpp"

namespace trialstat::decode {

/// @brief What an index entry says about one record (FORMAT §6), checked by
/// `decode_indexed_record`.
struct record_expectation {
  uint64_t start_bytes = 0;   ///< index `start_idx`: offset of the record's first byte
  uint64_t length_bytes = 0;  ///< index `length`: the whole record (payload + 16 framing bytes)
  /// The Summary.Value.tag the record must hold: the tensor name for a raw tensor,
  /// "smdebug/reductions/[abs_]<op>/<name>" for a saved reduction (FORMAT §7). Empty: not
  /// checked (the caller has no name for it).
  std::string_view tag;
  /// A saved reduction: the record must hold exactly one element of a real numeric dtype.
  bool one_number = false;
};

/// @brief The tag of a saved-reduction record: "smdebug/reductions/[abs_]<op>/<tensor>"
/// (FORMAT §7), e.g. ("l2", true, "fc.weight") → "smdebug/reductions/abs_l2/fc.weight".
/// @param op_name  the reduction's smdebug name (trial::reduction_name: "min", "l2", ...)
[[nodiscard]] std::string saved_reduction_tag(std::string_view op_name, bool abs,
                                              std::string_view tensor_name);

/// @brief Verify and decode one indexed record held in memory.
/// @param bytes            the record's bytes as loaded: from its first byte, as many as the file
///                         has, up to `expected.length_bytes` (fewer = the file ends inside it);
///                         no padding is needed
/// @param file_size_bytes  the file's size as known to the caller (messages only)
/// @param expected         the index entry's location, tag and kind
/// @param file_name        the event file's trial-relative key or path (messages only)
/// @param decoder          reused across calls (one per thread); its scratch holds typed fields
/// @param out              the decoded record: views into `bytes` (numeric `tensor_content`,
///                         strings, tag) or into `decoder`'s scratch (typed-field fallbacks),
///                         valid until the next decode on `decoder`; unspecified after a failure
/// @param frame_out        optional: receives the validated frame (its payload views `bytes`)
/// @return ok, or a status whose message begins "<file_name>: record at byte <start_bytes>: ":
///   - truncated_record: `bytes` holds fewer than `length_bytes` (a record cut short at the tail
///     of a file still being written: retry after it grew);
///   - data_loss: `length_bytes` < 16; a bad length CRC or footer (io::parse_record); a record
///     whose own size (payload + 16) differs from `length_bytes`; a malformed Event (the
///     decoder's message, with the payload's file offset); a tag other than `expected.tag`; with
///     `one_number`, not exactly one real number;
///   - unsupported_dtype: an unknown DataType number (named, with the tag);
///   - out_of_memory: the decoder's scratch could not grow.
/// Synchronous; deterministic; allocates nothing on success once `decoder` and `out` reached
/// their sizes (messages are formatted only on failure); never reads outside `bytes`.
/// Source: smdebug `TensorLocation` reads of `IndexReader`, spec/FORMAT.md §2, §3–§6.
[[nodiscard]] status decode_indexed_record(std::span<const std::byte> bytes,
                                           uint64_t file_size_bytes,
                                           const record_expectation& expected,
                                           std::string_view file_name, event_decoder& decoder,
                                           event_record& out, io::record_frame* frame_out = nullptr);

/// @brief Reusable buffers for `read_tensor_record`: the record's bytes (with
/// `io::record_padding_bytes` of zeroed tail padding) and the decoder with its scratch. Keep one
/// per thread; steady-state reads of records no larger than earlier ones do not allocate.
struct record_read_buffers {
  std::vector<std::byte> bytes;  ///< the last record read, framing included, then padding
  event_decoder decoder;
};

/// @brief Pread the record `expected` names from `file` (as many of its bytes as the file has)
/// and decode it with `decode_indexed_record`.
/// @param file      an open event file (local or S3); its size is `file.size_bytes()` (as of
///                  open or the last `refresh_size`)
/// @param expected  the index entry (start, length, optional tag)
/// @param buffers   reused across calls; `out`'s views point into `buffers`
/// @param out       the decoded record; unspecified after a failure
/// @param frame_out optional: receives the validated frame (its payload views `buffers`)
/// @return as `decode_indexed_record` (truncated_record when the range ends past the file's
///   size: refresh and retry for a growing file), plus the read's own errors, prefixed the same
///   way: io_error when the OS read failed, out_of_memory when the buffer could not grow.
/// Synchronous; thread-safe for distinct `buffers`/`out`. Source: as `decode_indexed_record`.
[[nodiscard]] status read_tensor_record(const io::object_reader& file,
                                        const record_expectation& expected,
                                        record_read_buffers& buffers, event_record& out,
                                        io::record_frame* frame_out = nullptr);

}  // namespace trialstat::decode
