// SPDX-License-Identifier: Apache-2.0
/// @file statistics_store.hpp
/// @brief The statistics store (issue 26): a SQLite database of statistics records, one row per
/// (tensor, global step, worker, request), that later runs over the same trial read instead of
/// the event files. The schema (version `schema_version`, README "Statistics store") is plain
/// SQLite: `sqlite3`, pandas `read_sql` or DuckDB can open it.
///
/// A row is used only while it still describes its record: the event file's key, the byte
/// ranges of the records read, and the file's identity (`io::object_identity`: size plus mtime
/// or ETag) must equal the trial's now, and the row must have been computed for exactly the
/// request (and backend) the run asks (`request_signature`). Every failure of the store itself
/// (a foreign or corrupt file, a full disk, a locked database) is a status the caller turns into
/// a warning: the run then reads the trial.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trialstat/stats/backend.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/pairwise.hpp"
#include "trialstat/stats/statistics_request.hpp"
#include "trialstat/status.hpp"

namespace trialstat::store {

/// @brief The schema version this build writes and reads (`PRAGMA user_version`). A store of a
/// newer version is left alone (a warning); an older one is migrated on open (version 1, rows
/// keyed by tensor first, is copied into version 2's table keyed by step first; version 3 adds
/// `record_bundles`, the small records of a step, worker and request in one row).
inline constexpr int schema_version = 3;
/// @brief `PRAGMA application_id` of a trialstat store ("TSST"): a SQLite file without it is
/// someone else's database and is never written.
inline constexpr int32_t application_id = 0x54535354;

/// @brief What the row of one record must match to be used (all compared for equality).
struct row_identity {
  std::string event_file;     ///< trial-relative key of the event file
  std::string ranges;         ///< "start+length" of each record read, ';'-separated, in read order
  uint64_t file_size_bytes = 0;
  std::string file_version;   ///< mtime in ns (local) or ETag (S3): io::object_identity::version
  /// The identities of the earlier records the row's pairwise statistics compare with:
  /// "step:<16 hex digits: FNV-1a 64 of event_file:ranges:size:version>" per previous step,
  /// newest first, '|'-separated; empty without pairwise statistics.
  std::string previous;
  friend bool operator==(const row_identity&, const row_identity&) = default;
};

/// @brief The readable columns of a row, for SQL users (`NULL` where absent). Never read back.
struct row_columns {
  std::string dtype;                        ///< dtype_name, "" when not decoded
  int64_t num_elements = 0;
  std::optional<stats::moments> moments;
  std::optional<stats::pairwise> update;    ///< against `update_previous_step`
  int64_t update_previous_step = 0;
  int histogram_bins = 0;                   ///< 0: no fixed-bin histogram in the record
  bool log_histogram = false;
  int64_t saved_reductions = 0;             ///< saved reduction values in the record
};

/// @brief One row: a record's statistics (the blob of stats/record_codec.hpp, zero runs packed)
/// and what it describes. Readable columns (moments, update-ratio terms) are written beside the
/// blob for SQL users; reading back uses the blob alone.
struct stored_row {
  std::string tensor;
  int64_t step = 0;
  std::string worker;
  std::string request;        ///< `request_signature` of the request it was computed for
  int mode = 0;
  int64_t mode_step = 0;
  row_identity identity;
  std::vector<std::byte> record;  ///< packed `stats::append_record` bytes (`pack_record`)
  row_columns columns;            ///< written only
};

/// @brief One row as `statistics_store::read_row_views` hands it over: views into SQLite's
/// buffers, valid during the call only (no allocation per row).
struct row_view {
  std::string_view tensor;
  int64_t step = 0;
  std::string_view worker;
  std::string_view request;
  int mode = 0;
  int64_t mode_step = 0;
  std::string_view event_file;
  std::string_view ranges;
  uint64_t file_size_bytes = 0;
  std::string_view file_version;
  std::string_view previous;
  std::span<const std::byte> record;  ///< packed, checksum verified
};

/// @brief Rows to write, held compactly: each row's texts and packed record are copied into one
/// buffer of the batch (no allocation per row once the batch has grown: a run's row writer
/// queues these, and reuses them). Views handed out stay valid until the next `add` or `clear`.
class row_batch {
 public:
  /// @brief Append a row: the texts and the packed record of `row` are copied (`row.record` is
  /// a `pack_record` blob; its checksum is computed when it is written); `columns` as given.
  /// `bundled`: a small record, written into the bundle of its step, worker and request
  /// (`record_bundles`) rather than as a row of `records` (its columns are then not written).
  void add(const row_view& row, const row_columns& columns, bool bundled = false);
  [[nodiscard]] std::size_t size() const noexcept { return rows_.size(); }
  [[nodiscard]] bool empty() const noexcept { return rows_.empty(); }
  /// @brief Row `i` (< size()) as views into the batch.
  [[nodiscard]] row_view view(std::size_t i) const noexcept;
  /// @brief The readable columns of row `i`.
  [[nodiscard]] const row_columns& columns(std::size_t i) const noexcept { return rows_[i].columns; }
  /// @brief Whether row `i` goes into a bundle (`add`).
  [[nodiscard]] bool bundled(std::size_t i) const noexcept { return rows_[i].bundled; }
  /// @brief Forget the rows, keeping the memory for the next ones.
  void clear() noexcept;
  /// tensor, worker, request, event_file, ranges, file_version, previous, record
  static constexpr int text_fields = 8;

 private:
  struct row {
    int64_t step = 0;
    int64_t mode_step = 0;
    uint64_t file_size_bytes = 0;
    std::size_t offset = 0;  // into bytes_: the fields, one after the other
    uint32_t lengths[text_fields] = {};
    int mode = 0;
    bool bundled = false;
    row_columns columns;
  };
  std::vector<row> rows_;
  std::vector<char> bytes_;
};

/// @brief Counts for `trialstat store info`.
struct store_info {
  int64_t rows = 0;       ///< rows of `records`
  int64_t bundled_rows = 0;  ///< small records kept in `record_bundles`
  int64_t bundles = 0;       ///< rows of `record_bundles`
  int64_t tensors = 0;
  int64_t steps = 0;
  int64_t workers = 0;
  int64_t requests = 0;   ///< distinct request signatures
  int64_t file_bytes = 0; ///< the database file (+ its WAL)
  int version = 0;
  std::string trial;      ///< the trial location the store was made for
};

/// @brief `request` and `backend` as the text a row is keyed by: every field that changes a
/// record, in a fixed order (the normalised lists, doubles in shortest round-trip form), plus the
/// backend (CUDA and CPU agree within a tolerance, not byte for byte). Deterministic.
[[nodiscard]] std::string request_signature(const stats::statistics_request& request, stats::backend backend);

/// @brief Whether records of `request` can come from the store at all: not when they carry
/// values valid only during the step callback (`keep_values`).
[[nodiscard]] bool request_storable(const stats::statistics_request& request) noexcept;

/// @brief `stats::append_record` bytes packed by eight-byte words (sparse histograms and small
/// counts are mostly zero bytes): the length, then per word a mask of its nonzero bytes and
/// those bytes, a run of zero words as one count (format: host/store/record_packing.hpp).
/// SSSE3 byte shuffles where the CPU has them, portable steps elsewhere; the same bytes.
[[nodiscard]] std::vector<std::byte> pack_record(std::span<const std::byte> raw);
/// @brief As above into `packed` (replaced; its capacity reused).
void pack_record(std::span<const std::byte> raw, std::vector<std::byte>& packed);
/// @brief The inverse of `pack_record`. Errors: data_loss naming the byte offset when `packed`
/// is malformed (cut off, a run past the record's length, bytes after its last word).
[[nodiscard]] status unpack_record(std::span<const std::byte> packed, std::vector<std::byte>& raw);

/// @brief An open store. Not thread-safe: one per thread (SQLite connections serialise
/// themselves; several processes may share a file: WAL, busy timeout `busy_timeout_ms`).
class statistics_store {
 public:
  /// Waits for another process's write lock this long before a statement fails (busy).
  static constexpr int busy_timeout_ms = 10000;

  /// @brief Open (creating it and its folder when missing) the store at `path` for the trial
  /// `trial_location`, migrating an older schema. `max_bytes` > 0 caps the database file
  /// (`PRAGMA max_page_count`): a write past it fails as a full disk does (io_error, nothing
  /// written).
  /// Errors: io_error (cannot create or open: unwritable folder, full disk, locked);
  ///   data_loss (not a SQLite database, or a damaged one); invalid_argument (a SQLite database
  ///   that is not a trialstat store, a newer schema, or a store made for another trial).
  [[nodiscard]] static result<statistics_store> open(const std::filesystem::path& path,
                                                     std::string_view trial_location, int64_t max_bytes = 0);
  /// @brief Open an existing store read-only (no creation, no migration), e.g. for `store info`.
  /// Errors: as `open`; not_found when there is no file.
  [[nodiscard]] static result<statistics_store> open_existing(const std::filesystem::path& path);

  statistics_store(statistics_store&&) noexcept;
  statistics_store& operator=(statistics_store&&) noexcept;
  ~statistics_store();

  [[nodiscard]] const std::filesystem::path& path() const noexcept;

  /// @brief Every row of global steps [step_begin, step_end], in any order, those of
  /// `records` and those in bundles alike; `on_row` is called once per row whose blob's checksum
  /// holds (a damaged row is skipped: `damaged` counts it; a damaged bundle counts its rows).
  /// Errors: io_error / data_loss from SQLite (the caller reads the trial instead).
  [[nodiscard]] status read_rows(int64_t step_begin, int64_t step_end,
                                 const std::function<void(stored_row&&)>& on_row, int64_t* damaged = nullptr);
  /// @brief As `read_rows`, each row as views valid during the call (the run's hot path: one
  /// sequential scan, no allocation per row).
  [[nodiscard]] status read_row_views(int64_t step_begin, int64_t step_end,
                                      const std::function<void(const row_view&)>& on_row, int64_t* damaged = nullptr);

  /// @brief The first and last global step that rows (or bundles) of [step_begin, step_end] have; nullopt
  /// when there are none. Errors: io_error / data_loss from SQLite.
  [[nodiscard]] result<std::optional<std::pair<int64_t, int64_t>>> step_bounds(int64_t step_begin, int64_t step_end);

  /// @brief Insert or replace `rows` in one transaction (all or none).
  /// Errors: io_error (full disk, read-only file, busy past the timeout): nothing was written.
  [[nodiscard]] status write_rows(std::span<const stored_row> rows);
  /// @brief As above, the rows of a batch (what a run's row writer writes). Its bundled rows
  /// (`row_batch::bundled`) go into the bundle of their (step, worker, request), merged with the
  /// rows that bundle holds (a row of the same tensor is replaced, the others kept).
  [[nodiscard]] status write_rows(const row_batch& rows);

  /// @brief Row counts and the file's size.
  [[nodiscard]] result<store_info> info();

  struct state;  ///< the connection (host/store/statistics_store.cpp)

 private:
  explicit statistics_store(std::unique_ptr<state> s);
  std::unique_ptr<state> state_;
};

/// @brief `--store PATH|auto|off` resolved for the trial at `trial_location`: nullopt for
/// "off"; "auto" (or "") is `default_store_path`; anything else is the path itself.
/// Errors: as `default_store_path`.
[[nodiscard]] result<std::optional<std::filesystem::path>> resolve_store_path(std::string_view choice,
                                                                             std::string_view trial_location);

/// @brief The store of a trial under the user's cache folder:
/// `$XDG_CACHE_HOME/trialstat/` (else `$HOME/.cache/trialstat/`) + a name made of the trial
/// folder's last component and 16 hex digits of a hash of its location (a local folder made
/// absolute and normalised, so `./t` and `/abs/t` share a store; an s3:// location as given).
/// Errors: invalid_argument when neither XDG_CACHE_HOME nor HOME is set.
[[nodiscard]] result<std::filesystem::path> default_store_path(std::string_view trial_location);

/// @brief The location a store records (and is keyed by): a local folder absolute and
/// normalised, an s3:// location as given, trailing slashes dropped.
[[nodiscard]] std::string canonical_location(std::string_view trial_location);

/// @brief Remove the store at `path` and its WAL and shared-memory files. Errors: io_error.
[[nodiscard]] status remove_store(const std::filesystem::path& path);

}  // namespace trialstat::store
