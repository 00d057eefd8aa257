// SPDX-License-Identifier: Apache-2.0
/// @file dtype.hpp
/// @brief Tensor element types, numbered as TensorFlow's `DataType` enum (the values stored in
/// `TensorProto.dtype`). Source: spec/FORMAT.md §4.
///
/// Differences from smdebug's reader, all deliberate and documented in README.md:
///  - DT_INT8 (6) is read as signed int8. smdebug maps it to numpy uint8 (-1 reads as 255).
///  - int16, uint16, uint32, uint64 and complex64 are readable here; smdebug raises KeyError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace trialstat {

/// @brief Element type of a tensor; numeric value = TF `DataType`.
enum class dtype : int32_t {
  invalid = 0,      ///< DT_INVALID: smdebug writes string tensors with dtype 0 (`string_val`)
  float32 = 1,      ///< DT_FLOAT
  float64 = 2,      ///< DT_DOUBLE
  int32 = 3,        ///< DT_INT32
  uint8 = 4,        ///< DT_UINT8
  int16 = 5,        ///< DT_INT16
  int8 = 6,         ///< DT_INT8 (signed here; smdebug reads it as uint8)
  string = 7,       ///< DT_STRING
  complex64 = 8,    ///< DT_COMPLEX64: pairs of float32 (real, imaginary)
  int64 = 9,        ///< DT_INT64
  boolean = 10,     ///< DT_BOOL: one byte per element, nonzero = true
  bfloat16 = 14,    ///< DT_BFLOAT16 (never written by smdebug; accepted here)
  uint16 = 17,      ///< DT_UINT16
  complex128 = 18,  ///< DT_COMPLEX128: pairs of float64
  float16 = 19,     ///< DT_HALF
  uint32 = 22,      ///< DT_UINT32
  uint64 = 23,      ///< DT_UINT64
};

/// @brief Map a raw `TensorProto.dtype` number to a dtype.
/// @return nullopt for numbers trialstat does not know (quantized types, resources, refs).
[[nodiscard]] std::optional<dtype> dtype_from_proto(int64_t proto_value) noexcept;

/// @brief Bytes per element in `tensor_content`; 0 for string/invalid (no fixed size).
[[nodiscard]] std::size_t dtype_size_bytes(dtype t) noexcept;

/// @brief numpy's name for the type: "float32", "int8", "bool", "complex64", "str", ...
[[nodiscard]] std::string_view dtype_name(dtype t) noexcept;

/// @brief TF's enum name: "DT_FLOAT", "DT_INT8", ... (used in error messages and dumps).
[[nodiscard]] std::string_view dtype_proto_name(dtype t) noexcept;

/// @brief Whether real-valued statistics can be computed: every fixed-size integer, float and
/// bool type. Complex and string tensors decode, but statistics report `unsupported_dtype`.
[[nodiscard]] bool dtype_is_real_numeric(dtype t) noexcept;

}  // namespace trialstat
