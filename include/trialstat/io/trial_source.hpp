// SPDX-License-Identifier: Apache-2.0
/// @file trial_source.hpp
/// @brief The source stage of DESIGN.md §1: where a trial's bytes live. A trial location is a
/// local folder or `s3://bucket/prefix` (spec/TRIAL_API.md §1); both are a `trial_source` that
/// lists objects under the trial root by key (`index/000000000/000000000005_worker_0.json`),
/// reads small objects whole and opens event files for byte-range reads. The catalog, the step
/// reader, rules and the front ends use only this interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/io/object_reader.hpp"
#include "trialstat/io/source_options.hpp"
#include "trialstat/status.hpp"

namespace trialstat::io {

/// @brief One listed object: its key relative to the trial root ('/'-separated) and, where the
/// listing gives it (S3), its size; local listings leave 0 (no stat per file: `object_size`).
struct object_info {
  std::string key;
  uint64_t size_bytes = 0;
};

/// @brief What identifies one version of an object, to tell whether bytes read earlier still
/// describe it (the statistics store, issue 26): its size and `version`, the modification time
/// in nanoseconds since the epoch for a local file (`st_mtim`, as decimal text), the ETag for an
/// S3 object (as the server sends it, quotes included). Equal identities mean the same bytes, as
/// far as the storage can tell (a local rewrite within the file system's mtime granularity that
/// keeps the size is not seen).
struct object_identity {
  uint64_t size_bytes = 0;
  std::string version;
  friend bool operator==(const object_identity&, const object_identity&) = default;
};

/// @brief The byte ranges of one object a reader will ask for next (one `read_ranges` call).
struct object_read {
  std::string key;
  std::vector<byte_range> ranges;
};

/// @brief Yields the next read of a read-ahead schedule into `next`; false when there is none.
/// Called on the read-ahead's own thread.
using read_schedule = std::function<bool(object_read& next)>;

/// @brief A running read-ahead; stops (and frees what it fetched) when destroyed.
class read_ahead_handle {
 public:
  virtual ~read_ahead_handle() = default;
};

/// @brief Called once per object of `trial_source::read_objects`, in the order of the keys:
/// the object's bytes (followed by `record_padding_bytes` zero bytes, valid during the call),
/// or the error that reading it met.
using object_callback = std::function<void(std::size_t index, result<std::span<const std::byte>> bytes)>;

/// @brief For `trial_source::list_share`: true for a folder directly under the listed one whose
/// keys the caller does not need (the catalog: `events/<step>/` of a step whose index files came
/// from every worker). Called with the folder's name (no '/'), on the listing's thread.
using folder_filter = std::function<bool(std::string_view folder_name)>;

/// @brief A trial's storage. Thread-safe: the const methods may be called from many threads.
class trial_source {
 public:
  virtual ~trial_source() = default;

  /// @brief The location as given (whitespace stripped): the folder, or `s3://bucket/prefix`.
  [[nodiscard]] virtual const std::string& location() const noexcept = 0;
  /// @brief The name of an object in messages: `<folder>/<key>` or `s3://bucket/prefix/<key>`.
  [[nodiscard]] virtual std::string display_name(std::string_view key) const = 0;
  /// @brief True for S3; false for local folders.
  [[nodiscard]] virtual bool is_remote() const noexcept = 0;
  /// @brief The folder of a local trial; nullptr for S3.
  [[nodiscard]] virtual const std::filesystem::path* local_root() const noexcept { return nullptr; }

  /// @brief Whether the trial root exists. Errors: not_found (no such folder; an S3 prefix with
  /// no objects; no such bucket); io_error (an unreadable folder; S3 403 or a bad access key,
  /// naming the bucket, key and where the credentials came from; network, after retries).
  [[nodiscard]] virtual status check_root() const = 0;

  /// @brief Every object under `<root>/<sub>/` (recursively), sorted by key, keys relative to
  /// the root; only keys greater than `start_after` when it is not empty (S3: ListObjectsV2
  /// `StartAfter`, so a refresh lists only what is new). A missing `sub` lists nothing.
  /// Errors: io_error when listing fails (after retries), naming the folder or prefix.
  [[nodiscard]] virtual status list(std::string_view sub, std::string_view start_after,
                                    std::vector<object_info>& out) const = 0;
  /// @brief Part `share` of `shares` of `list(sub, start_after)`, for a listing shared by a
  /// group of processes (MPI ranks, issue 10: each lists a part, the group exchanges them): the
  /// parts 0..shares-1, concatenated in order, are exactly that listing (sorted, no key twice).
  /// Local folders split the entries directly under `sub` into `shares` contiguous runs by key
  /// (the step folders of `events/`, the step buckets of `index/`), so each process opens only
  /// its run's folders. Default: part 0 is the whole listing, the others are empty (S3 lists
  /// the whole prefix for every part, since its listing is where it learns object sizes).
  /// Folders directly under `sub` for which `skip_folder` (when set) returns true are left out by
  /// sources that list folder by folder (local: the folder is not opened); a source whose listing
  /// is flat (S3) may return their keys anyway, so callers still filter the keys they get.
  /// Errors: as `list`; invalid_argument when `share` is not in [0, shares).
  [[nodiscard]] virtual status list_share(std::string_view sub, std::string_view start_after, int share,
                                          int shares, std::vector<object_info>& out,
                                          const folder_filter& skip_folder) const;

  /// @brief Read a whole object into `out` (resized to its size + `record_padding_bytes`, the
  /// padding zeroed). @return its size in bytes. Errors: not_found, io_error; invalid_argument
  /// naming the object, its size and the limit when it is larger than `max_bytes` (JSON files
  /// are read with `json_file_limit_bytes`).
  [[nodiscard]] virtual result<uint64_t> read_object(std::string_view key, std::vector<std::byte>& out,
                                                     uint64_t max_bytes = UINT64_MAX) const = 0;

  /// @brief Read many whole objects (index files): `on_object` is called for each, in the order
  /// of `keys`, on the calling thread. S3 fetches up to `max_in_flight` at once, holding at most
  /// 4 x `max_in_flight` finished objects ahead of the callback. Default: `read_object` in turn.
  virtual void read_objects(std::span<const std::string> keys, const object_callback& on_object,
                            uint64_t max_bytes = UINT64_MAX) const;

  /// @brief Size of an object, or nullopt when it does not exist (yet). Errors: io_error.
  [[nodiscard]] virtual result<std::optional<uint64_t>> object_size(std::string_view key) const = 0;

  /// @brief The object's identity (`object_identity`), or nullopt when it does not exist.
  /// Local: one stat, now. S3: the size and ETag of the object's listing (the trial as its
  /// catalog listed it; no request), else one HEAD. Errors:
  /// io_error; invalid_argument from sources that cannot tell (the default), so callers that
  /// need identities (the statistics store) stay off for them.
  [[nodiscard]] virtual result<std::optional<object_identity>> identify(std::string_view key) const;

  /// @brief Open an object for byte-range reads. Errors: not_found, io_error.
  [[nodiscard]] virtual result<std::unique_ptr<object_reader>> open(std::string_view key) const = 0;

  /// @brief Start fetching, in the background, the reads `schedule` yields, in order, so that
  /// the `read_ranges` calls that follow in the same order find their bytes already fetched.
  /// Memory is bounded by the in-flight budget. Local sources need none (nullptr).
  [[nodiscard]] virtual std::unique_ptr<read_ahead_handle> start_read_ahead(read_schedule schedule) const {
    (void)schedule;
    return nullptr;
  }

  /// @brief One line on what was transferred so far (S3: requests, bytes, retries and their
  /// reasons); empty for local sources.
  [[nodiscard]] virtual std::string transfer_summary() const { return {}; }
};

/// @brief Whether `location` names an S3 trial (`s3://...`, surrounding whitespace ignored).
[[nodiscard]] bool is_s3_location(std::string_view location) noexcept;

/// @brief The source for a trial location: `s3://bucket[/prefix]` (smdebug's spelling;
/// surrounding whitespace stripped, trailing slashes ignored) or a local folder.
/// Does not touch the storage (see `check_root`). Errors: invalid_argument for a malformed
/// S3 location (no bucket) or bad TRIALSTAT_S3_* settings; for S3, invalid_argument when the AWS
/// configuration cannot be read (a profile that does not exist, a malformed endpoint URL).
[[nodiscard]] result<std::shared_ptr<const trial_source>> open_trial_source(
    std::string_view location, const source_options& options = {});

}  // namespace trialstat::io
