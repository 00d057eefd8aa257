// SPDX-License-Identifier: Apache-2.0
// HTTP for the S3 source: SigV4-signed (libcurl's CURLOPT_AWS_SIGV4) GET/HEAD requests run many
// at once on a libcurl multi handle, with retries (exponential backoff, full jitter) on 5xx,
// 429/SlowDown, connection resets, timeouts and bodies shorter than asked. No HTTP, crypto or
// XML of our own: libcurl signs and transfers, pugixml parses (s3_xml). Internal to host/io.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "host/io/s3/s3_config.hpp"
#include "trialstat/io/object_reader.hpp"
#include "trialstat/io/source_options.hpp"
#include "trialstat/status.hpp"

namespace trialstat::io::detail {

/// RFC 3986 percent-encoding: unreserved characters stay, every other byte becomes %XX; '/'
/// stays too when `keep_slash` (object paths) and is encoded otherwise (query values, which SigV4
/// signs in this canonical form).
[[nodiscard]] std::string percent_encode(std::string_view text, bool keep_slash);

/// Totals of one source's requests (atomics: updated by every thread that reads).
struct s3_counters {
  std::atomic<int64_t> requests{0};         ///< requests finished (each try counted once)
  std::atomic<int64_t> retries{0};          ///< tries repeated after a retryable failure
  std::atomic<int64_t> bytes_received{0};   ///< body bytes of successful tries
  std::atomic<int64_t> objects{0};          ///< requests that succeeded
  std::atomic<int64_t> reads_ahead{0};      ///< read_ranges calls served by the read-ahead
  std::atomic<int64_t> reads_direct{0};     ///< read_ranges calls fetched on the spot
  std::atomic<int64_t> reads_in_place{0};   ///< reads ahead whose receive buffer was handed over
  std::mutex mutex;
  std::map<std::string, int64_t> retry_reasons;  ///< reason -> count (for the closing note)
};

/// One request. The body goes to `dest` (a fixed buffer of `dest_capacity` bytes: range GETs
/// into the reader's buffer) or else to `body` (listings, whole objects, error documents).
struct s3_request {
  std::string url;                      ///< full URL, query included
  std::string display;                  ///< s3://bucket/key for messages
  bool head = false;                    ///< HEAD instead of GET
  std::optional<byte_range> range;      ///< Range: bytes=offset-(offset+length-1); unset: the whole
                                        ///< object (into `dest`: its first dest_capacity bytes)
  std::byte* dest = nullptr;
  uint64_t dest_capacity = 0;
  std::string body;
  // ---- results ----
  long http_status = 0;                 ///< of the last try
  uint64_t received = 0;                ///< body bytes kept (into dest or body)
  std::optional<uint64_t> object_size;  ///< from Content-Range's total, or a 200's Content-Length
  std::string etag;                     ///< the ETag header (quotes kept), empty when none
  status outcome;                       ///< ok, or why the request failed after its tries
  int attempts = 0;
  void* user = nullptr;                 ///< caller's tag
};

class s3_client {
 public:
  s3_client(s3_location location, s3_config config, s3_options options);
  ~s3_client();
  s3_client(const s3_client&) = delete;
  s3_client& operator=(const s3_client&) = delete;

  [[nodiscard]] const s3_location& location() const noexcept { return location_; }
  [[nodiscard]] const s3_config& config() const noexcept { return config_; }
  [[nodiscard]] const s3_options& options() const noexcept { return options_; }
  [[nodiscard]] s3_counters& counters() const noexcept { return *counters_; }

  /// URL of a bucket key (percent-encoded path, path- or virtual-hosted style).
  [[nodiscard]] std::string object_url(std::string_view bucket_key) const;
  /// URL of the bucket itself with `query` (for ListObjectsV2).
  [[nodiscard]] std::string bucket_url(std::string_view query) const;
  /// `s3://bucket/<bucket_key>`.
  [[nodiscard]] std::string display(std::string_view bucket_key) const;

  /// Run requests on the calling thread, at most `max_in_flight` at once: `next` is asked for
  /// the next request whenever there is room and `may_start()` (if given) allows; nullptr ends
  /// the supply. `on_done` receives each request once, finished (outcome ok or not), after its
  /// retries. Returns when every request started is done, or when `*stop` becomes true (the
  /// requests in flight are abandoned and not reported). `wake()` interrupts a wait from
  /// another thread (when `may_start` may have changed).
  void run(const std::function<s3_request*()>& next, const std::function<void(s3_request&)>& on_done,
           const std::function<bool()>& may_start = {}, const std::atomic<bool>* stop = nullptr,
           int max_in_flight = 0) const;
  /// Run one request to completion (with retries).
  void run_one(s3_request& request) const;
  /// Wake every `run` waiting for `may_start` (thread-safe).
  void wake() const;

  /// The error message for a failed HTTP response (403: naming the credentials' source).
  [[nodiscard]] status http_error(const s3_request& request) const;

 private:
  struct shared_state;
  s3_location location_;
  s3_config config_;
  s3_options options_;
  std::unique_ptr<s3_counters> counters_;
  std::unique_ptr<shared_state> shared_;
};

}  // namespace trialstat::io::detail
