// SPDX-License-Identifier: Apache-2.0
// Where an S3 trial is and how to reach it: the parsed `s3://bucket/prefix`, and the AWS
// configuration resolved as the AWS CLI and boto3 resolve it (environment, then the shared
// credentials and config files of the profile). Internal to host/io.
#pragma once

#include <string>
#include <string_view>

#include "trialstat/io/source_options.hpp"
#include "trialstat/status.hpp"

namespace trialstat::io::detail {

/// `s3://bucket/prefix` split; `prefix` has no leading or trailing '/' (may be empty).
struct s3_location {
  std::string bucket;
  std::string prefix;
};

/// Parse `s3://bucket[/prefix][/]` (trimmed). Errors: invalid_argument (no bucket).
[[nodiscard]] result<s3_location> parse_s3_location(std::string_view text);

/// The resolved AWS configuration for one source. `credentials_source` says where the keys were
/// found (for messages; never the secret itself).
struct s3_config {
  std::string endpoint;        ///< scheme://host[:port], no trailing '/'
  bool path_style = false;     ///< endpoint/bucket/key (custom endpoints) vs bucket.endpoint/key
  std::string region;
  bool sign = true;            ///< false: --no-sign-request
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
  std::string credentials_source;  ///< e.g. "environment variables AWS_ACCESS_KEY_ID/..."
};

/// Resolve the configuration: credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
/// (/ AWS_SESSION_TOKEN), else the profile (options.profile, AWS_PROFILE, AWS_DEFAULT_PROFILE,
/// "default") in AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials), then AWS_CONFIG_FILE
/// (~/.aws/config); region from options, AWS_REGION, AWS_DEFAULT_REGION, the profile, else
/// us-east-1; endpoint from options, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's
/// endpoint_url, else https://s3.<region>.amazonaws.com (virtual-hosted style).
/// Errors: invalid_argument when a named profile exists in neither file, or an endpoint is not
/// an http(s) URL; not_found when no credentials are found and requests are to be signed.
[[nodiscard]] result<s3_config> resolve_s3_config(const s3_options& options);

}  // namespace trialstat::io::detail
