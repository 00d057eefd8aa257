// SPDX-License-Identifier: Apache-2.0
// The S3 XML documents the source reads, parsed with pugixml: ListObjectsV2 results and error
// documents. Internal to host/io.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/status.hpp"

namespace trialstat::io::detail {

/// One page of a ListObjectsV2 response.
struct s3_list_page {
  struct object {
    std::string key;  ///< full bucket key
    uint64_t size_bytes = 0;
    std::string etag;  ///< as listed (quotes kept); empty when the listing gives none
  };
  std::vector<object> objects;
  std::vector<std::string> common_prefixes;  ///< with a delimiter: the "folders"
  bool truncated = false;
  std::string next_continuation_token;
};

/// Parse a ListObjectsV2 result. Errors: data_loss naming `what` when the document is not
/// well-formed or not a ListBucketResult, or a Size is not a number.
[[nodiscard]] result<s3_list_page> parse_list_objects_v2(std::string_view xml, std::string_view what);

/// Code and Message of an S3 error document (empty strings when it is not one).
struct s3_error_document {
  std::string code;
  std::string message;
};
[[nodiscard]] s3_error_document parse_s3_error(std::string_view xml);

}  // namespace trialstat::io::detail
