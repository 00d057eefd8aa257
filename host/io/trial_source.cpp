// SPDX-License-Identifier: Apache-2.0
// The parts of the source interface shared by every source: the default multi-range read, the
// default batch read of whole objects, location parsing and the TRIALSTAT_S3_* settings.
#include "trialstat/io/trial_source.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "host/io/local_source.hpp"
#include "host/io/s3/s3_source.hpp"
#include "host/io/trim.hpp"
#include "trialstat/io/file_reader.hpp"

namespace trialstat::io {
namespace {

using detail::trim;

/// A positive integer from the environment variable `name` into `out` (unchanged when unset).
template <typename T>
status read_positive(const char* name, T& out) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return status::success();
  const std::string_view view = trim(text);
  T value{};
  const auto [end, ec] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (ec != std::errc() || end != view.data() + view.size() || value <= 0) {
    return status(error_code::invalid_argument,
                  fmt::format("{}='{}': expected a positive integer", name, text));
  }
  out = value;
  return status::success();
}

}  // namespace

result<uint64_t> total_range_bytes(std::span<const byte_range> ranges, std::string_view name) {
  uint64_t total = 0;
  for (const byte_range& r : ranges) {
    if (r.length_bytes > max_ranges_total_bytes - total) {
      return status(error_code::data_loss,
                    fmt::format("{}: the {} requested record ranges add up to more than 2^40 bytes (a "
                                "corrupt index length?); nothing read",
                                name, ranges.size()));
    }
    total += r.length_bytes;
  }
  return total;
}

status object_reader::read_ranges(std::span<const byte_range> ranges, std::byte* out,
                                  std::span<uint64_t> available) const {
  const uint64_t size = size_bytes();
  uint64_t cursor = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const byte_range& r = ranges[i];
    // A range past the end of the object is reported when its record is parsed.
    const uint64_t have = r.offset_bytes < size ? std::min(r.length_bytes, size - r.offset_bytes) : 0;
    if (have > 0) {
      TRIALSTAT_RETURN_IF_ERROR(read_at(r.offset_bytes, {out + cursor, static_cast<std::size_t>(have)}));
    }
    available[i] = have;
    cursor += r.length_bytes;
  }
  return status::success();
}

result<std::optional<object_identity>> trial_source::identify(std::string_view key) const {
  return status(error_code::invalid_argument,
                fmt::format("{}: this source cannot tell an object's version", display_name(key)));
}

void trial_source::read_objects(std::span<const std::string> keys, const object_callback& on_object,
                                uint64_t max_bytes) const {
  std::vector<std::byte> buffer;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto size = read_object(keys[i], buffer, max_bytes);
    if (!size) {
      on_object(i, size.error_status());
    } else {
      on_object(i, std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(*size)));
    }
  }
}

status trial_source::list_share(std::string_view sub, std::string_view start_after, int share, int shares,
                                std::vector<object_info>& out, const folder_filter& /*skip_folder: a flat listing*/) const {
  out.clear();
  if (shares < 1 || share < 0 || share >= shares) {
    return status(error_code::invalid_argument,
                  fmt::format("listing share {} of {} of {}: no such share", share, shares, display_name(sub)));
  }
  return share == 0 ? list(sub, start_after, out) : status::success();
}

bool is_s3_location(std::string_view location) noexcept {
  const std::string_view text = trim(location);
  return text.size() >= 5 && text.substr(0, 5) == "s3://";
}

result<s3_options> s3_options_from_environment() {
  s3_options options;
  if (const char* sign = std::getenv("TRIALSTAT_S3_NO_SIGN_REQUEST"); sign != nullptr && *sign != '\0') {
    const std::string_view v = trim(sign);
    if (v == "1" || v == "true") {
      options.no_sign_request = true;
    } else if (v != "0" && v != "false") {
      return status(error_code::invalid_argument,
                    fmt::format("TRIALSTAT_S3_NO_SIGN_REQUEST='{}': expected 0 or 1", sign));
    }
  }
  TRIALSTAT_RETURN_IF_ERROR(read_positive("TRIALSTAT_S3_MAX_IN_FLIGHT", options.max_in_flight));
  TRIALSTAT_RETURN_IF_ERROR(read_positive("TRIALSTAT_S3_COALESCE_GAP_BYTES", options.coalesce_gap_bytes));
  TRIALSTAT_RETURN_IF_ERROR(read_positive("TRIALSTAT_S3_PART_BYTES", options.part_bytes));
  TRIALSTAT_RETURN_IF_ERROR(read_positive("TRIALSTAT_S3_BUDGET_BYTES", options.in_flight_budget_bytes));
  TRIALSTAT_RETURN_IF_ERROR(read_positive("TRIALSTAT_S3_MAX_ATTEMPTS", options.max_attempts));
  TRIALSTAT_RETURN_IF_ERROR(read_positive("TRIALSTAT_S3_TIMEOUT_MS", options.request_timeout_ms));
  return options;
}

result<std::shared_ptr<const trial_source>> open_trial_source(std::string_view location,
                                                              const source_options& options) {
  const std::string_view text = trim(location);
  if (is_s3_location(text)) {
    auto s3 = detail::make_s3_source(text, options.s3);
    if (!s3) return s3.error_status();
    return std::shared_ptr<const trial_source>(std::move(*s3));
  }
  return std::shared_ptr<const trial_source>(std::make_shared<detail::local_source>(std::string(text)));
}

}  // namespace trialstat::io
