// SPDX-License-Identifier: Apache-2.0
// The store's database: open (create, check it is ours, migrate), read rows of a step range,
// write rows in one transaction, count them. Every SQLite failure becomes a status naming the
// file; nothing here throws.
#include "trialstat/store/statistics_store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>
#include <system_error>

#include <fmt/format.h>

#include "host/store/record_bundle.hpp"
#include "trialstat/config.hpp"
#include "trialstat/io/crc32c.hpp"

namespace trialstat::store {
namespace {

namespace fs = std::filesystem;

/// Schema version 3 (README "Statistics store"). A later version adds a migration step in
/// `migrate` and raises `schema_version`.
constexpr const char* schema_meta = R"sql(
CREATE TABLE IF NOT EXISTS store_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
)sql";
/// The rows' table, named `%s` (`records`, or `records_v2` while version 1 is migrated). Its
/// columns are version 1's, in the same order; version 2 keys it by step first (version 1:
/// tensor first), so that a run's rows, written in step order, are appended at the end of the
/// b-tree instead of inserted in the middle of every tensor's range: ~30 % less CPU a row and
/// less than half the WAL traffic (bench/RESULTS.md, twelfth session), and a run's step range is
/// one range of the key.
constexpr const char* records_table = R"sql(
CREATE TABLE IF NOT EXISTS %s (
  tensor        TEXT    NOT NULL,
  step          INTEGER NOT NULL,
  worker        TEXT    NOT NULL,
  request       TEXT    NOT NULL,
  mode          INTEGER NOT NULL,
  mode_step     INTEGER NOT NULL,
  event_file    TEXT    NOT NULL,
  ranges        TEXT    NOT NULL,
  file_size     INTEGER NOT NULL,
  file_version  TEXT    NOT NULL,
  previous      TEXT    NOT NULL,
  dtype         TEXT,
  num_elements  INTEGER,
  count         INTEGER,
  nan_count     INTEGER,
  pos_inf_count INTEGER,
  neg_inf_count INTEGER,
  zero_count    INTEGER,
  min           REAL,
  max           REAL,
  mean          REAL,
  variance      REAL,
  sum           REAL,
  sum_abs       REAL,
  sum_squares   REAL,
  max_abs       REAL,
  update_previous_step        INTEGER,
  update_diff_sum_squares     REAL,
  update_previous_sum_squares REAL,
  histogram_bins   INTEGER NOT NULL,
  log_histogram    INTEGER NOT NULL,
  saved_reductions INTEGER NOT NULL,
  record_checksum  INTEGER NOT NULL,
  record           BLOB    NOT NULL,
  PRIMARY KEY (step, tensor, worker, request)
) WITHOUT ROWID;
)sql";
/// Version 3: the small records of one (step, worker, request) that the store keeps (their event
/// file holds a row of `records`) as one row, `bundle` in host/store/record_bundle.hpp's layout.
/// Keyed by step first, as `records`: a run's bundles are appended, and read in one range.
constexpr const char* bundles_table = R"sql(
CREATE TABLE IF NOT EXISTS record_bundles (
  step            INTEGER NOT NULL,
  worker          TEXT    NOT NULL,
  request         TEXT    NOT NULL,
  rows            INTEGER NOT NULL,
  bundle_checksum INTEGER NOT NULL,
  bundle          BLOB    NOT NULL,
  PRIMARY KEY (step, worker, request)
) WITHOUT ROWID;
)sql";
// No secondary index: a run reads its step range, one range of the primary key, in one
// sequential scan, and every index costs each insert (two indexes on step and mode made writing
// ~60% dearer).

/// `records_table` for the table `name`.
std::string records_schema(std::string_view name) {
  const std::string_view sql(records_table);
  const std::size_t at = sql.find("%s");
  return fmt::format("{}{}{}", sql.substr(0, at), name, sql.substr(at + 2));
}

/// A prepared statement, finalised when it goes.
class statement {
 public:
  statement() = default;
  statement(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  statement(statement&& o) noexcept : stmt_(std::exchange(o.stmt_, nullptr)), rc_(o.rc_) {}
  statement& operator=(statement&& o) noexcept {
    std::swap(stmt_, o.stmt_);
    rc_ = o.rc_;
    return *this;
  }
  ~statement() { sqlite3_finalize(stmt_); }
  [[nodiscard]] bool ok() const noexcept { return rc_ == SQLITE_OK && stmt_ != nullptr; }
  [[nodiscard]] int rc() const noexcept { return rc_; }
  sqlite3_stmt* get() const noexcept { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

/// `sql` prepared with ?1 and ?2 bound to the steps [step_begin, step_end] (check ok()).
statement step_range_statement(sqlite3* db, const char* sql, int64_t step_begin, int64_t step_end) {
  statement q(db, sql);
  if (q.ok()) {
    sqlite3_bind_int64(q.get(), 1, step_begin);
    sqlite3_bind_int64(q.get(), 2, step_end);
  }
  return q;
}

std::string_view text_column(sqlite3_stmt* s, int i) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
  return p == nullptr ? std::string_view() : std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(s, i)));
}

/// A SQLite result code as a status: a full disk, a read-only file or a lock stay io_error (the
/// store is fine, the machine is not); a damaged or foreign file is data_loss.
status sqlite_status(sqlite3* db, int rc, const fs::path& path, std::string_view what) {
  const int primary = rc & 0xff;
  const error_code code = primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB ? error_code::data_loss
                                                                               : error_code::io_error;
  const char* message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return status(code, fmt::format("statistics store {}: {}: {}", path.string(), what, message));
}

}  // namespace

struct statistics_store::state {
  fs::path path;
  sqlite3* db = nullptr;
  /// INSERT statements of rows_per_insert[k] rows each, prepared when first needed.
  std::array<statement, 4> inserts;
  statement bundle_find;   // a bundle's blob by its key
  statement bundle_write;  // a bundle, inserted or replaced
  std::vector<uint32_t> plain_rows;          // of a batch, the rows of `records` (reused)
  std::vector<std::byte> bundle_held;        // a bundle's blob as the store holds it (reused)
  std::vector<std::byte> bundle_blob;        // a bundle's blob as written (reused)
  /// Rows bound to one INSERT statement, largest first (34 parameters a row: 4,352 for 128, far
  /// below SQLite's limit of 32,766). Every multi-row statement keeps a statement journal that it
  /// opens, truncates and closes: 128 rows to a statement cost ~15% less CPU than 16 (a run's
  /// batch is ~900 rows; bench/RESULTS.md, nineteenth session). A batch takes the largest that
  /// fits, then the smaller ones.
  static constexpr std::array<int, 4> rows_per_insert = {128, 16, 4, 1};
  ~state() { sqlite3_close_v2(db); }

  status exec(const char* sql, std::string_view what) {
    char* error = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &error);
    sqlite3_free(error);
    return rc == SQLITE_OK ? status::success() : sqlite_status(db, rc, path, what);
  }
  /// The one integer a query gives (PRAGMA x, COUNT(*)).
  result<int64_t> integer(const char* sql, std::string_view what) {
    statement s(db, sql);
    if (!s.ok()) return sqlite_status(db, s.rc(), path, what);
    const int rc = sqlite3_step(s.get());
    if (rc == SQLITE_ROW) return static_cast<int64_t>(sqlite3_column_int64(s.get(), 0));
    if (rc == SQLITE_DONE) return int64_t{0};
    return sqlite_status(db, rc, path, what);
  }
  result<std::optional<std::string>> meta(const char* key) {
    statement s(db, "SELECT value FROM store_meta WHERE key = ?1");
    if (!s.ok()) return sqlite_status(db, s.rc(), path, "reading store_meta");
    sqlite3_bind_text(s.get(), 1, key, -1, SQLITE_STATIC);
    const int rc = sqlite3_step(s.get());
    if (rc == SQLITE_ROW) return std::optional<std::string>(std::string(text_column(s.get(), 0)));
    if (rc == SQLITE_DONE) return std::optional<std::string>();
    return sqlite_status(db, rc, path, "reading store_meta");
  }

  /// What the file is: ours (its version), empty (0), or someone else's (an error).
  result<int> version() {
    auto app = integer("PRAGMA application_id", "reading its header");
    if (!app) return app.error_status();
    auto user = integer("PRAGMA user_version", "reading its header");
    if (!user) return user.error_status();
    if (*app == application_id) return static_cast<int>(*user);
    auto tables = integer("SELECT COUNT(*) FROM sqlite_schema", "reading its schema");
    if (!tables) return tables.error_status();
    if (*app == 0 && *user == 0 && *tables == 0) return 0;  // a new (or empty) file
    return status(error_code::invalid_argument,
                  fmt::format("statistics store {}: a SQLite database that is not a trialstat store "
                              "(application_id {:#x}); it is left alone",
                              path.string(), static_cast<uint32_t>(*app)));
  }

  /// Bring an empty or older store to `schema_version` in one transaction.
  status migrate(int from, std::string_view trial_location) {
    TRIALSTAT_RETURN_IF_ERROR(exec("BEGIN IMMEDIATE", "starting the schema transaction"));
    // Another process may have created it meanwhile: look again under the write lock.
    auto now = version();
    status done = now ? status::success() : now.error_status();
    if (done.ok() && *now < schema_version) {
      (void)from;  // looked at again under the lock: `*now`
      done = exec(schema_meta, "creating the schema");
      if (done.ok() && *now == 0) done = exec(records_schema("records").c_str(), "creating the schema");
      if (done.ok() && *now == 1) {
        // Version 1 keyed the rows by tensor first: the same columns, copied into a table keyed
        // by step first.
        done = exec((records_schema("records_v2") +
                     "INSERT INTO records_v2 SELECT * FROM records; DROP TABLE records; "
                     "ALTER TABLE records_v2 RENAME TO records;")
                        .c_str(),
                    "migrating version 1 (rows keyed by step first)");
      }
      if (done.ok()) done = exec(bundles_table, "creating record_bundles (version 3)");
      if (done.ok()) {
        done = exec(fmt::format("PRAGMA application_id = {}; PRAGMA user_version = {};", application_id,
                                schema_version).c_str(),
                    "setting its version");
      }
      if (done.ok() && *now == 0) {  // a migrated store keeps its trial (checked before)
        statement s(db, "INSERT OR REPLACE INTO store_meta(key, value) VALUES ('trial', ?1), "
                        "('created_by', 'trialstat " TRIALSTAT_VERSION "')");
        if (!s.ok()) {
          done = sqlite_status(db, s.rc(), path, "writing store_meta");
        } else {
          sqlite3_bind_text(s.get(), 1, trial_location.data(), static_cast<int>(trial_location.size()),
                            SQLITE_TRANSIENT);
          const int rc = sqlite3_step(s.get());
          if (rc != SQLITE_DONE) done = sqlite_status(db, rc, path, "writing store_meta");
        }
      }
    }
    if (!done.ok()) {
      (void)exec("ROLLBACK", "rolling back");
      return done;
    }
    return exec("COMMIT", "committing the schema");
  }
};

statistics_store::statistics_store(std::unique_ptr<state> s) : state_(std::move(s)) {}
statistics_store::statistics_store(statistics_store&&) noexcept = default;
statistics_store& statistics_store::operator=(statistics_store&&) noexcept = default;
statistics_store::~statistics_store() = default;
const fs::path& statistics_store::path() const noexcept { return state_->path; }

namespace {

result<std::unique_ptr<statistics_store::state>> connect(const fs::path& path, int flags) {
  auto s = std::make_unique<statistics_store::state>();
  s->path = path;
  const int rc = sqlite3_open_v2(path.c_str(), &s->db, flags, nullptr);
  if (rc != SQLITE_OK) {
    status failed = sqlite_status(s->db, rc, path, "cannot open");
    return failed;
  }
  sqlite3_extended_result_codes(s->db, 1);
  sqlite3_busy_timeout(s->db, statistics_store::busy_timeout_ms);
  return s;
}

}  // namespace

result<statistics_store> statistics_store::open(const fs::path& path, std::string_view trial_location,
                                                int64_t max_bytes) {
  std::error_code ec;
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), ec);
    if (ec) {
      return status(error_code::io_error, fmt::format("statistics store {}: cannot create its folder: {}",
                                                      path.string(), ec.message()));
    }
  }
  auto connected = connect(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
  if (!connected) return connected.error_status();
  auto s = std::move(*connected);
  auto version = s->version();
  if (!version) return version.error_status();
  if (*version > schema_version) {
    return status(error_code::invalid_argument,
                  fmt::format("statistics store {}: schema version {} is newer than this trialstat's ({}); "
                              "it is left alone",
                              path.string(), *version, schema_version));
  }
  // A new file: 16 KiB pages (rows of a few hundred bytes; fewer, larger reads when a run scans
  // its steps). Only takes effect before the first table exists and before WAL.
  if (*version == 0) (void)s->exec("PRAGMA page_size = 16384", "setting the page size");
  // Reads through a mapping of the file (no pread per page); SQLite falls back to reads where
  // the OS cannot map.
  (void)s->exec("PRAGMA mmap_size = 268435456", "mapping the file");
  // WAL: readers never block the writer and a killed writer leaves the last commit intact.
  // A store on a file system without shared memory keeps its rollback journal (still atomic).
  (void)s->exec("PRAGMA journal_mode = WAL", "setting WAL");
  TRIALSTAT_RETURN_IF_ERROR(s->exec("PRAGMA synchronous = NORMAL", "setting synchronous"));
  // Checkpoints every 64 pages (1 MiB of 16 KiB pages; SQLite's default is 1,000): the WAL's
  // pages are copied into the file by the writer thread while the run goes on, not all at the
  // close (bench/RESULTS.md, sixteenth session).
  (void)s->exec("PRAGMA wal_autocheckpoint = 64", "setting the checkpoint interval");
  // Statement journals (each multi-row INSERT OR REPLACE keeps one, to undo itself on a
  // constraint failure) in memory, not in files under /var/tmp: on a cold run of a 1 GB trial
  // they were 1,534 of the 2,379 page writes (bench/RESULTS.md, sixteenth session).
  (void)s->exec("PRAGMA temp_store = MEMORY", "keeping temporary files in memory");
  // Debian builds SQLite with SQLITE_SECURE_DELETE: every cell a page split moves and every
  // replaced row would be overwritten with zeros (~6% of an insert's instructions). A store
  // holds statistics of the trial beside it, nothing to scrub.
  (void)s->exec("PRAGMA secure_delete = OFF", "not zeroing freed space");
  // Another trial's store is left alone, also when it is of an older version.
  const auto check_trial = [&]() -> status {
    auto trial = s->meta("trial");
    if (!trial) return trial.error_status();
    if (!*trial || **trial != trial_location) {
      return status(error_code::invalid_argument,
                    fmt::format("statistics store {}: made for the trial {}, not {}; it is left alone",
                                path.string(), trial->value_or("(unknown)"), trial_location));
    }
    return status::success();
  };
  if (*version > 0) TRIALSTAT_RETURN_IF_ERROR(check_trial());
  if (*version < schema_version) TRIALSTAT_RETURN_IF_ERROR(s->migrate(*version, trial_location));
  if (max_bytes > 0) {
    auto page = s->integer("PRAGMA page_size", "reading its page size");
    if (!page) return page.error_status();
    const int64_t pages = std::max<int64_t>(1, max_bytes / std::max<int64_t>(1, *page));
    TRIALSTAT_RETURN_IF_ERROR(s->exec(fmt::format("PRAGMA max_page_count = {}", pages).c_str(), "capping its size"));
  }
  if (*version == 0) TRIALSTAT_RETURN_IF_ERROR(check_trial());  // made now (or by another process meanwhile)
  return statistics_store(std::move(s));
}

result<statistics_store> statistics_store::open_existing(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return status(error_code::not_found, fmt::format("statistics store {}: no such file", path.string()));
  }
  auto connected = connect(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
  if (!connected) return connected.error_status();
  auto s = std::move(*connected);
  (void)s->exec("PRAGMA mmap_size = 268435456", "mapping the file");  // as `open`: no pread per page
  auto version = s->version();
  if (!version) return version.error_status();
  if (*version != schema_version) {
    return status(error_code::invalid_argument,
                  fmt::format("statistics store {}: schema version {}, this trialstat reads {}", path.string(),
                              *version, schema_version));
  }
  return statistics_store(std::move(s));
}

result<std::optional<std::pair<int64_t, int64_t>>> statistics_store::step_bounds(int64_t step_begin,
                                                                                  int64_t step_end) {
  state& s = *state_;
  // Two seeks into the primary key of each table (min and max in one query would scan the range).
  std::optional<int64_t> bound[2];
  const char* const sql[4] = {"SELECT step FROM records WHERE step BETWEEN ?1 AND ?2 ORDER BY step LIMIT 1",
                              "SELECT step FROM records WHERE step BETWEEN ?1 AND ?2 ORDER BY step DESC LIMIT 1",
                              "SELECT step FROM record_bundles WHERE step BETWEEN ?1 AND ?2 ORDER BY step LIMIT 1",
                              "SELECT step FROM record_bundles WHERE step BETWEEN ?1 AND ?2 ORDER BY step DESC LIMIT 1"};
  for (int i = 0; i < 4; ++i) {
    const statement q = step_range_statement(s.db, sql[i], step_begin, step_end);
    if (!q.ok()) return sqlite_status(s.db, q.rc(), s.path, "reading the step range");
    const int rc = sqlite3_step(q.get());
    if (rc == SQLITE_ROW) {
      const int64_t step = sqlite3_column_int64(q.get(), 0);
      std::optional<int64_t>& b = bound[i % 2];
      b = !b ? step : i % 2 == 0 ? std::min(*b, step) : std::max(*b, step);
    } else if (rc != SQLITE_DONE) {
      return sqlite_status(s.db, rc, s.path, "reading the step range");
    }
  }
  if (!bound[0] || !bound[1]) return std::optional<std::pair<int64_t, int64_t>>();
  return std::optional<std::pair<int64_t, int64_t>>(std::pair{*bound[0], *bound[1]});
}

status statistics_store::read_row_views(int64_t step_begin, int64_t step_end,
                                        const std::function<void(const row_view&)>& on_row, int64_t* damaged) {
  state& s = *state_;
  // The step range is one range of the primary key: one sequential scan of it.
  const statement q = step_range_statement(
      s.db,
      "SELECT tensor, step, worker, request, mode, mode_step, event_file, ranges, file_size, "
      "file_version, previous, record_checksum, record FROM records WHERE step BETWEEN ?1 AND ?2",
      step_begin, step_end);
  if (!q.ok()) return sqlite_status(s.db, q.rc(), s.path, "reading rows");
  int rc = SQLITE_OK;
  while ((rc = sqlite3_step(q.get())) == SQLITE_ROW) {
    sqlite3_stmt* r = q.get();
    row_view row;
    const auto* blob = static_cast<const std::byte*>(sqlite3_column_blob(r, 12));
    row.record = {blob, static_cast<std::size_t>(sqlite3_column_bytes(r, 12))};
    const auto checksum = static_cast<uint32_t>(sqlite3_column_int64(r, 11));
    if (io::crc32c(row.record) != checksum) {  // a damaged row is never used
      if (damaged != nullptr) ++*damaged;
      continue;
    }
    row.tensor = text_column(r, 0);
    row.step = sqlite3_column_int64(r, 1);
    row.worker = text_column(r, 2);
    row.request = text_column(r, 3);
    row.mode = sqlite3_column_int(r, 4);
    row.mode_step = sqlite3_column_int64(r, 5);
    row.event_file = text_column(r, 6);
    row.ranges = text_column(r, 7);
    row.file_size_bytes = static_cast<uint64_t>(sqlite3_column_int64(r, 8));
    row.file_version = text_column(r, 9);
    row.previous = text_column(r, 10);
    on_row(row);
  }
  if (rc != SQLITE_DONE) return sqlite_status(s.db, rc, s.path, "reading rows");
  // Then the bundles of the same steps, each row of a bundle as views into its blob.
  const statement b = step_range_statement(
      s.db,
      "SELECT step, worker, request, rows, bundle_checksum, bundle FROM record_bundles "
      "WHERE step BETWEEN ?1 AND ?2",
      step_begin, step_end);
  if (!b.ok()) return sqlite_status(s.db, b.rc(), s.path, "reading bundles");
  std::vector<row_view> bundled;
  while ((rc = sqlite3_step(b.get())) == SQLITE_ROW) {
    sqlite3_stmt* r = b.get();
    const auto* blob = static_cast<const std::byte*>(sqlite3_column_blob(r, 5));
    const std::span<const std::byte> bytes(blob, static_cast<std::size_t>(sqlite3_column_bytes(r, 5)));
    bundled.clear();
    if (io::crc32c(bytes) != static_cast<uint32_t>(sqlite3_column_int64(r, 4)) ||
        !detail::decode_bundle(bytes, sqlite3_column_int64(r, 0), text_column(r, 1), text_column(r, 2), bundled)) {
      if (damaged != nullptr) *damaged += std::max<int64_t>(1, sqlite3_column_int64(r, 3));
      continue;
    }
    for (const row_view& v : bundled) on_row(v);
  }
  if (rc != SQLITE_DONE) return sqlite_status(s.db, rc, s.path, "reading bundles");
  return status::success();
}

status statistics_store::read_rows(int64_t step_begin, int64_t step_end,
                                   const std::function<void(stored_row&&)>& on_row, int64_t* damaged) {
  return read_row_views(step_begin, step_end, [&](const row_view& v) {
    stored_row row;
    row.tensor = v.tensor;
    row.step = v.step;
    row.worker = v.worker;
    row.request = v.request;
    row.mode = v.mode;
    row.mode_step = v.mode_step;
    row.identity = {std::string(v.event_file), std::string(v.ranges), v.file_size_bytes, std::string(v.file_version),
                    std::string(v.previous)};
    row.record.assign(v.record.begin(), v.record.end());
    on_row(std::move(row));
  }, damaged);
}

namespace {

/// The columns of a row, in the order `bind_row` binds them.
constexpr std::string_view insert_columns =
    "tensor, step, worker, request, mode, mode_step, event_file, ranges, file_size, file_version, previous, dtype, "
    "num_elements, count, nan_count, pos_inf_count, neg_inf_count, zero_count, min, max, mean, variance, sum, "
    "sum_abs, sum_squares, max_abs, update_previous_step, update_diff_sum_squares, update_previous_sum_squares, "
    "histogram_bins, log_histogram, saved_reductions, record_checksum, record";
constexpr int columns_per_row = 34;

/// "INSERT OR REPLACE INTO records (...) VALUES (?, ..., ?), (?, ...)" for `rows` rows: the
/// parameter of column c (1-based) of row r is r * columns_per_row + c. Plain `?`, not `?NNN`:
/// SQLite looks each numbered parameter up in a list of those before it, which made preparing
/// 128 rows (4,352 parameters) cost ~75 M instructions instead of ~2 M.
std::string insert_sql(int rows) {
  std::string sql = fmt::format("INSERT OR REPLACE INTO records ({}) VALUES ", insert_columns);
  std::string row = "(?";
  for (int c = 2; c <= columns_per_row; ++c) row += ", ?";
  row += ")";
  for (int r = 0; r < rows; ++r) {
    if (r > 0) sql += ", ";
    sql += row;
  }
  return sql;
}

/// Bind row `v` with `c` to parameters base+1 .. base+34 of `w`: every one of them (NULL where
/// absent), so no sqlite3_clear_bindings pass is needed between rows.
void bind_row(sqlite3_stmt* w, int base, const row_view& v, const row_columns& c) {
  const auto text = [&](int i, std::string_view value) {
    sqlite3_bind_text(w, base + i, value.data(), static_cast<int>(value.size()), SQLITE_STATIC);
  };
  const auto integer = [&](int i, int64_t value) { sqlite3_bind_int64(w, base + i, value); };
  const auto null = [&](int i) { sqlite3_bind_null(w, base + i); };
  // NaN binds as NULL in SQLite; ±Inf stay REAL.
  const auto real = [&](int i, double value) {
    if (std::isnan(value)) {
      null(i);
    } else {
      sqlite3_bind_double(w, base + i, value);
    }
  };
  text(1, v.tensor);
  integer(2, v.step);
  text(3, v.worker);
  text(4, v.request);
  integer(5, v.mode);
  integer(6, v.mode_step);
  text(7, v.event_file);
  text(8, v.ranges);
  integer(9, static_cast<int64_t>(v.file_size_bytes));
  text(10, v.file_version);
  text(11, v.previous);
  if (c.dtype.empty()) {
    null(12);
  } else {
    text(12, c.dtype);
  }
  integer(13, c.num_elements);
  if (c.moments) {
    const stats::moments& m = *c.moments;
    integer(14, m.count);
    integer(15, m.nan_count);
    integer(16, m.pos_inf_count);
    integer(17, m.neg_inf_count);
    integer(18, m.zero_count);
    if (m.has_finite()) {
      real(19, m.min);
      real(20, m.max);
      real(21, m.mean);
      real(22, m.variance());
    } else {
      for (int column = 19; column <= 22; ++column) null(column);
    }
    real(23, m.sum);
    real(24, m.sum_abs);
    real(25, m.sum_squares);
    real(26, m.max_abs);
  } else {
    for (int column = 14; column <= 26; ++column) null(column);
  }
  if (c.update) {
    integer(27, c.update_previous_step);
    real(28, c.update->diff_sum_squares);
    real(29, c.update->previous_sum_squares);
  } else {
    for (int column = 27; column <= 29; ++column) null(column);
  }
  integer(30, c.histogram_bins);
  integer(31, c.log_histogram ? 1 : 0);
  integer(32, c.saved_reductions);
  integer(33, static_cast<int64_t>(io::crc32c(v.record)));
  sqlite3_bind_blob(w, base + 34, v.record.data(), static_cast<int>(v.record.size()), SQLITE_STATIC);
}

/// Insert or replace rows 0..count-1 of `records` (`row(i)` gives each as views and its
/// columns) inside the caller's transaction, as many to a statement as
/// `statistics_store::state::rows_per_insert` allows (a statement's set-up, statement journal and
/// end cost ~55,000 instructions, two to three rows' inserts); in order, so a later row of the
/// same key replaces an earlier one.
template <typename Row>
status insert_record_rows(statistics_store::state& s, std::size_t count, const Row& row) {
  status failure;
  std::size_t i = 0;
  while (i < count && failure.ok()) {
    std::size_t k = 0;
    while (count - i < static_cast<std::size_t>(statistics_store::state::rows_per_insert[k])) ++k;  // the last is 1
    const int rows = statistics_store::state::rows_per_insert[k];
    statement& st = s.inserts[k];
    if (!st.ok()) {
      st = statement(s.db, insert_sql(rows).c_str());
      if (!st.ok()) {
        failure = sqlite_status(s.db, st.rc(), s.path, "preparing the insert");
        break;
      }
    }
    sqlite3_stmt* w = st.get();
    sqlite3_reset(w);
    for (int r = 0; r < rows; ++r, ++i) {
      const auto [v, c] = row(i);
      bind_row(w, r * columns_per_row, v, c);
    }
    const int rc = sqlite3_step(w);
    if (rc != SQLITE_DONE) failure = sqlite_status(s.db, rc, s.path, "writing rows");
  }
  for (statement& st : s.inserts) {
    if (!st.ok()) continue;
    sqlite3_reset(st.get());
    sqlite3_clear_bindings(st.get());  // no view of the caller's rows outlives the call
  }
  return failure;
}

/// The bundle key of a row: its step, worker and request.
using bundle_key = std::tuple<int64_t, std::string_view, std::string_view>;

/// Write the bundled rows of `rows` into their bundles inside the caller's transaction, each
/// merged with what the store holds under its key (`merge_bundle_rows`); a held bundle that fails
/// its checksum or does not parse is replaced whole.
status write_bundles(statistics_store::state& s, const row_batch& rows) {
  std::map<bundle_key, std::vector<row_view>> bundles;  // in key order: appended to the b-tree
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows.bundled(i)) continue;
    const row_view v = rows.view(i);
    bundles[bundle_key{v.step, v.worker, v.request}].push_back(v);
  }
  if (bundles.empty()) return status::success();
  const std::pair<statement*, const char*> statements[] = {
      {&s.bundle_find, "SELECT bundle_checksum, bundle FROM record_bundles WHERE step = ?1 AND worker = ?2 AND "
                       "request = ?3"},
      {&s.bundle_write, "INSERT OR REPLACE INTO record_bundles (step, worker, request, rows, bundle_checksum, bundle) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"}};
  for (const auto& [st, sql] : statements) {
    if (st->ok()) continue;
    *st = statement(s.db, sql);
    if (!st->ok()) return sqlite_status(s.db, st->rc(), s.path, "preparing the bundle statements");
  }
  std::vector<row_view> held;
  std::vector<row_view> merged;
  for (const auto& [key, fresh] : bundles) {
    const auto& [step, worker, request] = key;
    sqlite3_stmt* find = s.bundle_find.get();
    sqlite3_reset(find);
    sqlite3_bind_int64(find, 1, step);
    sqlite3_bind_text(find, 2, worker.data(), static_cast<int>(worker.size()), SQLITE_STATIC);
    sqlite3_bind_text(find, 3, request.data(), static_cast<int>(request.size()), SQLITE_STATIC);
    held.clear();
    s.bundle_held.clear();
    const int found = sqlite3_step(find);
    if (found == SQLITE_ROW) {
      const auto* blob = static_cast<const std::byte*>(sqlite3_column_blob(find, 1));
      const std::span<const std::byte> bytes(blob, static_cast<std::size_t>(sqlite3_column_bytes(find, 1)));
      if (io::crc32c(bytes) == static_cast<uint32_t>(sqlite3_column_int64(find, 0))) {
        s.bundle_held.assign(bytes.begin(), bytes.end());  // the statement is reset before the write
      }
    } else if (found != SQLITE_DONE) {
      return sqlite_status(s.db, found, s.path, "reading a bundle");
    }
    sqlite3_reset(find);
    if (!s.bundle_held.empty() && !detail::decode_bundle(s.bundle_held, step, worker, request, held)) held.clear();
    detail::merge_bundle_rows(held, fresh, merged);
    detail::encode_bundle(merged, s.bundle_blob);
    sqlite3_stmt* w = s.bundle_write.get();
    sqlite3_reset(w);
    sqlite3_bind_int64(w, 1, step);
    sqlite3_bind_text(w, 2, worker.data(), static_cast<int>(worker.size()), SQLITE_STATIC);
    sqlite3_bind_text(w, 3, request.data(), static_cast<int>(request.size()), SQLITE_STATIC);
    sqlite3_bind_int64(w, 4, static_cast<int64_t>(merged.size()));
    sqlite3_bind_int64(w, 5, static_cast<int64_t>(io::crc32c(s.bundle_blob)));
    sqlite3_bind_blob(w, 6, s.bundle_blob.data(), static_cast<int>(s.bundle_blob.size()), SQLITE_STATIC);
    const int rc = sqlite3_step(w);
    sqlite3_reset(w);
    if (rc != SQLITE_DONE) return sqlite_status(s.db, rc, s.path, "writing a bundle");
  }
  for (statement* st : {&s.bundle_find, &s.bundle_write}) sqlite3_clear_bindings(st->get());
  return status::success();
}

/// `write` inside one transaction: committed when it succeeds, rolled back when it does not.
template <typename Write>
status in_transaction(statistics_store::state& s, const Write& write) {
  TRIALSTAT_RETURN_IF_ERROR(s.exec("BEGIN IMMEDIATE", "starting a write"));
  status failure = write();
  if (failure.ok()) failure = s.exec("COMMIT", "committing rows");
  if (!failure.ok()) (void)s.exec("ROLLBACK", "rolling back");
  return failure;
}

}  // namespace

status statistics_store::write_rows(std::span<const stored_row> rows) {
  if (rows.empty()) return status::success();
  return in_transaction(*state_, [&] {
    return insert_record_rows(*state_, rows.size(), [&](std::size_t i) {
      const stored_row& r = rows[i];
      row_view v;
      v.tensor = r.tensor;
      v.step = r.step;
      v.worker = r.worker;
      v.request = r.request;
      v.mode = r.mode;
      v.mode_step = r.mode_step;
      v.event_file = r.identity.event_file;
      v.ranges = r.identity.ranges;
      v.file_size_bytes = r.identity.file_size_bytes;
      v.file_version = r.identity.file_version;
      v.previous = r.identity.previous;
      v.record = r.record;
      return std::pair<row_view, const row_columns&>(v, r.columns);
    });
  });
}

status statistics_store::write_rows(const row_batch& rows) {
  if (rows.empty()) return status::success();
  state& s = *state_;
  s.plain_rows.clear();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows.bundled(i)) s.plain_rows.push_back(static_cast<uint32_t>(i));
  }
  return in_transaction(s, [&] {
    TRIALSTAT_RETURN_IF_ERROR(insert_record_rows(s, s.plain_rows.size(), [&](std::size_t i) {
      return std::pair<row_view, const row_columns&>(rows.view(s.plain_rows[i]), rows.columns(s.plain_rows[i]));
    }));
    return write_bundles(s, rows);
  });
}

result<store_info> statistics_store::info() {
  state& s = *state_;
  store_info out;
  const std::pair<int64_t*, const char*> counts[] = {
      {&out.rows, "SELECT COUNT(*) FROM records"},
      {&out.tensors, "SELECT COUNT(DISTINCT tensor) FROM records"},
      {&out.steps, "SELECT COUNT(DISTINCT step) FROM records"},
      {&out.workers, "SELECT COUNT(DISTINCT worker) FROM records"},
      {&out.requests, "SELECT COUNT(DISTINCT request) FROM records"},
      {&out.bundled_rows, "SELECT COALESCE(SUM(rows), 0) FROM record_bundles"},
      {&out.bundles, "SELECT COUNT(*) FROM record_bundles"},
  };
  for (const auto& [field, sql] : counts) {
    auto n = s.integer(sql, "counting rows");
    if (!n) return n.error_status();
    *field = *n;
  }
  auto version = s.integer("PRAGMA user_version", "reading its version");
  if (!version) return version.error_status();
  out.version = static_cast<int>(*version);
  auto trial = s.meta("trial");
  if (!trial) return trial.error_status();
  out.trial = trial->value_or("");
  std::error_code ec;
  for (const char* suffix : {"", "-wal"}) {
    const auto size = fs::file_size(fs::path(s.path.string() + suffix), ec);
    if (!ec) out.file_bytes += static_cast<int64_t>(size);
  }
  return out;
}

status remove_store(const fs::path& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::error_code ec;
    fs::remove(fs::path(path.string() + suffix), ec);
    if (ec) {
      return status(error_code::io_error,
                    fmt::format("statistics store {}: cannot remove {}{}: {}", path.string(), path.string(), suffix,
                                ec.message()));
    }
  }
  return status::success();
}

}  // namespace trialstat::store
