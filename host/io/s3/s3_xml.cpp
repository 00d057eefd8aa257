// SPDX-License-Identifier: Apache-2.0
#include "host/io/s3/s3_xml.hpp"

#include <charconv>

#include <fmt/format.h>
#include <pugixml.hpp>

namespace trialstat::io::detail {

result<s3_list_page> parse_list_objects_v2(std::string_view xml, std::string_view what) {
  pugi::xml_document doc;
  // parse_ws_pcdata_single: an element whose whole text is whitespace keeps it (pugixml drops
  // such text by default), so a key or prefix such as " " is not read as "".
  const pugi::xml_parse_result parsed =
      doc.load_buffer(xml.data(), xml.size(), pugi::parse_default | pugi::parse_ws_pcdata_single);
  if (!parsed) {
    return status(error_code::data_loss,
                  fmt::format("{}: ListObjectsV2 response is not XML ({} at byte {})", what,
                              parsed.description(), parsed.offset));
  }
  const pugi::xml_node root = doc.child("ListBucketResult");
  if (!root) {
    return status(error_code::data_loss,
                  fmt::format("{}: ListObjectsV2 response has no ListBucketResult", what));
  }
  s3_list_page page;
  for (const pugi::xml_node contents : root.children("Contents")) {
    s3_list_page::object object;
    object.key = contents.child_value("Key");
    object.etag = contents.child_value("ETag");
    const std::string_view size = contents.child_value("Size");
    const auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), object.size_bytes);
    if (ec != std::errc() || end != size.data() + size.size()) {
      return status(error_code::data_loss,
                    fmt::format("{}: ListObjectsV2: object '{}' has Size '{}', not a number", what,
                                object.key, size));
    }
    page.objects.push_back(std::move(object));
  }
  for (const pugi::xml_node prefix : root.children("CommonPrefixes")) {
    page.common_prefixes.emplace_back(prefix.child_value("Prefix"));
  }
  page.truncated = std::string_view(root.child_value("IsTruncated")) == "true";
  page.next_continuation_token = root.child_value("NextContinuationToken");
  if (page.truncated && page.next_continuation_token.empty()) {
    return status(error_code::data_loss,
                  fmt::format("{}: ListObjectsV2: IsTruncated without NextContinuationToken", what));
  }
  return page;
}

s3_error_document parse_s3_error(std::string_view xml) {
  s3_error_document error;
  pugi::xml_document doc;
  if (!doc.load_buffer(xml.data(), xml.size())) return error;
  const pugi::xml_node root = doc.child("Error");
  error.code = root.child_value("Code");
  error.message = root.child_value("Message");
  return error;
}

}  // namespace trialstat::io::detail
