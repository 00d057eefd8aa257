// SPDX-License-Identifier: Apache-2.0
#include "host/writer/python_json.hpp"

#include <fmt/format.h>

namespace trialstat::writer::detail {

status append_python_json(const nlohmann::ordered_json& value, std::string& out) {
  using nlohmann::ordered_json;
  switch (value.type()) {
    case ordered_json::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [k, v] : value.items()) {
        if (!first) out.append(", ");
        first = false;
        TRIALSTAT_RETURN_IF_ERROR(append_python_json(ordered_json(k), out));
        out.append(": ");
        TRIALSTAT_RETURN_IF_ERROR(append_python_json(v, out));
      }
      out.push_back('}');
      return status::success();
    }
    case ordered_json::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& v : value) {
        if (!first) out.append(", ");
        first = false;
        TRIALSTAT_RETURN_IF_ERROR(append_python_json(v, out));
      }
      out.push_back(']');
      return status::success();
    }
    case ordered_json::value_t::number_float:
      return {error_code::invalid_argument, "python json: floats are not supported"};
    case ordered_json::value_t::binary:
      return {error_code::invalid_argument, "python json: binary values are not supported"};
    default:
      break;
  }
  // Scalars: nlohmann's escaping with ensure_ascii matches Python's json.dumps (named escapes
  // \" \\ \b \f \n \r \t, other code points below 0x20 and from 0x7F as lowercase \u00xx /
  // surrogate pairs; '/' not escaped). Its strict handler throws on invalid UTF-8.
  try {
    out.append(value.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::strict));
  } catch (const nlohmann::json::exception& e) {
    return {error_code::invalid_argument,
            fmt::format("python json: cannot encode a string as UTF-8 JSON ({})", e.what())};
  }
  return status::success();
}

}  // namespace trialstat::writer::detail
