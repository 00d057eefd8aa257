// SPDX-License-Identifier: Apache-2.0
#include "host/io/s3/s3_client.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "host/io/s3/curl_library.hpp"
#include "host/io/s3/s3_xml.hpp"

namespace trialstat::io::detail {
namespace {

using clock_type = std::chrono::steady_clock;

/// SHA-256 of an empty body: GET and HEAD requests carry it as x-amz-content-sha256, which S3
/// requires of SigV4-signed requests.
constexpr const char* empty_payload_sha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";


/// Per-transfer state attached to an easy handle.
struct transfer {
  s3_request* request = nullptr;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  bool error_response = false;
  bool status_known = false;
  uint64_t skip = 0;               ///< body bytes to drop first (a 200 to a ranged GET)
  uint64_t position = 0;           ///< body bytes seen
  std::optional<uint64_t> content_length;
  int tries = 0;
  clock_type::time_point ready{};  ///< retry not before
};

std::optional<uint64_t> parse_uint(std::string_view text) {
  uint64_t value = 0;
  if (text.empty()) return std::nullopt;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<transfer*>(user);
  const std::size_t n = size * count;
  std::string_view line(data, n);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (e.g. after 100 Continue): reset
    t->content_length.reset();
    t->request->object_size.reset();
    t->request->etag.clear();
    return n;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  std::string name(line.substr(0, colon));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (name == "content-length") {
    t->content_length = parse_uint(value);
  } else if (name == "etag") {
    t->request->etag.assign(value);
  } else if (name == "content-range") {  // bytes a-b/total or bytes */total
    const auto slash = value.rfind('/');
    if (slash != std::string_view::npos) t->request->object_size = parse_uint(value.substr(slash + 1));
  }
  return n;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<transfer*>(user);
  s3_request& r = *t->request;
  const std::size_t n = size * count;
  if (!t->status_known) {
    long code = 0;
    curl().easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
    t->status_known = true;
    t->error_response = code >= 300;
    // A server that ignores Range answers 200 with the whole object: keep only the range.
    if (code == 200 && r.range) t->skip = r.range->offset_bytes;
  }
  if (t->error_response || r.dest == nullptr) {
    if (t->error_response && r.body.size() > (1 << 16)) return n;  // error documents are small
    r.body.append(data, n);
    if (!t->error_response) r.received += n;
    return n;
  }
  std::size_t offset = 0;
  if (t->position < t->skip) {
    const uint64_t drop = std::min<uint64_t>(t->skip - t->position, n);
    offset = static_cast<std::size_t>(drop);
  }
  t->position += n;
  if (offset < n && r.received < r.dest_capacity) {
    const uint64_t keep = std::min<uint64_t>(n - offset, r.dest_capacity - r.received);
    std::memcpy(r.dest + r.received, data + offset, static_cast<std::size_t>(keep));
    r.received += keep;
  }
  return n;
}

}  // namespace

std::string percent_encode(std::string_view text, bool keep_slash) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out.push_back(c);
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

// ---- shared connection cache --------------------------------------------------------------------

struct s3_client::shared_state {
  CURLSH* share = nullptr;
  std::mutex locks[CURL_LOCK_DATA_LAST];
  std::mutex wake_mutex;
  std::vector<CURLM*> waiting;  // multis inside run(), for wake()

  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<shared_state*>(user)->locks[data].lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<shared_state*>(user)->locks[data].unlock();
  }
  shared_state() {
    share = curl().share_init();
    curl().share_setopt(share, CURLSHOPT_LOCKFUNC, &shared_state::lock);
    curl().share_setopt(share, CURLSHOPT_UNLOCKFUNC, &shared_state::unlock);
    curl().share_setopt(share, CURLSHOPT_USERDATA, this);
    curl().share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl().share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  }
  ~shared_state() { curl().share_cleanup(share); }
};

s3_client::s3_client(s3_location location, s3_config config, s3_options options)
    : location_(std::move(location)),
      config_(std::move(config)),
      options_(std::move(options)),
      counters_(std::make_unique<s3_counters>()) {
  shared_ = std::make_unique<shared_state>();
}

s3_client::~s3_client() = default;

std::string s3_client::object_url(std::string_view bucket_key) const {
  const std::string path = percent_encode(bucket_key, /*keep_slash=*/true);
  if (config_.path_style) return fmt::format("{}/{}/{}", config_.endpoint, location_.bucket, path);
  const auto scheme_end = config_.endpoint.find("://") + 3;
  return fmt::format("{}{}.{}/{}", config_.endpoint.substr(0, scheme_end), location_.bucket,
                     config_.endpoint.substr(scheme_end), path);
}

std::string s3_client::bucket_url(std::string_view query) const {
  std::string url = object_url("");
  if (!query.empty()) url += "?" + std::string(query);
  return url;
}

std::string s3_client::display(std::string_view bucket_key) const {
  return fmt::format("s3://{}/{}", location_.bucket, bucket_key);
}

status s3_client::http_error(const s3_request& r) const {
  const s3_error_document doc = parse_s3_error(r.body);
  const std::string code = doc.code.empty() ? fmt::format("HTTP {}", r.http_status)
                                            : fmt::format("{} {}", r.http_status, doc.code);
  const std::string detail = doc.message.empty() ? std::string() : ": " + doc.message;
  const std::string creds = config_.sign ? fmt::format("credentials from {}", config_.credentials_source)
                                         : std::string("unsigned requests (--no-sign-request)");
  if (doc.code == "NoSuchBucket") {
    return status(error_code::not_found,
                  fmt::format("{}: bucket '{}' does not exist ({}{})", r.display, location_.bucket, code, detail));
  }
  if (r.http_status == 404) {
    return status(error_code::not_found, fmt::format("{}: no such object ({}{})", r.display, code, detail));
  }
  if (r.http_status == 403 || doc.code == "InvalidAccessKeyId" || doc.code == "SignatureDoesNotMatch" ||
      doc.code == "ExpiredToken" || doc.code == "InvalidToken") {
    return status(error_code::io_error,
                  fmt::format("{}: access denied by bucket '{}' ({}{}); {}", r.display, location_.bucket,
                              code, detail, creds));
  }
  return status(error_code::io_error, fmt::format("{}: {}{}", r.display, code, detail));
}

void s3_client::wake() const {
  std::lock_guard lock(shared_->wake_mutex);
  for (CURLM* multi : shared_->waiting) curl().multi_wakeup(multi);
}

void s3_client::run_one(s3_request& request) const {
  bool given = false;
  run([&]() -> s3_request* {
        if (given) return nullptr;
        given = true;
        return &request;
      },
      [](s3_request&) {});
}

void s3_client::run(const std::function<s3_request*()>& next, const std::function<void(s3_request&)>& on_done,
                    const std::function<bool()>& may_start, const std::atomic<bool>* stop,
                    int max_in_flight) const {
  if (max_in_flight <= 0) max_in_flight = std::max(1, options_.max_in_flight);
  CURLM* multi = curl().multi_init();
  {
    std::lock_guard lock(shared_->wake_mutex);
    shared_->waiting.push_back(multi);
  }
  std::vector<std::unique_ptr<transfer>> active;  // in flight
  std::vector<std::unique_ptr<transfer>> delayed;  // waiting for a retry
  std::minstd_rand random(static_cast<unsigned>(clock_type::now().time_since_epoch().count()));

  const auto start = [&](std::unique_ptr<transfer> t) {
    s3_request& r = *t->request;
    r.received = 0;
    r.body.clear();
    r.http_status = 0;
    r.object_size.reset();
    t->error_response = false;
    t->status_known = false;
    t->skip = 0;
    t->position = 0;
    t->content_length.reset();
    if (t->easy == nullptr) {
      t->easy = curl().easy_init();
      CURL* e = t->easy;
      curl().easy_setopt(e, CURLOPT_URL, r.url.c_str());
      curl().easy_setopt(e, CURLOPT_SHARE, shared_->share);
      curl().easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
      curl().easy_setopt(e, CURLOPT_HEADERFUNCTION, &on_header);
      curl().easy_setopt(e, CURLOPT_HEADERDATA, t.get());
      curl().easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_body);
      curl().easy_setopt(e, CURLOPT_WRITEDATA, t.get());
      curl().easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout_ms));
      curl().easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout_ms));
      // A stalled transfer (under 1 KiB/s for 30 s) is a timeout too, whatever the total.
      curl().easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1024L);
      curl().easy_setopt(e, CURLOPT_LOW_SPEED_TIME, 30L);
      curl().easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "identity");
      // 256 KiB receive buffer (libcurl's default is 16 KiB): 16x fewer recv calls and body
      // callbacks on multi-MiB ranged GETs, as the curl tool does with its own 100 KiB buffer.
      curl().easy_setopt(e, CURLOPT_BUFFERSIZE, 256L << 10);
      if (r.head) curl().easy_setopt(e, CURLOPT_NOBODY, 1L);
      if (r.range) {
        const std::string range = fmt::format("{}-{}", r.range->offset_bytes,
                                              r.range->offset_bytes + r.range->length_bytes - 1);
        curl().easy_setopt(e, CURLOPT_RANGE, range.c_str());
      }
      t->headers = curl().slist_append(t->headers, fmt::format("x-amz-content-sha256: {}", empty_payload_sha256).c_str());
      if (config_.sign) {
        curl().easy_setopt(e, CURLOPT_AWS_SIGV4, fmt::format("aws:amz:{}:s3", config_.region).c_str());
        curl().easy_setopt(e, CURLOPT_USERNAME, config_.access_key_id.c_str());
        curl().easy_setopt(e, CURLOPT_PASSWORD, config_.secret_access_key.c_str());
        if (!config_.session_token.empty()) {
          t->headers = curl().slist_append(t->headers, fmt::format("x-amz-security-token: {}", config_.session_token).c_str());
        }
      }
      curl().easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
      curl().easy_setopt(e, CURLOPT_PRIVATE, t.get());
    }
    ++t->tries;
    r.attempts = t->tries;
    curl().multi_add_handle(multi, t->easy);
    active.push_back(std::move(t));
  };
  const auto release = [&](transfer& t) {
    if (t.easy != nullptr) curl().easy_cleanup(t.easy);
    if (t.headers != nullptr) curl().slist_free_all(t.headers);
    t.easy = nullptr;
    t.headers = nullptr;
  };
  const auto note_retry = [&](const std::string& reason) {
    counters_->retries.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(counters_->mutex);
    ++counters_->retry_reasons[reason];
  };

  /// A finished try: done (report), or scheduled again.
  const auto finish = [&](std::unique_ptr<transfer> t, CURLcode code) {
    s3_request& r = *t->request;
    counters_->requests.fetch_add(1, std::memory_order_relaxed);
    long http = 0;
    curl().easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &http);
    r.http_status = http;
    std::string retry_reason;
    std::string failure;
    if (code != CURLE_OK) {
      retry_reason = curl().easy_strerror(code);
      failure = fmt::format("{}: {}", r.display, curl().easy_strerror(code));
    } else if (http >= 500 || http == 429) {
      const s3_error_document doc = parse_s3_error(r.body);
      retry_reason = fmt::format("HTTP {}{}", http, doc.code.empty() ? "" : " " + doc.code);
      failure = fmt::format("{}: {}", r.display, retry_reason);
    } else if (http == 400 && parse_s3_error(r.body).code == "SlowDown") {
      retry_reason = "HTTP 400 SlowDown";
      failure = fmt::format("{}: {}", r.display, retry_reason);
    } else if (http == 416 && r.range) {
      // The range starts at or past the end: nothing of it exists (the reader reports it).
      r.received = 0;
      if (r.dest == nullptr) r.body.clear();
    } else if (http >= 300) {
      r.outcome = http_error(r);
      release(*t);
      on_done(r);
      return;
    } else {
      // A body shorter than promised: the connection was cut (retry).
      uint64_t expected = 0;
      bool known = false;
      if (r.head) {
        if (!r.object_size && t->content_length) r.object_size = t->content_length;
        known = true;
      } else if (r.range && http == 206) {
        if (r.object_size) {
          const uint64_t end = std::min(r.range->offset_bytes + r.range->length_bytes, *r.object_size);
          expected = end > r.range->offset_bytes ? end - r.range->offset_bytes : 0;
          known = true;
        } else if (t->content_length) {
          expected = *t->content_length;
          known = true;
        }
      } else if (t->content_length) {  // 200: the whole object (or the range out of it)
        if (!r.object_size) r.object_size = t->content_length;
        const uint64_t total = *t->content_length;
        if (r.range) {
          const uint64_t end = std::min(r.range->offset_bytes + r.range->length_bytes, total);
          expected = end > r.range->offset_bytes ? end - r.range->offset_bytes : 0;
        } else if (r.dest != nullptr) {
          // A whole-object GET into a buffer sized from the listing: an object that grew since
          // still gives the listed prefix (which the index's records lie in).
          expected = std::min(total, r.dest_capacity);
        } else {
          expected = total;
        }
        known = true;
      }
      if (known && !r.head && r.received < expected) {
        retry_reason = "body shorter than Content-Length";
        failure = fmt::format("{}: the body ended after {} of {} bytes", r.display, r.received, expected);
      }
    }
    if (!retry_reason.empty()) {
      if (t->tries < std::max(1, options_.max_attempts)) {
        note_retry(retry_reason);
        const int exponent = std::min(t->tries - 1, 20);
        const int64_t cap = std::min<int64_t>(options_.backoff_max_ms,
                                              int64_t{options_.backoff_base_ms} << exponent);
        std::uniform_int_distribution<int64_t> jitter(0, std::max<int64_t>(cap, 1));
        t->ready = clock_type::now() + std::chrono::milliseconds(jitter(random));
        delayed.push_back(std::move(t));
        return;
      }
      r.outcome = status(error_code::io_error,
                         fmt::format("{} (gave up after {} tries)", failure, t->tries));
      release(*t);
      on_done(r);
      return;
    }
    counters_->objects.fetch_add(1, std::memory_order_relaxed);
    counters_->bytes_received.fetch_add(static_cast<int64_t>(r.received), std::memory_order_relaxed);
    r.outcome = status::success();
    release(*t);
    on_done(r);
  };

  for (;;) {
    if (stop != nullptr && stop->load()) break;
    // Retries that are due, then new requests while there is room.
    const auto now = clock_type::now();
    for (std::size_t i = 0; i < delayed.size() && static_cast<int>(active.size()) < max_in_flight;) {
      if (delayed[i]->ready <= now) {
        auto t = std::move(delayed[i]);
        delayed.erase(delayed.begin() + static_cast<std::ptrdiff_t>(i));
        start(std::move(t));
      } else {
        ++i;
      }
    }
    bool blocked = false;     // may_start() said wait
    bool exhausted = false;   // next() had nothing (now)
    while (static_cast<int>(active.size()) < max_in_flight) {
      if (may_start && !may_start()) {
        blocked = true;
        break;
      }
      s3_request* r = next();
      if (r == nullptr) {
        exhausted = true;
        break;
      }
      auto t = std::make_unique<transfer>();
      t->request = r;
      if (r->display.empty()) r->display = r->url;
      start(std::move(t));
    }
    if (active.empty() && delayed.empty() && exhausted) break;

    int running = 0;
    curl().multi_perform(multi, &running);
    int messages = 0;
    bool finished_any = false;
    while (CURLMsg* message = curl().multi_info_read(multi, &messages)) {
      if (message->msg != CURLMSG_DONE) continue;
      CURL* easy = message->easy_handle;
      const CURLcode code = message->data.result;
      curl().multi_remove_handle(multi, easy);
      auto it = std::find_if(active.begin(), active.end(), [&](const auto& t) { return t->easy == easy; });
      if (it == active.end()) continue;
      auto t = std::move(*it);
      active.erase(it);
      finish(std::move(t), code);
      finished_any = true;
    }
    // A finished request may have made room or supplied more (on_done): ask again at once.
    if (finished_any) continue;
    // Wait for sockets, the next retry, or a wake-up (budget freed).
    int timeout_ms = blocked ? 50 : 200;
    if (!delayed.empty()) {
      auto soonest = delayed.front()->ready;
      for (const auto& t : delayed) soonest = std::min(soonest, t->ready);
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(soonest - clock_type::now()).count();
      timeout_ms = static_cast<int>(std::clamp<int64_t>(wait, 0, timeout_ms));
    }
    curl().multi_poll(multi, nullptr, 0, timeout_ms, nullptr);
  }
  {
    std::lock_guard lock(shared_->wake_mutex);
    std::erase(shared_->waiting, multi);
  }
  for (auto& t : active) {
    curl().multi_remove_handle(multi, t->easy);
    release(*t);
  }
  for (auto& t : delayed) release(*t);
  curl().multi_cleanup(multi);
}

}  // namespace trialstat::io::detail
