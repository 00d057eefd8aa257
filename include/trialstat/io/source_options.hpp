// SPDX-License-Identifier: Apache-2.0
/// @file source_options.hpp
/// @brief Settings of the trial sources (local folders and `s3://` prefixes). The AWS settings
/// (credentials, region, endpoint) come from the standard AWS environment and files as the AWS
/// CLI and boto3 read them; the fields here only override them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "trialstat/status.hpp"

namespace trialstat::io {

/// @brief S3 reading: concurrency, coalescing, memory budget, retries and overrides of the AWS
/// configuration. Defaults suit a trial in the same region; every field can also be set from
/// the environment (`s3_options_from_environment`).
struct s3_options {
  /// Unsigned requests (public buckets): the AWS CLI's `--no-sign-request`.
  /// Environment: TRIALSTAT_S3_NO_SIGN_REQUEST=1.
  bool no_sign_request = false;
  /// Requests in flight at once (libcurl multi). Environment: TRIALSTAT_S3_MAX_IN_FLIGHT.
  int max_in_flight = 32;
  /// Record ranges of one object closer than this are fetched in one request (the gap bytes are
  /// transferred and dropped). Environment: TRIALSTAT_S3_COALESCE_GAP_BYTES.
  uint64_t coalesce_gap_bytes = uint64_t{64} << 10;
  /// Longest single ranged GET; longer ranges are split so that they are fetched in parallel
  /// (16 MiB: the upper end of AWS's advice for byte-range fetches; smaller parts cost servers
  /// that slice ranges out of whole objects, as moto does, a copy of the object per part).
  /// Environment: TRIALSTAT_S3_PART_BYTES.
  uint64_t part_bytes = uint64_t{16} << 20;
  /// Bytes fetched ahead of the reader (in flight plus fetched and not yet consumed) at most:
  /// what bounds the memory of an S3 read, whatever the trial's size. 128 MiB keeps 16 MiB parts
  /// of eight reads in flight (about 1 GB/s at 100 ms per request); every buffer of the budget
  /// is fresh memory the first time it fills, which 256 MiB paid for a 1 GB trial without reading
  /// it faster (bench/RESULTS.md, "S3 trials"). Environment: TRIALSTAT_S3_BUDGET_BYTES.
  uint64_t in_flight_budget_bytes = uint64_t{128} << 20;
  /// Tries per request (first try included) on 5xx, 429/SlowDown, connection resets, timeouts
  /// and bodies shorter than asked. Environment: TRIALSTAT_S3_MAX_ATTEMPTS.
  int max_attempts = 6;
  /// Exponential backoff with full jitter: a retry waits uniform(0, min(max, base * 2^try)) ms.
  int backoff_base_ms = 50;
  int backoff_max_ms = 5000;
  /// Per request: whole-transfer timeout and connect timeout (nothing hangs).
  /// Environment: TRIALSTAT_S3_TIMEOUT_MS (the transfer timeout).
  int request_timeout_ms = 120000;
  int connect_timeout_ms = 10000;
  /// Overrides of AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, AWS_REGION and AWS_PROFILE (empty: from
  /// the environment). An endpoint switches to path-style addressing (`endpoint/bucket/key`).
  std::string endpoint_url;
  std::string region;
  std::string profile;
  /// Progress of the catalog's S3 reads (objects, bytes, rate) on stderr, when stderr is a
  /// terminal (the statistics pass shows its own: pipeline_options::progress).
  bool progress = false;
};

/// @brief Settings for `open_trial_source`.
struct source_options {
  s3_options s3;
};

/// @brief `s3_options` defaults overridden by the TRIALSTAT_S3_* variables named at each field.
/// Errors: invalid_argument naming the variable when one is not a positive integer (or 0/1 for
/// TRIALSTAT_S3_NO_SIGN_REQUEST).
[[nodiscard]] result<s3_options> s3_options_from_environment();

}  // namespace trialstat::io
