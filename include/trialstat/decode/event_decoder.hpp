// SPDX-License-Identifier: Apache-2.0
/// @file event_decoder.hpp
/// @brief Decodes one event payload (Event → Summary → Value → TensorProto) by walking the
/// protobuf wire format directly, without materialising messages. Source: spec/FORMAT.md §3–§5.
///
/// Callers: `decode::decode_indexed_record` (decode/indexed_record.hpp) — the one decode of an
/// indexed record, used by the statistics stage's step reader and by `read_tensor_record` (the
/// Python `Tensor.value` path, `trialstat bench`) —, the catalog's scan of event files that
/// have no index file (host/trial), and the decode tests and fuzzers.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "trialstat/dtype.hpp"
#include "trialstat/mode.hpp"
#include "trialstat/status.hpp"
#include "trialstat/tensor_view.hpp"

namespace trialstat::decode {

/// @brief One decoded tensor record. String views and `content` point into the payload passed
/// to `event_decoder::decode` (or into the decoder's scratch, for typed-field fallbacks): they
/// stay valid until the next `decode` call on the same decoder or until the payload is freed.
struct event_record {
  double wall_time = 0.0;        ///< Event.wall_time, seconds since the epoch
  int64_t step = 0;              ///< Event.step: the global step (absent on the wire = 0)
  std::string_view tag;          ///< Summary.Value.tag: tensor name or reduction name (FORMAT §7)
  bool has_mode = false;         ///< plugin data carried "mode" (else mode GLOBAL, mode_step = step)
  trialstat::mode mode = trialstat::mode::global;  ///< from plugin data "mode" (FORMAT §5)
  int64_t mode_step = 0;         ///< from plugin data "mode_step"
  bool has_tensor = false;       ///< Value carried a TensorProto (false: simple_value/histo)
  int64_t proto_dtype = 0;       ///< raw TensorProto.dtype number
  dtype type = dtype::invalid;   ///< decoded type (valid when the number is known)
  std::vector<int64_t> shape;    ///< dims, outermost first; empty = 0-d
  int64_t num_elements = 0;      ///< product of shape (1 for 0-d)
  /// Element bytes: `tensor_content`, or the typed repeated fields (float_val, int_val, ...)
  /// re-packed little-endian into scratch when `tensor_content` is empty.
  std::span<const std::byte> content;
  std::vector<std::string_view> strings;  ///< string_val items (string tensors, dtype 0 or 7)

  /// @brief View of the numeric content (host memory).
  [[nodiscard]] tensor_view view() const noexcept {
    return tensor_view{content.data(), type, shape, num_elements, memory_kind::host};
  }
};

/// @brief Reusable decoder: keeps its scratch buffers across calls, so steady-state decoding
/// does not allocate. Not thread-safe: use one decoder per thread.
class event_decoder {
 public:
  /// @brief Decode one serialized Event.
  ///
  /// Field order on the wire does not matter; unknown fields of any wire type are skipped;
  /// repeated occurrences merge as protobuf does (scalars: last wins; repeated: concatenate).
  /// The first Summary.Value carrying a tensor is decoded (smdebug writes exactly one Value);
  /// when none does (TensorBoard scalars/histograms) the first Value's tag and plugin data are
  /// reported with `has_tensor = false`. An Event without a summary decodes to an empty tag.
  ///
  /// Element bytes: `tensor_content` when non-empty; otherwise the typed field of the dtype,
  /// packed or not, re-packed little-endian into scratch: float_val (DT_FLOAT), double_val
  /// (DT_DOUBLE), int_val (DT_INT8/UINT8/INT16/UINT16/INT32, range-checked, not wrapped),
  /// int64_val (DT_INT64), bool_val (DT_BOOL, 1 byte each), half_val (DT_HALF, DT_BFLOAT16: the
  /// 16 bits), scomplex_val (DT_COMPLEX64), dcomplex_val (DT_COMPLEX128), and TF's uint32_val
  /// (field 16, DT_UINT32) and uint64_val (field 17, DT_UINT64). No broadcasting of a single
  /// value: the count must match. Strings: dtype 7, or dtype 0 with string_val, give
  /// `type = dtype::string`, `strings` filled and `content` empty; dtype 0 without string_val is
  /// an empty string tensor unless it carries numeric bytes (data_loss).
  /// Mode: plugin data "mode" ("1".."4") and "mode_step" (decimal int64); other plugins are
  /// ignored; without "mode": has_mode = false, mode GLOBAL, mode_step = step.
  ///
  /// @return ok; or data_loss (malformed wire format, truncated field, wrong wire type, group
  ///   wire types 3/4, a content size that is not num_elements × element size, negative dims or
  ///   an element count overflowing int64, a bad "mode"/"mode_step" content), naming the byte
  ///   offset inside the payload; or unsupported_dtype (an unknown DataType number, named with
  ///   the tag); out_of_memory if the scratch cannot grow. `out` is unspecified after a failure.
  /// Never reads outside `payload` (no padding assumed). Steady state does not allocate.
  /// Source: spec/FORMAT.md §3–§5; TF `tensor_util.MakeNdarray` for the typed fields.
  [[nodiscard]] status decode(std::span<const std::byte> payload, event_record& out);

 private:
  std::vector<std::byte> scratch_;
};

}  // namespace trialstat::decode
