// SPDX-License-Identifier: Apache-2.0
// Index JSON (spec/FORMAT.md §6) through simdjson's On-Demand API. The document is walked once,
// in order, checking the schema as it goes, so the first problem in document order is the one
// reported (except malformed strings and UTF-8, which simdjson's first pass reports before any
// value is read). Values under keys the schema does not use are walked too, so a file that is
// not valid JSON is rejected wherever the fault is (smdebug's json.loads would reject it).
#include "host/trial/index_json.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "trialstat/io/file_reader.hpp"

namespace trialstat::trial::detail {

static_assert(simdjson::SIMDJSON_PADDING <= index_json_padding_bytes,
              "index_json_padding_bytes must cover simdjson's padding");
static_assert(io::record_padding_bytes >= index_json_padding_bytes,
              "io::read_file buffers must be usable by index_json_parser::parse as they are");

namespace {

namespace od = simdjson::ondemand;

/// What a JSON value is, as far as the schema's messages distinguish.
enum class value_kind : uint8_t {
  null_value,
  boolean,
  non_negative,  ///< an integer literal in [0, 2^64); "-0" included (Python reads it as 0)
  negative,      ///< an integer literal in [-2^63, 0)
  floating,      ///< a fraction or exponent, or an integer literal outside 64 bits
  text,
  object,
  array,
};

std::string_view kind_name(value_kind k) {
  switch (k) {
    case value_kind::null_value: return "null";
    case value_kind::boolean: return "a boolean";
    case value_kind::non_negative: return "a number";
    case value_kind::negative: return "a negative number";
    case value_kind::floating: return "a floating-point number";
    case value_kind::text: return "a string";
    case value_kind::object: return "an object";
    case value_kind::array: return "an array";
  }
  return "a value";
}

/// A value's kind and, for scalars, its content. Objects and arrays are not consumed.
struct scalar_value {
  value_kind kind = value_kind::null_value;
  uint64_t number = 0;    ///< when kind == non_negative
  std::string_view text;  ///< when kind == text: unescaped, valid until the next document
};

// The keys each object of the schema uses, in the order json.dumps writes them.
constexpr std::array<std::string_view, 0> no_keys{};
constexpr std::array<std::string_view, 3> top_keys{"meta", "tensor_payload", "shape_payload"};
constexpr std::array<std::string_view, 3> meta_keys{"mode", "mode_step", "event_file_name"};
constexpr std::array<std::string_view, 3> tensor_keys{"tensorname", "start_idx", "length"};
constexpr std::array<std::string_view, 3> shape_keys{"tensorname", "originalname", "shape"};

/// Reads one document into a parsed_index. Every member returning bool returns false after
/// recording the problem in `problem_` (the first one wins).
class index_reader {
 public:
  index_reader(od::document& doc, std::string_view text, parsed_index& out)
      : doc_(doc), text_(text), out_(out) {}

  status run() {
    if (!read_document()) return bad(problem_.empty() ? std::string("not valid JSON") : problem_);
    return finish();
  }

 private:
  static status bad(std::string message) { return status(error_code::data_loss, std::move(message)); }

  bool read_document() {
    od::json_type type{};
    if (const auto e = doc_.type().get(type)) return invalid_json(e);
    if (type != od::json_type::object) {
      scalar_value top;
      if (!inspect_scalar(doc_, type, top)) return false;
      return fail(fmt::format("the top level: expected a JSON object, got {}", kind_name(top.kind)));
    }
    od::object root;
    if (const auto e = doc_.get_object().get(root)) return invalid_json(e);
    if (!read_top(root)) return false;
    // The root object must be the whole document.
    const char* next = nullptr;
    if (doc_.current_location().get(next) == simdjson::SUCCESS) {
      return invalid_json_at(next, "trailing content after the top-level object");
    }
    return true;
  }

  bool fail(std::string message) {
    if (problem_.empty()) problem_ = std::move(message);
    return false;
  }

  bool invalid_json_at(const char* where, std::string_view reason) {
    if (where != nullptr && where >= text_.data() && where <= text_.data() + text_.size()) {
      return fail(fmt::format("not valid JSON (byte {}): {}", where - text_.data(), reason));
    }
    return fail(fmt::format("not valid JSON: {}", reason));
  }

  /// simdjson rejected the text: say where it stopped, when it knows.
  bool invalid_json(simdjson::error_code e) {
    const char* where = nullptr;
    if (doc_.current_location().get(where) != simdjson::SUCCESS) where = nullptr;
    return invalid_json_at(where, simdjson::error_message(e));
  }

  /// The kind (and content) of a scalar whose json_type is `type`; V is a value or the document.
  template <typename V>
  bool inspect_scalar(V& v, od::json_type type, scalar_value& out) {
    switch (type) {
      case od::json_type::object:
        out.kind = value_kind::object;
        return true;
      case od::json_type::array:
        out.kind = value_kind::array;
        return true;
      case od::json_type::string:
        out.kind = value_kind::text;
        if (const auto e = v.get_string().get(out.text)) return invalid_json(e);
        return true;
      case od::json_type::boolean: {
        out.kind = value_kind::boolean;
        bool b = false;
        if (const auto e = v.get_bool().get(b)) return invalid_json(e);
        return true;
      }
      case od::json_type::null: {
        out.kind = value_kind::null_value;
        bool is_null = false;
        if (const auto e = v.is_null().get(is_null)) return invalid_json(e);
        if (!is_null) return invalid_json(simdjson::INCORRECT_TYPE);
        return true;
      }
      case od::json_type::number:
        return inspect_number(v, out);
    }
    return invalid_json(simdjson::TAPE_ERROR);
  }

  template <typename V>
  bool inspect_number(V& v, scalar_value& out) {
    // Sizes and steps: the common case, one call.
    if (v.get_uint64().get(out.number) == simdjson::SUCCESS) {
      out.kind = value_kind::non_negative;
      return true;
    }
    od::number_type type{};
    if (const auto e = v.get_number_type().get(type)) return invalid_json(e);
    if (type == od::number_type::unsigned_integer) {
      uint64_t u = 0;
      if (v.get_uint64().get(u) == simdjson::SUCCESS) {
        out.kind = value_kind::non_negative;
        out.number = u;
        return true;
      }
    } else if (type == od::number_type::signed_integer) {
      int64_t i = 0;
      if (v.get_int64().get(i) == simdjson::SUCCESS) {
        out.kind = i < 0 ? value_kind::negative : value_kind::non_negative;
        out.number = i < 0 ? 0 : static_cast<uint64_t>(i);
        return true;
      }
    }
    // A fraction or exponent, or an integer literal outside 64 bits (Python and nlohmann read
    // that as a float; simdjson's integer getters refuse it): valid JSON if it parses as a
    // finite double. Malformed numbers ("01", "1.", "-") fail here too.
    double d = 0;
    if (const auto e2 = v.get_double().get(d)) return invalid_json(e2);
    out.kind = value_kind::floating;
    return true;
  }

  bool inspect(od::value& v, scalar_value& out) {
    od::json_type type{};
    if (const auto e = v.type().get(type)) return invalid_json(e);
    return inspect_scalar(v, type, out);
  }

  // `inspect` for a value the schema expects to be of one type: one simdjson call when it is
  // (simdjson's getters leave a value of another type unconsumed, so it can be inspected then).
  bool inspect_expecting_integer(od::value& v, scalar_value& out) {
    if (v.get_uint64().get(out.number) == simdjson::SUCCESS) {
      out.kind = value_kind::non_negative;
      return true;
    }
    return inspect(v, out);
  }
  bool inspect_expecting_string(od::value& v, scalar_value& out) {
    const auto e = v.get_string().get(out.text);
    if (e == simdjson::SUCCESS) {
      out.kind = value_kind::text;
      return true;
    }
    if (e != simdjson::INCORRECT_TYPE) return invalid_json(e);
    return inspect(v, out);
  }
  /// The value as an object; false with `problem_` set when it is invalid JSON, or with `kind`
  /// set (and `problem_` not) when it is valid JSON of another kind.
  bool get_object(od::value& v, od::object& obj, value_kind& kind) {
    const auto e = v.get_object().get(obj);
    if (e == simdjson::SUCCESS) return true;
    if (e != simdjson::INCORRECT_TYPE) return invalid_json(e);
    scalar_value s;
    if (inspect(v, s)) kind = s.kind;
    return false;
  }

  /// Take the next field of an object. `key` is one of `known` when the key is spelled plainly
  /// (all that json.dumps writes): compared in place, no copy. Any other key is unescaped (which
  /// also checks its escapes), so "m\u0065ta" is "meta" as for json.loads.
  template <std::size_t N>
  bool next_field(simdjson::simdjson_result<od::field> result, const std::array<std::string_view, N>& known,
                  std::string_view& key, od::value& value) {
    od::field field;
    if (const auto e = std::move(result).get(field)) return invalid_json(e);
    const od::raw_json_string raw = field.key();
    key = {};
    for (const std::string_view k : known) {
      if (raw.unsafe_is_equal(k)) {
        key = k;
        break;
      }
    }
    if (key.empty()) {
      if (const auto e = field.unescaped_key().get(key)) return invalid_json(e);
    }
    value = field.value();
    return true;
  }

  /// Walk a value the schema does not use, so that invalid JSON anywhere is rejected. On-Demand
  /// does not limit nesting, and this walk recurses: it stops at simdjson's DOM limit.
  bool validate(od::value& v, std::size_t depth = 0) {
    scalar_value s;
    if (!inspect(v, s)) return false;
    if ((s.kind == value_kind::object || s.kind == value_kind::array) && depth >= max_ignored_depth) {
      const char* where = nullptr;
      if (doc_.current_location().get(where) != simdjson::SUCCESS) where = nullptr;
      return invalid_json_at(where, fmt::format("more than {} nested arrays or objects", max_ignored_depth));
    }
    if (s.kind == value_kind::object) {
      od::object obj;
      if (const auto e = v.get_object().get(obj)) return invalid_json(e);
      for (auto field : obj) {
        std::string_view key;
        od::value inner;
        if (!next_field(field, no_keys, key, inner)) return false;
        if (!validate(inner, depth + 1)) return false;
      }
    } else if (s.kind == value_kind::array) {
      od::array arr;
      if (const auto e = v.get_array().get(arr)) return invalid_json(e);
      for (auto element : arr) {
        od::value inner;
        if (const auto e = element.get(inner)) return invalid_json(e);
        if (!validate(inner, depth + 1)) return false;
      }
    }
    return true;
  }

  // ---- top level -----------------------------------------------------------------------------

  bool read_top(od::object& root) {
    for (auto field : root) {
      std::string_view key;
      od::value v;
      if (!next_field(field, top_keys, key, v)) return false;
      if (key == "meta") {
        scalar_value s;
        if (!inspect(v, s)) return false;
        if (s.kind != value_kind::object) {
          return fail(fmt::format("meta: expected an object, got {}", kind_name(s.kind)));
        }
        if (!read_meta(v)) return false;
      } else if (key == "tensor_payload" || key == "shape_payload") {
        const bool tensors = key == "tensor_payload";
        scalar_value s;
        if (!inspect(v, s)) return false;
        if (s.kind != value_kind::array) {
          return fail(fmt::format("{}: expected an array, got {}", key, kind_name(s.kind)));
        }
        od::array arr;
        if (const auto e = v.get_array().get(arr)) return invalid_json(e);
        if (tensors) {
          seen_tensor_payload_ = true;
          if (!read_tensor_payload(arr)) return false;
        } else {
          seen_shape_payload_ = true;
          if (!read_shape_payload(arr)) return false;
        }
      } else {
        out_.unknown_keys.emplace_back(key);  // reported by the catalog (a misspelt key?)
        if (!validate(v)) return false;
      }
    }
    return true;
  }

  // ---- meta ----------------------------------------------------------------------------------

  bool read_meta(od::value& v) {
    od::object obj;
    if (const auto e = v.get_object().get(obj)) return invalid_json(e);
    seen_meta_ = true;
    meta_keys_ = 0;
    for (auto field : obj) {
      std::string_view key;
      od::value value;
      if (!next_field(field, meta_keys, key, value)) return false;
      ++meta_keys_;
      if (key == "mode") {
        if (!read_mode(value)) return false;
      } else if (key == "mode_step") {
        scalar_value s;
        if (!inspect(value, s)) return false;
        if (s.kind == value_kind::object || s.kind == value_kind::array) {
          return fail(fmt::format("meta.mode_step: expected an integer, got {}", kind_name(s.kind)));
        }
        if (s.kind != value_kind::non_negative ||
            s.number > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          return fail(fmt::format("meta.mode_step: expected a non-negative integer, got {}",
                                  kind_name(s.kind)));
        }
        out_.mode_step = static_cast<int64_t>(s.number);
      } else if (key == "event_file_name") {
        scalar_value s;
        if (!inspect(value, s)) return false;
        if (s.kind == value_kind::text) {
          out_.has_event_file_name = true;
          out_.event_file_name.assign(s.text);
        } else if (s.kind != value_kind::null_value) {
          return fail(fmt::format("meta.event_file_name: expected a string, got {}", kind_name(s.kind)));
        }
      } else if (!validate(value)) {
        return false;
      }
    }
    return true;
  }

  bool read_mode(od::value& value) {
    scalar_value s;
    if (!inspect(value, s)) return false;
    if (s.kind == value_kind::object || s.kind == value_kind::array) {
      return fail(fmt::format("meta.mode: expected a mode name (TRAIN, EVAL, PREDICT or GLOBAL), got {}",
                              kind_name(s.kind)));
    }
    if (s.kind != value_kind::text) {
      return fail(fmt::format("meta.mode: expected a mode name, got {}", kind_name(s.kind)));
    }
    // smdebug: ModeKeys[mode.strip()]
    std::string_view name = s.text;
    const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n'; };
    while (!name.empty() && blank(name.front())) name.remove_prefix(1);
    while (!name.empty() && blank(name.back())) name.remove_suffix(1);
    const std::optional<trialstat::mode> m = parse_mode_name(name);
    if (!m) return fail(fmt::format("meta.mode: expected TRAIN, EVAL, PREDICT or GLOBAL, got \"{}\"", s.text));
    out_.mode = m;
    return true;
  }

  // ---- payloads ------------------------------------------------------------------------------

  /// `"<what>" to be ...`, for a known key of an item.
  static std::string_view expected_for(std::string_view key) {
    if (key == "tensorname") return "\"tensorname\" to be a string";
    if (key == "start_idx") return "\"start_idx\" to be a non-negative integer";
    if (key == "length") return "\"length\" to be a non-negative integer";
    if (key == "shape") return "\"shape\" to be an array of non-negative integers";
    return "a value";
  }

  bool wrong_item_value(std::string_view payload, std::size_t index, std::string_view key, value_kind kind) {
    return fail(fmt::format("{}[{}]: expected {}, got {}", payload, index, expected_for(key), kind_name(kind)));
  }

  /// Read one item's "tensorname" into the names arena.
  bool read_name(od::value& value, std::string_view payload, std::size_t index, uint32_t& offset,
                 uint32_t& length) {
    scalar_value s;
    if (!inspect_expecting_string(value, s)) return false;
    if (s.kind != value_kind::text) return wrong_item_value(payload, index, "tensorname", s.kind);
    offset = static_cast<uint32_t>(out_.names.size());
    length = static_cast<uint32_t>(s.text.size());
    out_.names.append(s.text);
    return true;
  }

  bool read_tensor_payload(od::array& arr) {
    constexpr std::string_view payload = "tensor_payload";
    for (auto element : arr) {
      od::value item;
      if (const auto e = element.get(item)) return invalid_json(e);
      od::object obj;
      value_kind kind = value_kind::object;
      if (!get_object(item, obj, kind)) {
        if (!problem_.empty()) return false;
        return fail(fmt::format("{}[{}]: expected an object, got {}", payload, tensor_count_, kind_name(kind)));
      }
      scalar_value s;
      parsed_index::tensor_item t;
      bool has_name = false, has_start = false, has_length = false;
      for (auto field : obj) {
        std::string_view key;
        od::value value;
        if (!next_field(field, tensor_keys, key, value)) return false;
        if (key == "tensorname") {
          if (!read_name(value, payload, tensor_count_, t.name_offset, t.name_length)) return false;
          has_name = true;
        } else if (key == "start_idx" || key == "length") {
          if (!inspect_expecting_integer(value, s)) return false;
          if (s.kind != value_kind::non_negative) return wrong_item_value(payload, tensor_count_, key, s.kind);
          if (key == "start_idx") {
            t.start_bytes = s.number;
            has_start = true;
          } else {
            t.length_bytes = s.number;
            has_length = true;
          }
        } else if (!validate(value)) {
          return false;
        }
      }
      if (!has_name) return fail(fmt::format("{}[{}]: missing \"tensorname\"", payload, tensor_count_));
      if (!has_start) return fail(fmt::format("{}[{}]: missing \"start_idx\"", payload, tensor_count_));
      if (!has_length) return fail(fmt::format("{}[{}]: missing \"length\"", payload, tensor_count_));
      out_.tensors.push_back(t);
      ++tensor_count_;
    }
    return true;
  }

  bool read_shape_payload(od::array& arr) {
    constexpr std::string_view payload = "shape_payload";
    for (auto element : arr) {
      od::value item;
      if (const auto e = element.get(item)) return invalid_json(e);
      od::object obj;
      value_kind kind = value_kind::object;
      if (!get_object(item, obj, kind)) {
        if (!problem_.empty()) return false;
        return fail(fmt::format("{}[{}]: expected an object, got {}", payload, shape_count_, kind_name(kind)));
      }
      scalar_value s;
      parsed_index::shape_item shape;
      bool has_name = false, has_shape = false;
      for (auto field : obj) {
        std::string_view key;
        od::value value;
        if (!next_field(field, shape_keys, key, value)) return false;
        if (key == "tensorname") {
          if (!read_name(value, payload, shape_count_, shape.name_offset, shape.name_length)) return false;
          has_name = true;
        } else if (key == "shape") {
          if (!inspect(value, s)) return false;
          if (s.kind != value_kind::array) return wrong_item_value(payload, shape_count_, key, s.kind);
          if (!read_dims(value, shape)) return false;
          has_shape = true;
        } else if (key == "originalname") {  // not needed, but must be valid JSON
          if (!inspect_expecting_string(value, s)) return false;
          if ((s.kind == value_kind::object || s.kind == value_kind::array) && !validate(value)) return false;
        } else if (!validate(value)) {
          return false;
        }
      }
      if (!has_name) return fail(fmt::format("{}[{}]: missing \"tensorname\"", payload, shape_count_));
      if (!has_shape) return fail(fmt::format("{}[{}]: missing \"shape\"", payload, shape_count_));
      out_.shapes.push_back(shape);
      ++shape_count_;
    }
    return true;
  }

  bool read_dims(od::value& value, parsed_index::shape_item& shape) {
    od::array dims;
    if (const auto e = value.get_array().get(dims)) return invalid_json(e);
    shape.dims_offset = static_cast<uint32_t>(out_.dims.size());
    for (auto element : dims) {
      od::value dim;
      if (const auto e = element.get(dim)) return invalid_json(e);
      scalar_value s;
      if (!inspect_expecting_integer(dim, s)) return false;
      if (s.kind != value_kind::non_negative ||
          s.number > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return fail(fmt::format("shape_payload[{}].shape: expected non-negative integers, got {}",
                                shape_count_, kind_name(s.kind)));
      }
      out_.dims.push_back(static_cast<int64_t>(s.number));
    }
    shape.dims_count = static_cast<uint32_t>(out_.dims.size() - shape.dims_offset);
    return true;
  }

  // ---- after the whole document ----------------------------------------------------------------

  [[nodiscard]] status finish() const {
    if (!seen_meta_ || meta_keys_ == 0) return bad("missing or empty \"meta\" object");
    if (!out_.mode) return bad("meta.mode: missing (expected TRAIN, EVAL, PREDICT or GLOBAL)");
    if (!out_.mode_step) return bad("meta.mode_step: missing (expected an integer)");
    if (!seen_tensor_payload_ && !seen_shape_payload_) {
      return bad("neither \"tensor_payload\" nor \"shape_payload\" is present");
    }
    if (!out_.tensors.empty() && !out_.has_event_file_name) {
      return bad("meta.event_file_name: missing although tensor_payload lists records");
    }
    return status::success();
  }

  static constexpr std::size_t max_ignored_depth = simdjson::DEFAULT_MAX_DEPTH;

  od::document& doc_;
  std::string_view text_;
  parsed_index& out_;
  std::string problem_;
  std::size_t tensor_count_ = 0;  ///< items read from tensor_payload arrays so far
  std::size_t shape_count_ = 0;
  std::size_t meta_keys_ = 0;     ///< keys of the last "meta" object
  bool seen_meta_ = false;
  bool seen_tensor_payload_ = false;
  bool seen_shape_payload_ = false;
};

}  // namespace

struct index_json_parser::impl {
  od::parser parser;
  std::vector<char> padded;  ///< parse_unpadded's copy
};

index_json_parser::index_json_parser() : impl_(std::make_unique<impl>()) {}
index_json_parser::~index_json_parser() = default;
index_json_parser::index_json_parser(index_json_parser&&) noexcept = default;
index_json_parser& index_json_parser::operator=(index_json_parser&&) noexcept = default;

status index_json_parser::parse(std::string_view text, std::size_t buffer_size_bytes, parsed_index& out) {
  out.clear();
  if (buffer_size_bytes < text.size() || buffer_size_bytes - text.size() < simdjson::SIMDJSON_PADDING) {
    return status(error_code::invalid_argument,
                  fmt::format("index JSON buffer of {} bytes for {} bytes of text: needs {} bytes of padding",
                              buffer_size_bytes, text.size(), simdjson::SIMDJSON_PADDING));
  }
  // A UTF-8 byte order mark is skipped, as json.loads(bytes) and nlohmann-json do (simdjson
  // 3.0 does not); byte offsets in messages still count from the start of the file.
  constexpr std::string_view bom = "\xEF\xBB\xBF";
  const std::size_t skip = text.substr(0, bom.size()) == bom ? bom.size() : 0;
  od::document doc;
  if (const auto e = impl_->parser.iterate(text.substr(skip), buffer_size_bytes - skip).get(doc)) {
    if (e == simdjson::MEMALLOC) {
      return status(error_code::out_of_memory,
                    fmt::format("cannot allocate simdjson buffers for {} bytes of JSON", text.size()));
    }
    if (e == simdjson::CAPACITY) {
      return status(error_code::data_loss, fmt::format("not valid JSON: {} bytes is more than simdjson accepts",
                                                       text.size()));
    }
    return status(error_code::data_loss, fmt::format("not valid JSON: {}", simdjson::error_message(e)));
  }
  index_reader reader(doc, text, out);
  return reader.run();
}

status index_json_parser::parse_unpadded(std::string_view text, parsed_index& out) {
  auto& padded = impl_->padded;
  padded.assign(text.size() + simdjson::SIMDJSON_PADDING, '\0');
  if (!text.empty()) std::memcpy(padded.data(), text.data(), text.size());
  return parse(std::string_view(padded.data(), text.size()), padded.size(), out);
}

}  // namespace trialstat::trial::detail
