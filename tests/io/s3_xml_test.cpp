// SPDX-License-Identifier: Apache-2.0
// S3 ListObjectsV2 pages and error documents (host/io/s3/s3_xml.cpp).
#include <gtest/gtest.h>

#include <string>

#include "host/io/s3/s3_xml.hpp"

namespace trialstat::io::detail {
namespace {

TEST(S3Xml, ParsesObjectsPrefixesAndContinuation) {
  const auto page = parse_list_objects_v2(
      R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsTruncated>true</IsTruncated>
<NextContinuationToken>tok/en=</NextContinuationToken>
<Contents><Key>t/index/000000000/000000000000_worker_0.json</Key><Size>1234</Size><ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag></Contents>
<Contents><Key>a &amp; b</Key><Size>18446744073709551615</Size></Contents>
<CommonPrefixes><Prefix>t/index/000000001/</Prefix></CommonPrefixes></ListBucketResult>)",
      "GET s3://b/?list-type=2");
  ASSERT_TRUE(page.has_value()) << page.error_status().to_string();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "t/index/000000000/000000000000_worker_0.json");
  EXPECT_EQ(page->objects[0].size_bytes, 1234u);
  EXPECT_EQ(page->objects[0].etag, "\"9b2cf535f27731c974343645a3985328\"");  // the statistics store's identity
  EXPECT_EQ(page->objects[1].key, "a & b");
  EXPECT_EQ(page->objects[1].etag, "");
  EXPECT_EQ(page->objects[1].size_bytes, UINT64_MAX);
  EXPECT_EQ(page->common_prefixes, std::vector<std::string>{"t/index/000000001/"});
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "tok/en=");
}

// Found by tests/fuzz/fuzz_s3_xml (issue 12): pugixml drops text that is all whitespace by
// default, so a key or prefix of blanks (legal in S3) was read as "". The fuzzer's reproducer
// had a prefix of a tab (then "&#x0;", which ends the text), and a key of one space.
TEST(S3Xml, AKeyOrPrefixOfWhitespaceIsKept) {
  const auto page = parse_list_objects_v2(
      "?\n<ListBucketResult>r>IsTd><CommonPrefixes><Prefix>\t&#x0;it\t\tal\xff\t</Prefix>"
      "</CommonPrefixes><Contents><Key> </Key><Size>0</Size></Contents></ListBucketResult>\n",
      "GET s3://b/?list-type=2");
  ASSERT_TRUE(page.has_value()) << page.error_status().to_string();
  EXPECT_EQ(page->common_prefixes, std::vector<std::string>{"\t"});
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].key, " ");
}

TEST(S3Xml, ErrorsNameTheRequest) {
  const std::string what = "GET s3://b/?list-type=2";
  for (const char* xml : {"<ListBucketResult><Contents><Key>k</Key><Size>12x</Size></Contents>"
                          "</ListBucketResult>",
                          "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
                          "<Other/>", "<ListBucketResult>"}) {
    const auto page = parse_list_objects_v2(xml, what);
    ASSERT_FALSE(page.has_value()) << xml;
    EXPECT_EQ(page.error_status().code(), error_code::data_loss) << xml;
    EXPECT_EQ(page.error_status().message().rfind(what + ": ", 0), 0u) << page.error_status().message();
  }
}

TEST(S3Xml, ErrorDocument) {
  const auto e = parse_s3_error("<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>");
  EXPECT_EQ(e.code, "AccessDenied");
  EXPECT_EQ(e.message, "Access Denied");
  EXPECT_EQ(parse_s3_error("not xml <").code, "");
}

}  // namespace
}  // namespace trialstat::io::detail
