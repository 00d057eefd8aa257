// SPDX-License-Identifier: Apache-2.0
#include "trialstat/dtype.hpp"

namespace trialstat {

std::optional<dtype> dtype_from_proto(int64_t v) noexcept {
  switch (v) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8: case 9: case 10:
    case 14: case 17: case 18: case 19: case 22: case 23:
      return static_cast<dtype>(v);
    default:
      return std::nullopt;
  }
}

std::size_t dtype_size_bytes(dtype t) noexcept {
  switch (t) {
    case dtype::float32: case dtype::int32: case dtype::uint32: return 4;
    case dtype::float64: case dtype::int64: case dtype::uint64: case dtype::complex64: return 8;
    case dtype::complex128: return 16;
    case dtype::int16: case dtype::uint16: case dtype::float16: case dtype::bfloat16: return 2;
    case dtype::int8: case dtype::uint8: case dtype::boolean: return 1;
    case dtype::invalid: case dtype::string: return 0;
  }
  return 0;
}

std::string_view dtype_name(dtype t) noexcept {
  switch (t) {
    case dtype::invalid: return "str";
    case dtype::float32: return "float32";
    case dtype::float64: return "float64";
    case dtype::int32: return "int32";
    case dtype::uint8: return "uint8";
    case dtype::int16: return "int16";
    case dtype::int8: return "int8";
    case dtype::string: return "str";
    case dtype::complex64: return "complex64";
    case dtype::int64: return "int64";
    case dtype::boolean: return "bool";
    case dtype::bfloat16: return "bfloat16";
    case dtype::uint16: return "uint16";
    case dtype::complex128: return "complex128";
    case dtype::float16: return "float16";
    case dtype::uint32: return "uint32";
    case dtype::uint64: return "uint64";
  }
  return "unknown";
}

std::string_view dtype_proto_name(dtype t) noexcept {
  switch (t) {
    case dtype::invalid: return "DT_INVALID";
    case dtype::float32: return "DT_FLOAT";
    case dtype::float64: return "DT_DOUBLE";
    case dtype::int32: return "DT_INT32";
    case dtype::uint8: return "DT_UINT8";
    case dtype::int16: return "DT_INT16";
    case dtype::int8: return "DT_INT8";
    case dtype::string: return "DT_STRING";
    case dtype::complex64: return "DT_COMPLEX64";
    case dtype::int64: return "DT_INT64";
    case dtype::boolean: return "DT_BOOL";
    case dtype::bfloat16: return "DT_BFLOAT16";
    case dtype::uint16: return "DT_UINT16";
    case dtype::complex128: return "DT_COMPLEX128";
    case dtype::float16: return "DT_HALF";
    case dtype::uint32: return "DT_UINT32";
    case dtype::uint64: return "DT_UINT64";
  }
  return "DT_UNKNOWN";
}

bool dtype_is_real_numeric(dtype t) noexcept {
  switch (t) {
    case dtype::invalid: case dtype::string: case dtype::complex64: case dtype::complex128:
      return false;
    default:
      return true;
  }
}

}  // namespace trialstat
