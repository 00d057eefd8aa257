// SPDX-License-Identifier: Apache-2.0
#include "host/io/s3/s3_source.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "host/io/range_coalescing.hpp"
#include "host/io/s3/part_buffer_pool.hpp"
#include "host/io/s3/curl_library.hpp"
#include "host/io/s3/s3_client.hpp"
#include "host/io/s3/s3_config.hpp"
#include "host/io/s3/s3_xml.hpp"
#include "trialstat/io/file_reader.hpp"

namespace trialstat::io::detail {
namespace {

constexpr uint64_t unknown_size = std::numeric_limits<uint64_t>::max();

status check_ranges(std::span<const byte_range> ranges, const std::string& name) {
  auto total = total_range_bytes(ranges, name);
  return total ? status::success() : total.error_status();
}

class s3_read_ahead_state;

}  // namespace

// ---- core: what the source and its readers share ------------------------------------------------

struct s3_core {
  s3_core(std::string location_text, s3_location parsed, s3_config config, const s3_options& options)
      : location(std::move(location_text)),
        key_prefix(parsed.prefix.empty() ? std::string() : parsed.prefix + "/"),
        client(std::move(parsed), std::move(config), options),
        part_buffers(options.in_flight_budget_bytes) {}

  std::string location;    // s3://bucket/prefix as given (trimmed)
  std::string key_prefix;  // "prefix/" or ""
  s3_client client;
  mutable part_buffer_pool part_buffers;  // receive buffers of ranged GETs, reused

  mutable std::mutex mutex;
  mutable std::unordered_map<std::string, uint64_t> sizes;  // key -> size, from listings / HEADs
  mutable std::unordered_map<std::string, std::string> etags;  // key -> ETag, from listings
  mutable std::vector<std::shared_ptr<s3_read_ahead_state>> read_aheads;

  mutable std::mutex progress_mutex;
  mutable std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  mutable std::chrono::steady_clock::time_point last_progress{};
  mutable bool progress_printed = false;

  ~s3_core() {
    if (progress_printed) std::fputc('\n', stderr);
  }

  [[nodiscard]] std::string bucket_key(std::string_view key) const { return key_prefix + std::string(key); }
  [[nodiscard]] std::string display(std::string_view key) const { return client.display(bucket_key(key)); }

  void remember_size(std::string_view key, uint64_t size) const {
    std::lock_guard lock(mutex);
    sizes.insert_or_assign(std::string(key), size);
  }
  [[nodiscard]] std::optional<uint64_t> known_size(std::string_view key) const {
    std::lock_guard lock(mutex);
    const auto it = sizes.find(std::string(key));
    if (it == sizes.end()) return std::nullopt;
    return it->second;
  }

  /// Progress of the catalog's reads (listing, index files) on stderr (objects, bytes, rate),
  /// at most 4 times a second, when enabled and stderr is a terminal. The statistics pass
  /// reports its own progress (steps, bytes, rate, ETA).
  void progress() const {
    if (!client.options().progress) return;
    static const bool terminal = ::isatty(STDERR_FILENO) != 0;
    if (!terminal) return;
    std::lock_guard lock(progress_mutex);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_progress < std::chrono::milliseconds(250)) return;
    last_progress = now;
    const double seconds = std::chrono::duration<double>(now - started).count();
    const double mib = static_cast<double>(client.counters().bytes_received.load()) / (1 << 20);
    fmt::print(stderr, "\rs3: {} objects, {:.1f} MiB, {:.1f} MiB/s   ", client.counters().objects.load(), mib,
               seconds > 0 ? mib / seconds : 0.0);
    progress_printed = true;
  }

  /// End the progress line (the statistics' own progress line follows).
  void end_progress() const {
    std::lock_guard lock(progress_mutex);
    if (progress_printed) std::fputc('\n', stderr);
    progress_printed = false;
  }

  /// A HEAD of `key` that succeeded with a Content-Length (remembered as its size); nullopt
  /// when the object does not exist (404). Errors: the request's; io_error without a length.
  result<std::optional<s3_request>> send_head(std::string_view key) const {
    s3_request r;
    r.url = client.object_url(bucket_key(key));
    r.display = display(key);
    r.head = true;
    client.run_one(r);
    if (!r.outcome.ok()) {
      if (r.outcome.code() == error_code::not_found && r.http_status == 404) return std::optional<s3_request>();
      return r.outcome;
    }
    if (!r.object_size) {
      return status(error_code::io_error, fmt::format("{}: HEAD gave no Content-Length", r.display));
    }
    remember_size(key, *r.object_size);
    return std::optional<s3_request>(std::move(r));
  }

  /// HEAD `key`: its size, nullopt when it does not exist.
  result<std::optional<uint64_t>> head(std::string_view key) const {
    if (auto known = known_size(key)) return known;
    auto sent = send_head(key);
    if (!sent) return sent.error_status();
    if (!*sent) return std::optional<uint64_t>();
    return std::optional<uint64_t>(*(*sent)->object_size);
  }

  /// The size and ETag the listing gave (the trial as its catalog saw it: no request), else a
  /// HEAD: nullopt when it does not exist.
  result<std::optional<object_identity>> identify(std::string_view key) const {
    {
      std::lock_guard lock(mutex);
      const std::string k(key);
      const auto etag = etags.find(k);
      const auto size = sizes.find(k);
      if (etag != etags.end() && size != sizes.end()) {
        return std::optional<object_identity>(object_identity{size->second, etag->second});
      }
    }
    auto sent = send_head(key);
    if (!sent) return sent.error_status();
    if (!*sent) return std::optional<object_identity>();
    const s3_request& r = **sent;
    if (r.etag.empty()) return status(error_code::io_error, fmt::format("{}: HEAD gave no ETag", r.display));
    return std::optional<object_identity>(object_identity{*r.object_size, r.etag});
  }

  /// The GET of one coalesced part of `key` into `dest` (at least `part.length_bytes`). A part
  /// that is the whole object as listed is a plain GET without a Range header: the same bytes,
  /// and servers that slice a range out of the whole object (moto does) are spared the copy.
  [[nodiscard]] s3_request part_request(std::string_view key, const std::string& url, const std::string& name,
                                        const coalesced_part& part, std::byte* dest) const {
    s3_request r;
    r.url = url;
    r.display = fmt::format("{} bytes {}-{}", name, part.offset_bytes, part.offset_bytes + part.length_bytes - 1);
    const std::optional<uint64_t> size = known_size(key);
    if (!(part.offset_bytes == 0 && size && *size == part.length_bytes)) {
      r.range = byte_range{part.offset_bytes, part.length_bytes};
    }
    r.dest = dest;
    r.dest_capacity = part.length_bytes;
    return r;
  }

  /// Fetch `ranges` of `key` now (coalesced, concurrently) into `out` (see read_ranges). Parts
  /// that, back to back, already are the read's layout (packed_parts_are_read_layout) are
  /// received straight into `out`; otherwise into one pooled buffer, then copied along the plan.
  status fetch_ranges(std::string_view key, std::span<const byte_range> ranges, std::byte* out,
                      std::span<uint64_t> available) const {
    TRIALSTAT_RETURN_IF_ERROR(check_ranges(ranges, display(key)));
    const coalesced_reads plan =
        coalesce_ranges(ranges, client.options().coalesce_gap_bytes, client.options().part_bytes);
    const std::vector<uint64_t> offsets = packed_part_offsets(plan);
    const std::string url = client.object_url(bucket_key(key));
    const std::string name = display(key);
    part_buffer staging;
    struct give_back {
      part_buffer_pool& pool;
      part_buffer& buffer;
      ~give_back() { pool.give(std::move(buffer)); }
    } returned{part_buffers, staging};
    std::byte* base = out;
    if (!packed_parts_are_read_layout(plan)) {
      const uint64_t total = plan.parts.empty() ? 0 : offsets.back() + plan.parts.back().length_bytes;
      try {
        staging = part_buffers.take(total);
      } catch (const std::exception&) {
        return status(error_code::out_of_memory,
                      fmt::format("{}: cannot allocate {} bytes for its ranges", name, total));
      }
      base = staging.data.get();
    }
    std::vector<s3_request> requests(plan.parts.size());
    for (std::size_t p = 0; p < plan.parts.size(); ++p) {
      requests[p] = part_request(key, url, name, plan.parts[p], base + offsets[p]);
    }
    std::size_t next = 0;
    client.run([&]() -> s3_request* { return next < requests.size() ? &requests[next++] : nullptr; },
               [](s3_request&) {});
    std::vector<const std::byte*> data(plan.parts.size());
    std::vector<uint64_t> received(plan.parts.size());
    for (std::size_t p = 0; p < plan.parts.size(); ++p) {
      if (!requests[p].outcome.ok()) return requests[p].outcome;
      data[p] = base + offsets[p];
      received[p] = requests[p].received;
    }
    scatter_parts(plan, data, received, base == out ? nullptr : out, available);
    return status::success();
  }

  bool take_from_read_ahead(std::string_view key, std::span<const byte_range> ranges, std::byte* out,
                            std::span<uint64_t> available) const;
  /// The read-ahead's receive buffer of exactly this read, handed over (see s3_read_ahead_state::
  /// take_buffer), or nullopt.
  std::optional<part_buffer> take_buffer_from_read_ahead(std::string_view key, std::span<const byte_range> ranges,
                                                         uint64_t min_capacity_bytes,
                                                         std::span<uint64_t> available) const;
};

namespace {

// ---- read-ahead ---------------------------------------------------------------------------------

/// The fetched-ahead reads of one schedule. The fetcher thread pulls reads from the schedule and
/// keeps their parts in flight; `take` hands a read's bytes to the reader that asks for it.
class s3_read_ahead_state {
 public:
  s3_read_ahead_state(const s3_core& core, read_schedule schedule)
      : core_(core), schedule_(std::move(schedule)) {}

  void start() {
    thread_ = std::thread([this] { fetch_loop(); });
  }
  void stop() {
    stop_.store(true);
    core_.client.wake();
    if (thread_.joinable()) thread_.join();
    std::lock_guard lock(mutex_);
    stopped_ = true;
    ready_.notify_all();
  }

  /// The bytes of a scheduled read, copied into `out`, if it is `key` with exactly `ranges` and
  /// it succeeded.
  bool take(std::string_view key, std::span<const byte_range> ranges, std::byte* out,
            std::span<uint64_t> available) {
    return serve(key, ranges, /*in_place_capacity_bytes=*/std::nullopt, [&](group& g) { scatter(g, out, available); });
  }

  /// The receive buffer of a scheduled read, handed over without a copy, if it is `key` with
  /// exactly `ranges`, it succeeded, its parts back to back are the layout of `read_ranges`
  /// (packed_parts_are_read_layout) and the buffer holds `min_capacity_bytes`. Otherwise nullopt,
  /// and a read that was not handed over for its layout or size stays for `take`.
  std::optional<part_buffer> take_buffer(std::string_view key, std::span<const byte_range> ranges,
                                         uint64_t min_capacity_bytes, std::span<uint64_t> available) {
    std::optional<part_buffer> taken;
    serve(key, ranges, min_capacity_bytes, [&](group& g) {
      scatter(g, nullptr, available);
      taken = std::move(g.buffer);
      g.buffer = {};
    });
    return taken;
  }

 private:
  struct group {
    std::string key;
    std::vector<byte_range> ranges;
    coalesced_reads plan;
    part_buffer buffer;                  // the parts back to back (+ record padding)
    std::vector<uint64_t> part_offsets;  // where each part starts in `buffer`
    bool in_place = false;               // `buffer` is the layout of read_ranges as it is
    std::vector<s3_request> requests;  // sized once: addresses stay valid while in flight
    std::size_t next_part = 0;
    std::size_t pending = 0;
    uint64_t bytes = 0;
    bool failed = false;
    bool abandoned = false;
  };

  static bool finished(const group& g) { return g.pending == 0 && g.next_part == g.requests.size(); }

  /// Find the group of `key` with exactly `ranges` (and, given `in_place_capacity_bytes`, whose
  /// buffer can be handed over with that capacity), let the groups scheduled before it go (the
  /// reader skipped them), wait until it is fetched and, when it succeeded, `use` it. Returns
  /// whether it was used.
  bool serve(std::string_view key, std::span<const byte_range> ranges,
             std::optional<uint64_t> in_place_capacity_bytes, const std::function<void(group&)>& use) {
    std::unique_lock lock(mutex_);
    auto found = std::find_if(groups_.begin(), groups_.end(), [&](const std::unique_ptr<group>& g) {
      return !g->abandoned && g->key == key && std::equal(g->ranges.begin(), g->ranges.end(), ranges.begin(), ranges.end(),
                                                          [](const byte_range& a, const byte_range& b) {
                                                            return a.offset_bytes == b.offset_bytes &&
                                                                   a.length_bytes == b.length_bytes;
                                                          });
    });
    if (found == groups_.end()) return false;
    group* wanted = found->get();
    if (in_place_capacity_bytes &&
        !(wanted->in_place && wanted->buffer.capacity_bytes >= *in_place_capacity_bytes)) {
      return false;  // stays for a copying take
    }
    // Reads scheduled before this one were skipped by the reader: let them go.
    for (auto it = groups_.begin(); it != found; ++it) (*it)->abandoned = true;
    release_done_abandoned();
    ready_.wait(lock, [&] { return stopped_ || finished(*wanted); });
    bool served = false;
    if (!stopped_ && !wanted->failed) {
      use(*wanted);
      served = true;
    }
    if (finished(*wanted)) {
      erase(wanted);
    } else {
      wanted->abandoned = true;
    }
    lock.unlock();
    core_.client.wake();
    return served;
  }

  /// Copy a fetched group's parts into `out` (nullptr: only `available`) along its plan.
  static void scatter(const group& g, std::byte* out, std::span<uint64_t> available) {
    std::vector<const std::byte*> data(g.plan.parts.size());
    std::vector<uint64_t> received(g.plan.parts.size());
    for (std::size_t p = 0; p < g.plan.parts.size(); ++p) {
      data[p] = g.buffer.data.get() + g.part_offsets[p];
      received[p] = g.requests[p].received;
    }
    scatter_parts(g.plan, data, received, out, available);
  }

  void erase(group* g) {
    held_bytes_ -= g->bytes;
    core_.part_buffers.give(std::move(g->buffer));
    if (g == current_) current_ = nullptr;
    std::erase_if(groups_, [&](const std::unique_ptr<group>& p) { return p.get() == g; });
  }
  void release_done_abandoned() {
    std::vector<group*> done;
    for (auto& g : groups_) {
      if (g->abandoned && finished(*g)) done.push_back(g.get());
    }
    for (group* g : done) erase(g);
  }

  void fetch_loop() {
    const s3_options& options = core_.client.options();
    const auto next = [&]() -> s3_request* {
      std::lock_guard lock(mutex_);
      for (;;) {
        if (current_ != nullptr && current_->next_part < current_->requests.size()) {
          s3_request* r = &current_->requests[current_->next_part++];
          ++current_->pending;
          return r;
        }
        if (schedule_done_) return nullptr;
        object_read read;
        bool more = false;
        {
          // The schedule reads the catalog: call it without holding up `take`.
          mutex_.unlock();
          more = schedule_(read);
          mutex_.lock();
        }
        if (!more) {
          schedule_done_ = true;
          return nullptr;
        }
        auto g = std::make_unique<group>();
        g->key = std::move(read.key);
        g->ranges = std::move(read.ranges);
        if (!check_ranges(g->ranges, g->key).ok()) g->ranges.clear();  // the reader reports it
        g->plan = coalesce_ranges(g->ranges, options.coalesce_gap_bytes, options.part_bytes);
        g->part_offsets = packed_part_offsets(g->plan);
        g->in_place = packed_parts_are_read_layout(g->plan);
        for (const coalesced_part& part : g->plan.parts) g->bytes += part.length_bytes;
        // One buffer for the whole read (its parts back to back, then the record padding), so
        // that a read laid out as the reader wants it is handed over without a copy.
        try {
          if (!g->plan.parts.empty()) g->buffer = core_.part_buffers.take(g->bytes + record_padding_bytes);
          g->requests.resize(g->plan.parts.size());
        } catch (const std::exception&) {
          g->failed = true;  // the reader's own read reports it
          g->bytes = 0;
        }
        const std::string url = core_.client.object_url(core_.bucket_key(g->key));
        const std::string name = core_.display(g->key);
        for (std::size_t p = 0; p < g->requests.size(); ++p) {
          g->requests[p] = core_.part_request(g->key, url, name, g->plan.parts[p],
                                              g->buffer.data.get() + g->part_offsets[p]);
          g->requests[p].user = g.get();
        }
        held_bytes_ += g->bytes;
        current_ = g.get();
        groups_.push_back(std::move(g));
        ready_.notify_all();
      }
    };
    const auto may_start = [&] {
      std::lock_guard lock(mutex_);
      if (current_ != nullptr && current_->next_part < current_->requests.size()) return true;
      return schedule_done_ || held_bytes_ == 0 || held_bytes_ < options.in_flight_budget_bytes;
    };
    const auto on_done = [&](s3_request& r) {
      std::lock_guard lock(mutex_);
      auto* g = static_cast<group*>(r.user);
      --g->pending;
      if (!r.outcome.ok()) g->failed = true;
      if (g->abandoned && finished(*g)) erase(g);
      ready_.notify_all();
    };
    core_.client.run(next, on_done, may_start, &stop_);
    std::lock_guard lock(mutex_);
    stopped_ = stop_.load();
    // Requests never issued (stopped) cannot complete: mark their groups done.
    for (auto& g : groups_) {
      if (g->next_part < g->requests.size()) {
        g->failed = true;
        g->next_part = g->requests.size();
      }
    }
    ready_.notify_all();
  }

  const s3_core& core_;
  read_schedule schedule_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::unique_ptr<group>> groups_;
  group* current_ = nullptr;
  uint64_t held_bytes_ = 0;
  bool schedule_done_ = false;
  bool stopped_ = false;
};

class s3_read_ahead_handle final : public read_ahead_handle {
 public:
  s3_read_ahead_handle(std::shared_ptr<const s3_core> core, std::shared_ptr<s3_read_ahead_state> state)
      : core_(std::move(core)), state_(std::move(state)) {}
  ~s3_read_ahead_handle() override {
    {
      std::lock_guard lock(core_->mutex);
      std::erase(core_->read_aheads, state_);
    }
    state_->stop();
  }

 private:
  std::shared_ptr<const s3_core> core_;
  std::shared_ptr<s3_read_ahead_state> state_;
};

// ---- one object ---------------------------------------------------------------------------------

class s3_object_reader final : public object_reader {
 public:
  s3_object_reader(std::shared_ptr<const s3_core> core, std::string key, std::optional<uint64_t> size)
      : core_(std::move(core)), key_(std::move(key)), size_(size.value_or(unknown_size)) {}

  [[nodiscard]] std::string display_name() const override { return core_->display(key_); }

  [[nodiscard]] uint64_t size_bytes() const noexcept override {
    std::lock_guard lock(mutex_);
    if (size_ == unknown_size) {
      auto head = core_->head(key_);
      if (head && *head) size_ = **head;
    }
    return size_;
  }

  status refresh_size() override {
    {
      std::lock_guard lock(core_->mutex);
      core_->sizes.erase(key_);
      core_->etags.erase(key_);
    }
    auto head = core_->head(key_);
    if (!head) return head.error_status();
    std::lock_guard lock(mutex_);
    size_ = head->value_or(0);
    return status::success();
  }

  [[nodiscard]] status read_at(uint64_t offset_bytes, std::span<std::byte> out) const override {
    if (out.empty()) return status::success();
    const byte_range range{offset_bytes, out.size()};
    uint64_t available = 0;
    TRIALSTAT_RETURN_IF_ERROR(read_ranges({&range, 1}, out.data(), {&available, 1}));
    if (available < out.size()) {
      return status(error_code::truncated_record,
                    fmt::format("{}: read of {} bytes at byte {}: the object ends at byte {} (only {} "
                                "bytes available)",
                                display_name(), out.size(), offset_bytes, offset_bytes + available, available));
    }
    return status::success();
  }

  [[nodiscard]] std::optional<taken_bytes> take_ranges(std::span<const byte_range> ranges, std::size_t padding_bytes,
                                                       std::span<uint64_t> available) const override {
    const auto total = total_range_bytes(ranges, key_);
    if (!total || *total > std::numeric_limits<uint64_t>::max() - padding_bytes) return std::nullopt;
    auto taken = core_->take_buffer_from_read_ahead(key_, ranges, *total + padding_bytes, available);
    if (!taken || !taken->data) return std::nullopt;
    s3_counters& counters = core_->client.counters();
    counters.reads_ahead.fetch_add(1, std::memory_order_relaxed);
    counters.reads_in_place.fetch_add(1, std::memory_order_relaxed);
    const uint64_t capacity = taken->capacity_bytes;
    return taken_bytes(taken->data.release(), static_cast<std::size_t>(capacity),
                       [core = core_, capacity](std::byte* data) {
                         core->part_buffers.give(part_buffer{std::unique_ptr<std::byte[]>(data), capacity});
                       });
  }

  [[nodiscard]] status read_ranges(std::span<const byte_range> ranges, std::byte* out,
                                   std::span<uint64_t> available) const override {
    if (core_->take_from_read_ahead(key_, ranges, out, available)) {
      core_->client.counters().reads_ahead.fetch_add(1, std::memory_order_relaxed);
      return status::success();
    }
    core_->client.counters().reads_direct.fetch_add(1, std::memory_order_relaxed);
    return core_->fetch_ranges(key_, ranges, out, available);
  }

 private:
  std::shared_ptr<const s3_core> core_;
  std::string key_;
  mutable std::mutex mutex_;
  mutable uint64_t size_;
};

// ---- the source ---------------------------------------------------------------------------------

class s3_source final : public trial_source {
 public:
  explicit s3_source(std::shared_ptr<s3_core> core) : core_(std::move(core)) {}

  [[nodiscard]] const std::string& location() const noexcept override { return core_->location; }
  [[nodiscard]] std::string display_name(std::string_view key) const override { return core_->display(key); }
  [[nodiscard]] bool is_remote() const noexcept override { return true; }

  [[nodiscard]] status check_root() const override {
    list_job job;
    job.prefix = core_->key_prefix;
    job.max_keys = 1;
    job.single_page = true;
    std::vector<list_job> jobs;
    jobs.push_back(std::move(job));
    TRIALSTAT_RETURN_IF_ERROR(run_list_jobs(jobs));
    if (jobs[0].objects.empty()) {
      return status(error_code::not_found,
                    fmt::format("{}: no objects under this prefix (no trial there yet?)", core_->location));
    }
    return status::success();
  }

  [[nodiscard]] status list(std::string_view sub, std::string_view start_after,
                            std::vector<object_info>& out) const override {
    out.clear();
    const std::string prefix = core_->bucket_key(sub) + "/";
    const std::string after = start_after.empty() ? std::string() : core_->bucket_key(start_after);
    std::vector<list_job> jobs;
    if (sub != "index") {
      // events/ has one folder per step, collections/ one: a flat listing (1000 keys a page)
      // costs far fewer requests than a folder each.
      list_job flat;
      flat.prefix = prefix;
      flat.start_after = after;
      jobs.push_back(std::move(flat));
      TRIALSTAT_RETURN_IF_ERROR(run_list_jobs(jobs));
      return finish_listing(std::move(jobs[0].objects), out);
    }
    // The step-bucket folders (index/000000000/, ...: one per 1000 steps) are listed, then their
    // contents in parallel; StartAfter goes to the folder that holds `start_after`, folders
    // wholly before it are skipped. (The folder listing itself takes no StartAfter: servers
    // differ in whether a folder holding keys after it is still returned.)
    list_job folders;
    folders.prefix = prefix;
    folders.delimiter = "/";
    jobs.push_back(std::move(folders));
    TRIALSTAT_RETURN_IF_ERROR(run_list_jobs(jobs));
    std::vector<s3_list_page::object> objects;
    for (auto& object : jobs[0].objects) {
      if (after.empty() || object.key > after) objects.push_back(std::move(object));
    }
    std::vector<list_job> buckets;
    for (const std::string& folder : jobs[0].common_prefixes) {
      list_job job;
      job.prefix = folder;
      if (!after.empty()) {
        if (after.compare(0, folder.size(), folder) == 0) {
          job.start_after = after;
        } else if (folder < after) {
          continue;  // every key in it sorts before `after`
        }
      }
      buckets.push_back(std::move(job));
    }
    TRIALSTAT_RETURN_IF_ERROR(run_list_jobs(buckets));
    for (auto& job : buckets) {
      std::move(job.objects.begin(), job.objects.end(), std::back_inserter(objects));
    }
    return finish_listing(std::move(objects), out);
  }

  /// Every rank of a group lists the whole prefix (its share is share 0's listing or nothing):
  /// the listing is where this source learns object sizes, which its range reads and whole-
  /// object GETs need; a rank that only received the keys would send a HEAD per event object.
  /// `skip_folder` is not used: the listing is flat (one paged ListObjectsV2 over the prefix).
  [[nodiscard]] status list_share(std::string_view sub, std::string_view start_after, int share, int shares,
                                  std::vector<object_info>& out, const folder_filter& skip_folder) const override {
    if (shares < 1 || share < 0 || share >= shares) {
      return trial_source::list_share(sub, start_after, share, shares, out, skip_folder);  // its error
    }
    const status listed = list(sub, start_after, out);
    if (share != 0) out.clear();
    return listed;
  }

  /// Keys relative to the root, sorted, sizes remembered.
  status finish_listing(std::vector<s3_list_page::object> objects, std::vector<object_info>& out) const {
    out.reserve(objects.size());
    {
      std::lock_guard lock(core_->mutex);
      for (auto& object : objects) {
        if (object.key.size() <= core_->key_prefix.size()) continue;
        std::string key = object.key.substr(core_->key_prefix.size());
        core_->sizes.insert_or_assign(key, object.size_bytes);
        if (!object.etag.empty()) {
          core_->etags.insert_or_assign(key, std::move(object.etag));
        } else {
          core_->etags.erase(key);
        }
        out.push_back({std::move(key), object.size_bytes});
      }
    }
    std::sort(out.begin(), out.end(), [](const object_info& a, const object_info& b) { return a.key < b.key; });
    return status::success();
  }

  [[nodiscard]] result<uint64_t> read_object(std::string_view key, std::vector<std::byte>& out,
                                             uint64_t max_bytes = UINT64_MAX) const override {
    TRIALSTAT_RETURN_IF_ERROR(check_listed_size(key, max_bytes));
    s3_request r = object_request(key);
    core_->client.run_one(r);
    core_->progress();
    return finish_object(r, out, max_bytes);
  }

  void read_objects(std::span<const std::string> keys, const object_callback& on_object,
                    uint64_t max_bytes = UINT64_MAX) const override {
    if (keys.empty()) return;
    const std::size_t window = static_cast<std::size_t>(std::max(1, core_->client.options().max_in_flight)) * 4;
    std::vector<s3_request> slots(std::min(window, keys.size()));
    std::vector<char> done(slots.size(), 0);
    std::vector<std::byte> buffer;
    std::size_t issued = 0, delivered = 0;
    const auto next = [&]() -> s3_request* {
      if (issued >= keys.size() || issued - delivered >= slots.size()) return nullptr;
      s3_request& r = slots[issued % slots.size()];
      r = object_request(keys[issued]);
      // Listed as larger than the limit: fetched as a 1-byte range, refused on delivery.
      if (!check_listed_size(keys[issued], max_bytes).ok()) r.range = byte_range{0, 1};
      r.user = reinterpret_cast<void*>(issued);
      ++issued;
      return &r;
    };
    const auto on_done = [&](s3_request& r) {
      done[reinterpret_cast<std::size_t>(r.user) % slots.size()] = 1;
      while (delivered < issued && done[delivered % slots.size()]) {
        s3_request& ready = slots[delivered % slots.size()];
        done[delivered % slots.size()] = 0;
        auto size = finish_object(ready, buffer, max_bytes);
        if (size) {
          on_object(delivered, std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(*size)));
        } else {
          on_object(delivered, size.error_status());
        }
        ready.body.clear();
        ready.body.shrink_to_fit();
        ++delivered;
      }
      core_->progress();
    };
    // next() says "nothing now" while the window is full; run ends only when it is empty too.
    while (delivered < keys.size()) {
      core_->client.run(next, on_done);
    }
    core_->end_progress();
  }

  [[nodiscard]] result<std::optional<uint64_t>> object_size(std::string_view key) const override {
    return core_->head(key);
  }

  [[nodiscard]] result<std::optional<object_identity>> identify(std::string_view key) const override {
    return core_->identify(key);
  }

  [[nodiscard]] result<std::unique_ptr<object_reader>> open(std::string_view key) const override {
    return std::unique_ptr<object_reader>(
        std::make_unique<s3_object_reader>(core_, std::string(key), core_->known_size(key)));
  }

  [[nodiscard]] std::unique_ptr<read_ahead_handle> start_read_ahead(read_schedule schedule) const override {
    auto state = std::make_shared<s3_read_ahead_state>(*core_, std::move(schedule));
    {
      std::lock_guard lock(core_->mutex);
      core_->read_aheads.push_back(state);
    }
    state->start();
    return std::make_unique<s3_read_ahead_handle>(core_, std::move(state));
  }

  [[nodiscard]] std::string transfer_summary() const override {
    s3_counters& c = core_->client.counters();
    std::string text = fmt::format("s3: {} request(s), {:.1f} MiB received, {} retried", c.requests.load(),
                                   static_cast<double>(c.bytes_received.load()) / (1 << 20), c.retries.load());
    const int64_t ahead = c.reads_ahead.load(), direct = c.reads_direct.load();
    if (ahead + direct > 0) {
      text += fmt::format("; {} of {} event-file reads fetched ahead ({} handed over without a copy)", ahead,
                          ahead + direct, c.reads_in_place.load());
    }
    std::lock_guard lock(c.mutex);
    if (!c.retry_reasons.empty()) {
      std::vector<std::string> reasons;
      for (const auto& [reason, count] : c.retry_reasons) reasons.push_back(fmt::format("{} x{}", reason, count));
      text += fmt::format(" ({})", fmt::join(reasons, ", "));
    }
    return text;
  }

 private:
  struct list_job {
    std::string prefix;
    std::string delimiter;
    std::string start_after;
    int max_keys = 1000;
    bool single_page = false;
    std::string token;
    std::vector<s3_list_page::object> objects;
    std::vector<std::string> common_prefixes;
    s3_request request;
  };

  /// Run every job's pages (pages of one job in turn, jobs concurrently).
  status run_list_jobs(std::vector<list_job>& jobs) const {
    std::deque<std::size_t> ready;
    for (std::size_t i = 0; i < jobs.size(); ++i) ready.push_back(i);
    status failure;
    const auto next = [&]() -> s3_request* {
      if (ready.empty() || !failure.ok()) return nullptr;
      list_job& job = jobs[ready.front()];
      job.request = s3_request();
      job.request.user = reinterpret_cast<void*>(ready.front());
      ready.pop_front();
      // Parameters in canonical (sorted) order, as SigV4 signs them.
      std::vector<std::string> query;
      if (!job.token.empty()) query.push_back("continuation-token=" + percent_encode(job.token, /*keep_slash=*/false));
      if (!job.delimiter.empty()) query.push_back("delimiter=" + percent_encode(job.delimiter, /*keep_slash=*/false));
      query.emplace_back("list-type=2");
      query.push_back(fmt::format("max-keys={}", job.max_keys));
      query.push_back("prefix=" + percent_encode(job.prefix, /*keep_slash=*/false));
      if (!job.start_after.empty() && job.token.empty()) query.push_back("start-after=" + percent_encode(job.start_after, /*keep_slash=*/false));
      job.request.url = core_->client.bucket_url(fmt::format("{}", fmt::join(query, "&")));
      job.request.display = core_->client.display(job.prefix) + " (listing)";
      return &job.request;
    };
    const auto on_done = [&](s3_request& r) {
      list_job& job = jobs[reinterpret_cast<std::size_t>(r.user)];
      if (!r.outcome.ok()) {
        if (failure.ok()) failure = r.outcome;
        return;
      }
      auto page = parse_list_objects_v2(r.body, r.display);
      if (!page) {
        if (failure.ok()) failure = page.error_status();
        return;
      }
      std::move(page->objects.begin(), page->objects.end(), std::back_inserter(job.objects));
      std::move(page->common_prefixes.begin(), page->common_prefixes.end(), std::back_inserter(job.common_prefixes));
      if (page->truncated && !job.single_page) {
        job.token = page->next_continuation_token;
        ready.push_back(reinterpret_cast<std::size_t>(r.user));
      }
    };
    while (failure.ok() && !ready.empty()) core_->client.run(next, on_done);
    return failure;
  }

  [[nodiscard]] s3_request object_request(std::string_view key) const {
    s3_request r;
    r.url = core_->client.object_url(core_->bucket_key(key));
    r.display = core_->display(key);
    return r;
  }

  /// invalid_argument when the listing said the object is larger than `max_bytes`.
  status check_listed_size(std::string_view key, uint64_t max_bytes) const {
    const auto size = core_->known_size(key);
    if (!size || *size <= max_bytes) return status::success();
    return status(error_code::invalid_argument,
                  fmt::format("{}: {} bytes, more than the {} bytes allowed for such a file; not read",
                              core_->display(key), *size, max_bytes));
  }

  result<uint64_t> finish_object(s3_request& r, std::vector<std::byte>& out, uint64_t max_bytes) const {
    if (!r.outcome.ok()) return r.outcome;
    if (r.range || r.body.size() > max_bytes) {
      const uint64_t size = r.object_size.value_or(r.body.size());
      return status(error_code::invalid_argument,
                    fmt::format("{}: {} bytes, more than the {} bytes allowed for such a file; not read",
                                r.display, size, max_bytes));
    }
    try {
      out.resize(r.body.size() + record_padding_bytes);
    } catch (const std::exception&) {
      return status(error_code::out_of_memory,
                    fmt::format("{}: cannot allocate {} bytes", r.display, r.body.size()));
    }
    std::memcpy(out.data(), r.body.data(), r.body.size());
    std::fill(out.begin() + static_cast<std::ptrdiff_t>(r.body.size()), out.end(), std::byte{0});
    return static_cast<uint64_t>(r.body.size());
  }

  std::shared_ptr<s3_core> core_;
};

}  // namespace

std::optional<part_buffer> s3_core::take_buffer_from_read_ahead(std::string_view key,
                                                                std::span<const byte_range> ranges,
                                                                uint64_t min_capacity_bytes,
                                                                std::span<uint64_t> available) const {
  std::vector<std::shared_ptr<s3_read_ahead_state>> active;
  {
    std::lock_guard lock(mutex);
    active = read_aheads;
  }
  for (const auto& state : active) {
    if (auto taken = state->take_buffer(key, ranges, min_capacity_bytes, available)) return taken;
  }
  return std::nullopt;
}

bool s3_core::take_from_read_ahead(std::string_view key, std::span<const byte_range> ranges, std::byte* out,
                                   std::span<uint64_t> available) const {
  std::vector<std::shared_ptr<s3_read_ahead_state>> active;
  {
    std::lock_guard lock(mutex);
    active = read_aheads;
  }
  for (const auto& state : active) {
    if (state->take(key, ranges, out, available)) return true;
  }
  return false;
}

result<std::shared_ptr<trial_source>> make_s3_source(std::string_view location, const s3_options& options) {
  auto parsed = parse_s3_location(location);
  if (!parsed) return parsed.error_status();
  auto config = resolve_s3_config(options);
  if (!config) return config.error_status();
  // libcurl is loaded here, at the first s3:// trial (curl_library.hpp).
  if (auto curl = load_curl(); !curl) return curl.error_status();
  std::string text(location);
  auto core = std::make_shared<s3_core>(std::move(text), std::move(*parsed), std::move(*config), options);
  return std::shared_ptr<trial_source>(std::make_shared<s3_source>(std::move(core)));
}

}  // namespace trialstat::io::detail
