// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: S3 XML documents (host/io/s3/s3_xml.cpp, pugixml): ListObjectsV2 pages and
// error documents. The input is one response body. A page parses or fails with data_loss naming
// the request; a truncated page has a continuation token; a parsed page written back as XML
// (pugixml's writer) parses to the same page when its strings are XML-safe text.
#include <cstdint>
#include <sstream>
#include <string>

#include <pugixml.hpp>

#include "host/io/s3/s3_xml.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace trialstat;
using trialstat::io::detail::s3_list_page;

namespace {

/// Text that survives an XML write/read unchanged: no control characters other than tab and
/// newline (pugixml turns \r\n into \n and drops nothing else).
bool xml_safe(std::string_view text) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && u != '\t' && u != '\n') return false;
  }
  return true;
}

std::string to_xml(const s3_list_page& page) {
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("ListBucketResult");
  for (const auto& o : page.objects) {
    pugi::xml_node c = root.append_child("Contents");
    c.append_child("Key").text().set(o.key.c_str());
    c.append_child("Size").text().set(std::to_string(o.size_bytes).c_str());
  }
  for (const auto& p : page.common_prefixes) {
    root.append_child("CommonPrefixes").append_child("Prefix").text().set(p.c_str());
  }
  root.append_child("IsTruncated").text().set(page.truncated ? "true" : "false");
  if (!page.next_continuation_token.empty()) {
    root.append_child("NextContinuationToken").text().set(page.next_continuation_token.c_str());
  }
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw);
  return out.str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view xml = fuzz::as_text(data, size);
  const std::string what = "GET s3://fuzz/?list-type=2";
  const auto page = io::detail::parse_list_objects_v2(xml, what);
  (void)io::detail::parse_s3_error(xml);
  if (!page.has_value()) {
    const status s = page.error_status();
    FUZZ_CHECK(s.code() == error_code::data_loss, s.to_string());
    FUZZ_CHECK(fuzz::starts_with(s.message(), what + ": "), "the error does not name the request");
    return 0;
  }
  FUZZ_CHECK(!page->truncated || !page->next_continuation_token.empty(), "truncated without a token");
  bool safe = xml_safe(page->next_continuation_token);
  for (const auto& o : page->objects) safe = safe && xml_safe(o.key) && o.key.find('\0') == std::string::npos;
  for (const auto& p : page->common_prefixes) safe = safe && xml_safe(p);
  if (!safe) return 0;
  const auto again = io::detail::parse_list_objects_v2(to_xml(*page), what);
  FUZZ_CHECK(again.has_value(), again.error_status().to_string());
  FUZZ_CHECK(again->objects.size() == page->objects.size() &&
                 again->common_prefixes == page->common_prefixes &&
                 again->truncated == page->truncated &&
                 again->next_continuation_token == page->next_continuation_token,
             "a page written back as XML reads differently");
  for (std::size_t i = 0; i < page->objects.size(); ++i) {
    FUZZ_CHECK(again->objects[i].key == page->objects[i].key &&
                   again->objects[i].size_bytes == page->objects[i].size_bytes,
               "an object written back as XML reads differently");
  }
  return 0;
}
