// SPDX-License-Identifier: Apache-2.0
// Index JSON (spec/FORMAT.md §6) through nlohmann-json's SAX interface: no DOM, so a file of N
// entries costs no per-entry allocation once the parsed_index buffers have grown.
#include "host/trial/index_json.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace trialstat::trial::detail {
namespace {

using json = nlohmann::json;

enum class frame : uint8_t { top, meta, tensor_array, tensor_item, shape_array, shape_item, dims };

enum class key_id : uint8_t {
  other,
  meta,
  tensor_payload,
  shape_payload,
  mode,
  mode_step,
  event_file_name,
  tensorname,
  start_idx,
  length,
  shape,
};

key_id classify(frame f, std::string_view k) {
  switch (f) {
    case frame::top:
      if (k == "meta") return key_id::meta;
      if (k == "tensor_payload") return key_id::tensor_payload;
      if (k == "shape_payload") return key_id::shape_payload;
      return key_id::other;
    case frame::meta:
      if (k == "mode") return key_id::mode;
      if (k == "mode_step") return key_id::mode_step;
      if (k == "event_file_name") return key_id::event_file_name;
      return key_id::other;
    case frame::tensor_item:
      if (k == "tensorname") return key_id::tensorname;
      if (k == "start_idx") return key_id::start_idx;
      if (k == "length") return key_id::length;
      return key_id::other;
    case frame::shape_item:
      if (k == "tensorname") return key_id::tensorname;
      if (k == "shape") return key_id::shape;
      return key_id::other;  // originalname and anything else: not needed
    default:
      return key_id::other;
  }
}

/// The kinds of scalar SAX events, reduced to what the schema distinguishes.
enum class scalar_kind : uint8_t { null_value, boolean, non_negative, negative, floating, text };

std::string_view kind_name(scalar_kind k) {
  switch (k) {
    case scalar_kind::null_value: return "null";
    case scalar_kind::boolean: return "a boolean";
    case scalar_kind::non_negative: return "a number";
    case scalar_kind::negative: return "a negative number";
    case scalar_kind::floating: return "a floating-point number";
    case scalar_kind::text: return "a string";
  }
  return "a value";
}

class index_sax {
 public:
  explicit index_sax(parsed_index& out) : out_(out) { stack_.reserve(8); }

  std::string error;  ///< the first problem found (parse or schema)

  // ---- nlohmann SAX interface ----------------------------------------------------------------
  bool null() { return scalar(scalar_kind::null_value, 0, nullptr); }
  bool boolean(bool /*value*/) { return scalar(scalar_kind::boolean, 0, nullptr); }
  bool number_integer(json::number_integer_t value) {
    return value < 0 ? scalar(scalar_kind::negative, 0, nullptr)
                     : scalar(scalar_kind::non_negative, static_cast<uint64_t>(value), nullptr);
  }
  bool number_unsigned(json::number_unsigned_t value) {
    return scalar(scalar_kind::non_negative, value, nullptr);
  }
  bool number_float(json::number_float_t /*value*/, const json::string_t& /*text*/) {
    return scalar(scalar_kind::floating, 0, nullptr);
  }
  bool string(json::string_t& value) { return scalar(scalar_kind::text, 0, &value); }
  bool binary(json::binary_t& /*value*/) { return scalar(scalar_kind::null_value, 0, nullptr); }

  bool start_object(std::size_t /*elements*/) {
    if (skip_depth_ > 0) return ++skip_depth_, true;
    if (stack_.empty()) return push(frame::top);
    switch (stack_.back()) {
      case frame::top:
        if (key_ == key_id::meta) {
          seen_meta_ = true;
          meta_keys_ = 0;
          return push(frame::meta);
        }
        if (key_ == key_id::tensor_payload) return fail("tensor_payload: expected an array, got an object");
        if (key_ == key_id::shape_payload) return fail("shape_payload: expected an array, got an object");
        return skip();
      case frame::tensor_array:
        item_ = {};
        item_is_tensor_ = true;
        return push(frame::tensor_item);
      case frame::shape_array:
        item_ = {};
        item_is_tensor_ = false;
        return push(frame::shape_item);
      case frame::meta:
        if (key_ == key_id::other) return skip();
        return fail(fmt::format("meta.{}: expected {}, got an object", meta_key_name(), meta_expected()));
      case frame::tensor_item:
        if (key_ == key_id::other) return skip();
        return fail(fmt::format("{}: expected {}, got an object", item_path(), item_expected()));
      case frame::shape_item:
        if (key_ == key_id::other) return skip();
        return fail(fmt::format("{}: expected {}, got an object", item_path(), item_expected()));
      case frame::dims:
        return fail(fmt::format("{}.shape: expected non-negative integers, got an object", item_path()));
    }
    return fail("unexpected object");
  }

  bool end_object() {
    if (skip_depth_ > 0) return --skip_depth_, true;
    const frame f = stack_.back();
    stack_.pop_back();
    if (f == frame::tensor_item) {
      if (!item_.has_name) return fail(fmt::format("{}: missing \"tensorname\"", item_path()));
      if (!item_.has_start) return fail(fmt::format("{}: missing \"start_idx\"", item_path()));
      if (!item_.has_length) return fail(fmt::format("{}: missing \"length\"", item_path()));
      out_.tensors.push_back({item_.name_offset, item_.name_length, item_.start, item_.length});
      ++tensor_count_;
    } else if (f == frame::shape_item) {
      if (!item_.has_name) return fail(fmt::format("{}: missing \"tensorname\"", item_path()));
      if (!item_.has_shape) return fail(fmt::format("{}: missing \"shape\"", item_path()));
      out_.shapes.push_back({item_.name_offset, item_.name_length, item_.dims_offset,
                             static_cast<uint32_t>(out_.dims.size() - item_.dims_offset)});
      ++shape_count_;
    }
    return true;
  }

  bool start_array(std::size_t /*elements*/) {
    if (skip_depth_ > 0) return ++skip_depth_, true;
    if (stack_.empty()) return fail("the top level: expected a JSON object, got an array");
    switch (stack_.back()) {
      case frame::top:
        if (key_ == key_id::tensor_payload) {
          seen_tensor_payload_ = true;
          return push(frame::tensor_array);
        }
        if (key_ == key_id::shape_payload) {
          seen_shape_payload_ = true;
          return push(frame::shape_array);
        }
        if (key_ == key_id::meta) return fail("meta: expected an object, got an array");
        return skip();
      case frame::shape_item:
        if (key_ == key_id::shape) {
          item_.has_shape = true;
          item_.dims_offset = static_cast<uint32_t>(out_.dims.size());
          return push(frame::dims);
        }
        if (key_ == key_id::other) return skip();
        return fail(fmt::format("{}: expected {}, got an array", item_path(), item_expected()));
      case frame::meta:
        if (key_ == key_id::other) return skip();
        return fail(fmt::format("meta.{}: expected {}, got an array", meta_key_name(), meta_expected()));
      case frame::tensor_item:
        if (key_ == key_id::other) return skip();
        return fail(fmt::format("{}: expected {}, got an array", item_path(), item_expected()));
      case frame::tensor_array:
        return fail(fmt::format("tensor_payload[{}]: expected an object, got an array", tensor_count_));
      case frame::shape_array:
        return fail(fmt::format("shape_payload[{}]: expected an object, got an array", shape_count_));
      case frame::dims:
        return fail(fmt::format("{}.shape: expected non-negative integers, got an array", item_path()));
    }
    return fail("unexpected array");
  }

  bool end_array() {
    if (skip_depth_ > 0) return --skip_depth_, true;
    stack_.pop_back();
    return true;
  }

  bool key(json::string_t& k) {
    if (skip_depth_ > 0) return true;
    const frame f = stack_.back();
    key_ = classify(f, k);
    if (f == frame::meta) {
      ++meta_keys_;
      meta_key_ = k;
    }
    return true;
  }

  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) {
    if (error.empty()) error = fmt::format("not valid JSON (byte {}): {}", position, ex.what());
    return false;
  }

  // ---- after a successful parse ----------------------------------------------------------------
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

 private:
  struct item_state {
    bool has_name = false, has_start = false, has_length = false, has_shape = false;
    uint32_t name_offset = 0, name_length = 0, dims_offset = 0;
    uint64_t start = 0, length = 0;
  };

  static status bad(std::string message) { return status(error_code::data_loss, std::move(message)); }

  bool push(frame f) {
    stack_.push_back(f);
    return true;
  }
  bool skip() {
    skip_depth_ = 1;
    return true;
  }
  bool fail(std::string message) {
    if (error.empty()) error = std::move(message);
    return false;
  }

  [[nodiscard]] std::string item_path() const {
    return item_is_tensor_ ? fmt::format("tensor_payload[{}]", tensor_count_)
                           : fmt::format("shape_payload[{}]", shape_count_);
  }
  [[nodiscard]] std::string item_expected() const {
    switch (key_) {
      case key_id::tensorname: return "\"tensorname\" to be a string";
      case key_id::start_idx: return "\"start_idx\" to be a non-negative integer";
      case key_id::length: return "\"length\" to be a non-negative integer";
      case key_id::shape: return "\"shape\" to be an array of non-negative integers";
      default: return "a value";
    }
  }
  [[nodiscard]] std::string_view meta_key_name() const { return meta_key_; }
  [[nodiscard]] std::string_view meta_expected() const {
    switch (key_) {
      case key_id::mode: return "a mode name (TRAIN, EVAL, PREDICT or GLOBAL)";
      case key_id::mode_step: return "an integer";
      case key_id::event_file_name: return "a string";
      default: return "a value";
    }
  }

  bool scalar(scalar_kind kind, uint64_t number, json::string_t* text) {
    if (skip_depth_ > 0) return true;
    if (stack_.empty()) return fail(fmt::format("the top level: expected a JSON object, got {}", kind_name(kind)));
    switch (stack_.back()) {
      case frame::top:
        if (key_ == key_id::meta) return fail(fmt::format("meta: expected an object, got {}", kind_name(kind)));
        if (key_ == key_id::tensor_payload) {
          return fail(fmt::format("tensor_payload: expected an array, got {}", kind_name(kind)));
        }
        if (key_ == key_id::shape_payload) {
          return fail(fmt::format("shape_payload: expected an array, got {}", kind_name(kind)));
        }
        return true;
      case frame::meta:
        return meta_scalar(kind, number, text);
      case frame::tensor_array:
        return fail(fmt::format("tensor_payload[{}]: expected an object, got {}", tensor_count_, kind_name(kind)));
      case frame::shape_array:
        return fail(fmt::format("shape_payload[{}]: expected an object, got {}", shape_count_, kind_name(kind)));
      case frame::tensor_item:
      case frame::shape_item:
        return item_scalar(kind, number, text);
      case frame::dims:
        if (kind != scalar_kind::non_negative ||
            number > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          return fail(fmt::format("shape_payload[{}].shape: expected non-negative integers, got {}",
                                  shape_count_, kind_name(kind)));
        }
        out_.dims.push_back(static_cast<int64_t>(number));
        return true;
    }
    return true;
  }

  bool meta_scalar(scalar_kind kind, uint64_t number, json::string_t* text) {
    switch (key_) {
      case key_id::mode: {
        std::optional<trialstat::mode> m;
        if (kind == scalar_kind::text) {
          std::string_view s = *text;
          // smdebug: ModeKeys[mode.strip()]
          while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
          while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
          m = parse_mode_name(s);
        }
        if (!m) {
          return fail(kind == scalar_kind::text
                          ? fmt::format("meta.mode: expected TRAIN, EVAL, PREDICT or GLOBAL, got \"{}\"", *text)
                          : fmt::format("meta.mode: expected a mode name, got {}", kind_name(kind)));
        }
        out_.mode = m;
        return true;
      }
      case key_id::mode_step:
        if (kind == scalar_kind::non_negative &&
            number <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          out_.mode_step = static_cast<int64_t>(number);
          return true;
        }
        return fail(fmt::format("meta.mode_step: expected a non-negative integer, got {}", kind_name(kind)));
      case key_id::event_file_name:
        if (kind == scalar_kind::text) {
          out_.has_event_file_name = true;
          out_.event_file_name = *text;
          return true;
        }
        if (kind == scalar_kind::null_value) return true;
        return fail(fmt::format("meta.event_file_name: expected a string, got {}", kind_name(kind)));
      default:
        return true;
    }
  }

  bool item_scalar(scalar_kind kind, uint64_t number, json::string_t* text) {
    switch (key_) {
      case key_id::tensorname:
        if (kind != scalar_kind::text) break;
        item_.has_name = true;
        item_.name_offset = static_cast<uint32_t>(out_.names.size());
        item_.name_length = static_cast<uint32_t>(text->size());
        out_.names.append(*text);
        return true;
      case key_id::start_idx:
        if (kind != scalar_kind::non_negative) break;
        item_.has_start = true;
        item_.start = number;
        return true;
      case key_id::length:
        if (kind != scalar_kind::non_negative) break;
        item_.has_length = true;
        item_.length = number;
        return true;
      case key_id::shape:
        break;
      default:
        return true;
    }
    return fail(fmt::format("{}: expected {}, got {}", item_path(), item_expected(), kind_name(kind)));
  }

  parsed_index& out_;
  std::vector<frame> stack_;
  int skip_depth_ = 0;
  key_id key_ = key_id::other;
  std::string meta_key_;
  item_state item_;
  std::size_t tensor_count_ = 0;
  std::size_t shape_count_ = 0;
  std::size_t meta_keys_ = 0;
  bool item_is_tensor_ = true;
  bool seen_meta_ = false;
  bool seen_tensor_payload_ = false;
  bool seen_shape_payload_ = false;
};

/// Outcome of the fast tokenizer.
enum class fast_outcome : uint8_t {
  accepted,         ///< the whole text was valid and every event was delivered
  handler_stopped,  ///< the handler rejected an event (its `error` says why): final
  declined,         ///< something outside the fast subset: parse again with nlohmann
};

/// A tokenizer for the subset of JSON that Python's json.dumps writes for index files: ASCII
/// strings without escapes, non-negative integers of at most 18 digits, true/false/null,
/// objects and arrays. It feeds the same SAX handler as nlohmann's parser, with the same events,
/// so the schema logic has one definition. Anything else (escapes, non-ASCII bytes, negative or
/// floating-point numbers, any syntax error) is declined and the caller re-parses the text with
/// nlohmann-json, which then gives the authoritative result and error message. Index files are
/// the catalog's hot path (one per step and worker; 1M entries must load well under a second),
/// and nlohmann's lexer runs at ~100 MB/s; this one at several hundred.
template <typename Sax>
fast_outcome fast_parse(std::string_view text, Sax& sax, std::string& scratch) {
  const char* p = text.data();
  const char* const end = p + text.size();
  char stack[32];
  int depth = 0;
  const auto skip_ws = [&] {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
  };
  // Reads a string starting at the opening quote into scratch; false to decline.
  const auto read_string = [&]() -> bool {
    ++p;
    const char* first = p;
    while (p < end) {
      const auto c = static_cast<unsigned char>(*p);
      if (c == '"') break;
      if (c == '\\' || c < 0x20 || c >= 0x80) return false;
      ++p;
    }
    if (p == end) return false;
    scratch.assign(first, static_cast<std::size_t>(p - first));
    ++p;
    return true;
  };
  constexpr auto unknown_size = static_cast<std::size_t>(-1);

  enum class next : uint8_t { value, key, after_value };
  next state = next::value;
  skip_ws();
  if (p == end) return fast_outcome::declined;
  for (;;) {
    switch (state) {
      case next::value: {
        if (p == end) return fast_outcome::declined;
        const char c = *p;
        if (c == '{') {
          if (depth == static_cast<int>(sizeof(stack))) return fast_outcome::declined;
          if (!sax.start_object(unknown_size)) return fast_outcome::handler_stopped;
          stack[depth++] = '{';
          ++p;
          skip_ws();
          if (p < end && *p == '}') {
            ++p;
            --depth;
            if (!sax.end_object()) return fast_outcome::handler_stopped;
            state = next::after_value;
          } else {
            state = next::key;
          }
          continue;
        }
        if (c == '[') {
          if (depth == static_cast<int>(sizeof(stack))) return fast_outcome::declined;
          if (!sax.start_array(unknown_size)) return fast_outcome::handler_stopped;
          stack[depth++] = '[';
          ++p;
          skip_ws();
          if (p < end && *p == ']') {
            ++p;
            --depth;
            if (!sax.end_array()) return fast_outcome::handler_stopped;
            state = next::after_value;
          } else {
            state = next::value;
          }
          continue;
        }
        if (c == '"') {
          if (!read_string()) return fast_outcome::declined;
          if (!sax.string(scratch)) return fast_outcome::handler_stopped;
          state = next::after_value;
          continue;
        }
        if (c >= '0' && c <= '9') {
          const char* first = p;
          uint64_t value = 0;
          while (p < end && *p >= '0' && *p <= '9') value = value * 10 + static_cast<uint64_t>(*p++ - '0');
          const auto digits = p - first;
          if (digits > 18 || (digits > 1 && *first == '0')) return fast_outcome::declined;
          if (p < end && (*p == '.' || *p == 'e' || *p == 'E')) return fast_outcome::declined;
          if (!sax.number_unsigned(value)) return fast_outcome::handler_stopped;
          state = next::after_value;
          continue;
        }
        const std::string_view rest(p, static_cast<std::size_t>(end - p));
        if (rest.substr(0, 4) == "null") {
          p += 4;
          if (!sax.null()) return fast_outcome::handler_stopped;
        } else if (rest.substr(0, 4) == "true") {
          p += 4;
          if (!sax.boolean(true)) return fast_outcome::handler_stopped;
        } else if (rest.substr(0, 5) == "false") {
          p += 5;
          if (!sax.boolean(false)) return fast_outcome::handler_stopped;
        } else {
          return fast_outcome::declined;
        }
        state = next::after_value;
        continue;
      }
      case next::key: {
        skip_ws();
        if (p == end || *p != '"' || !read_string()) return fast_outcome::declined;
        if (!sax.key(scratch)) return fast_outcome::handler_stopped;
        skip_ws();
        if (p == end || *p != ':') return fast_outcome::declined;
        ++p;
        skip_ws();
        state = next::value;
        continue;
      }
      case next::after_value: {
        skip_ws();
        if (depth == 0) return p == end ? fast_outcome::accepted : fast_outcome::declined;
        if (p == end) return fast_outcome::declined;
        const char open = stack[depth - 1];
        if (*p == ',') {
          ++p;
          skip_ws();
          state = open == '{' ? next::key : next::value;
          continue;
        }
        if (open == '{' && *p == '}') {
          ++p;
          --depth;
          if (!sax.end_object()) return fast_outcome::handler_stopped;
          continue;
        }
        if (open == '[' && *p == ']') {
          ++p;
          --depth;
          if (!sax.end_array()) return fast_outcome::handler_stopped;
          continue;
        }
        return fast_outcome::declined;
      }
    }
  }
}

}  // namespace

status parse_index_json(std::string_view text, parsed_index& out) {
  {
    out.clear();
    index_sax fast_sax(out);
    thread_local std::string scratch;
    switch (fast_parse(text, fast_sax, scratch)) {
      case fast_outcome::accepted:
        return fast_sax.finish();
      case fast_outcome::handler_stopped:
        return status(error_code::data_loss, fast_sax.error);
      case fast_outcome::declined:
        break;  // nlohmann decides, from the start
    }
  }
  return parse_index_json_nlohmann(text, out);
}

status parse_index_json_nlohmann(std::string_view text, parsed_index& out) {
  out.clear();
  index_sax sax(out);
  bool ok = false;
  try {
    ok = json::sax_parse(text.begin(), text.end(), &sax);
  } catch (const std::exception& e) {  // nlohmann reports through the handler; belt and braces
    return status(error_code::data_loss, fmt::format("not valid JSON: {}", e.what()));
  }
  if (!ok) {
    return status(error_code::data_loss, sax.error.empty() ? std::string("not valid JSON") : sax.error);
  }
  return sax.finish();
}

}  // namespace trialstat::trial::detail
