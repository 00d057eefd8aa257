// SPDX-License-Identifier: Apache-2.0
// The statistics store (issue 26): the row codec, the request signature, the database (open,
// migrate, foreign / corrupt / newer / other-trial files, a full store, damaged rows), and the
// store-backed source against the plain run, record bytes for record bytes, with pairwise
// history across served and read steps.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "host/store/held_rows.hpp"
#include "host/store/record_bundle.hpp"
#include "host/store/row_arena.hpp"
#include "host/store/row_reader.hpp"
#include "tests/reference/reference_stats.hpp"
#include "tests/support/files.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/stats/record_codec.hpp"
#include "trialstat/store/statistics_store.hpp"
#include "trialstat/store/store_source.hpp"
#include "trialstat/trial/catalog.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("trialstat_store_test_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::byte> bytes_of(std::string_view text) {
  std::vector<std::byte> out(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) out[i] = static_cast<std::byte>(text[i]);
  return out;
}

store::stored_row make_row(std::string tensor, int64_t step, std::string_view payload) {
  store::stored_row row;
  row.tensor = std::move(tensor);
  row.step = step;
  row.worker = "worker_0";
  row.request = "s1;cpu;m1";
  row.identity = {"events/x.tfevents", "0+10", 100, "123", ""};
  row.record = bytes_of(payload);
  return row;
}

// The rows a run may serve, read into an arena (every field copied, the texts given gone):
// every row found by its (step, tensor, worker), a later row of the same key replacing an earlier
// one, absent keys not found, the bytes as given.
TEST(StoreHeldRows, FindsEveryRowByItsEntry) {
  store::detail::row_arena arena;
  store::detail::held_rows rows;
  const auto record = bytes_of("packed record");
  std::vector<store::detail::entry_key> keys;
  for (int64_t step = 0; step < 300; step += 3) {
    for (trial::tensor_id tensor = 0; tensor < 7; ++tensor) {
      for (trial::worker_id worker = 0; worker < 2; ++worker) keys.push_back({step, tensor, worker});
    }
  }
  for (const auto& key : keys) {
    const std::string file = fmt::format("events/{}.tfevents", key.step);
    const std::string ranges = fmt::format("{}+{}", key.tensor, key.worker);
    store::row_view v;
    v.event_file = file;
    v.ranges = ranges;
    v.file_size_bytes = static_cast<uint64_t>(key.step) * 10;
    v.file_version = "v1";
    v.previous = key.tensor == 0 ? std::string_view("0:00000000000000ff") : std::string_view();
    v.record = record;
    const std::string tensor = fmt::format("tensor{}", key.tensor);
    const std::string worker = fmt::format("worker_{}", key.worker);
    v.tensor = tensor;
    v.step = key.step;
    v.worker = worker;
    v.request = "s1;cpu";
    arena.add(v);
  }
  store::row_view replacement;
  replacement.event_file = "replaced";
  arena.add(replacement);
  ASSERT_EQ(arena.size(), keys.size() + 1);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const store::row_view v = arena.view(i);
    ASSERT_EQ(v.step, keys[i].step);
    ASSERT_EQ(v.tensor, fmt::format("tensor{}", keys[i].tensor));
    ASSERT_EQ(v.worker, fmt::format("worker_{}", keys[i].worker));
    ASSERT_EQ(v.request, "s1;cpu");
    rows.add(keys[i], v);
  }
  rows.add(keys[5], arena.view(keys.size()));
  rows.build_index();
  ASSERT_EQ(rows.size(), keys.size() + 1);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const uint32_t at = rows.find(keys[i]);
    ASSERT_NE(at, store::detail::held_rows::none) << i;
    if (i == 5) {
      EXPECT_EQ(rows.event_file(at), "replaced");
      continue;
    }
    EXPECT_EQ(rows.event_file(at), fmt::format("events/{}.tfevents", keys[i].step));
    EXPECT_EQ(rows.ranges(at), fmt::format("{}+{}", keys[i].tensor, keys[i].worker));
    EXPECT_EQ(rows.file_size_bytes(at), static_cast<uint64_t>(keys[i].step) * 10);
    EXPECT_EQ(rows.previous(at).empty(), keys[i].tensor != 0);
    EXPECT_TRUE(std::equal(rows.record(at).begin(), rows.record(at).end(), record.begin(), record.end()));
  }
  EXPECT_EQ(rows.find({1, 0, 0}), store::detail::held_rows::none);   // a step not stored
  EXPECT_EQ(rows.find({0, 7, 0}), store::detail::held_rows::none);   // a tensor not stored
  EXPECT_EQ(rows.find({0, 0, 2}), store::detail::held_rows::none);   // a worker not stored
  rows.clear();
  EXPECT_EQ(rows.find(keys[0]), store::detail::held_rows::none);
}

TEST(StoreRequestSignature, NamesEveryFieldAndTheBackend) {
  stats::statistics_request a;
  a.histogram_bins = 64;
  stats::statistics_request b = a;
  b.histogram_bins = 32;
  EXPECT_NE(store::request_signature(a, stats::backend::cpu), store::request_signature(b, stats::backend::cpu));
  EXPECT_NE(store::request_signature(a, stats::backend::cpu), store::request_signature(a, stats::backend::cuda));
  stats::statistics_request c = a;
  c.percentiles = {90.0, 10.0};
  stats::statistics_request d = a;
  d.percentiles = {10.0, 90.0};
  EXPECT_EQ(store::request_signature(c, stats::backend::cpu), store::request_signature(d, stats::backend::cpu));
  stats::statistics_request e = a;
  e.history_depth = 1;
  e.allclose = {{1e-5, 1e-8, false}};
  EXPECT_NE(store::request_signature(a, stats::backend::cpu), store::request_signature(e, stats::backend::cpu));
  stats::statistics_request kept = a;
  kept.keep_values = true;
  EXPECT_FALSE(store::request_storable(kept));
  EXPECT_TRUE(store::request_storable(a));
}

TEST(StoreDatabase, WritesReadsAndReplacesRows) {
  const fs::path dir = scratch("rows");
  auto db = store::statistics_store::open(dir / "sub" / "s.sqlite", "/trials/a");
  ASSERT_TRUE(db) << db.error_status().to_string();
  std::vector<store::stored_row> rows{make_row("w", 0, "zero"), make_row("w", 1, "one"), make_row("b", 1, "b1")};
  ASSERT_TRUE(db->write_rows(rows).ok());
  rows[1].record = bytes_of("ONE");
  ASSERT_TRUE(db->write_rows(std::span(rows).subspan(1, 1)).ok());  // replaces (same key)
  std::vector<store::stored_row> got;
  ASSERT_TRUE(db->read_rows(1, 1, [&](store::stored_row&& r) { got.push_back(std::move(r)); }).ok());
  ASSERT_EQ(got.size(), 2u);
  std::sort(got.begin(), got.end(), [](auto& x, auto& y) { return x.tensor < y.tensor; });
  EXPECT_EQ(got[0].record, bytes_of("b1"));
  EXPECT_EQ(got[1].record, bytes_of("ONE"));
  EXPECT_EQ(got[1].identity, rows[1].identity);
  auto info = db->info();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->rows, 3);
  EXPECT_EQ(info->steps, 2);
  EXPECT_EQ(info->version, store::schema_version);
  EXPECT_EQ(info->trial, "/trials/a");
}

TEST(StoreDatabase, WritesARowBatchAsItsRows) {
  const fs::path dir = scratch("batch");
  auto db = store::statistics_store::open(dir / "s.sqlite", "/trials/a");
  ASSERT_TRUE(db) << db.error_status().to_string();
  std::vector<store::stored_row> rows{make_row("w", 3, "three"), make_row("b", 3, ""), make_row("w", 4, "four")};
  rows[2].identity.previous = "3:00000000000000ab";
  rows[2].mode = 2;
  rows[2].mode_step = 7;
  store::row_batch batch;
  batch.add(store::row_view{.tensor = "stale", .record = {}}, {});
  batch.clear();  // reused: nothing of the first row is left
  for (const auto& r : rows) {
    store::row_view v{r.tensor, r.step, r.worker, r.request, r.mode, r.mode_step, r.identity.event_file,
                      r.identity.ranges, r.identity.file_size_bytes, r.identity.file_version, r.identity.previous,
                      r.record};
    store::row_columns columns;
    columns.dtype = "float32";
    columns.num_elements = r.step;
    batch.add(v, columns);
  }
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(batch.view(2).previous, "3:00000000000000ab");
  EXPECT_EQ(batch.view(1).record.size(), 0u);
  EXPECT_EQ(batch.columns(2).num_elements, 4);
  ASSERT_TRUE(db->write_rows(batch).ok());
  std::vector<store::stored_row> got;
  ASSERT_TRUE(db->read_rows(0, 10, [&](store::stored_row&& r) { got.push_back(std::move(r)); }).ok());
  ASSERT_EQ(got.size(), 3u);
  std::sort(got.begin(), got.end(), [](auto& x, auto& y) { return std::tie(x.step, x.tensor) < std::tie(y.step, y.tensor); });
  std::sort(rows.begin(), rows.end(), [](auto& x, auto& y) { return std::tie(x.step, x.tensor) < std::tie(y.step, y.tensor); });
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(got[i].tensor, rows[i].tensor);
    EXPECT_EQ(got[i].step, rows[i].step);
    EXPECT_EQ(got[i].worker, rows[i].worker);
    EXPECT_EQ(got[i].request, rows[i].request);
    EXPECT_EQ(got[i].mode, rows[i].mode);
    EXPECT_EQ(got[i].mode_step, rows[i].mode_step);
    EXPECT_EQ(got[i].identity, rows[i].identity);
    EXPECT_EQ(got[i].record, rows[i].record);
  }
}

/// Batches of every size around the rows bound to one statement (128, 16, 4, 1): every row
/// written with its own columns, and a key repeated later in the batch (another statement, or the
/// same one) is the later row, as rows written one by one would be.
TEST(StoreDatabase, WritesBatchesOfAnySizeInOrder) {
  const fs::path dir = scratch("batch_sizes");
  for (const std::size_t count : {1, 3, 4, 5, 15, 16, 17, 21, 33, 50, 127, 128, 129, 150, 277}) {
    const fs::path path = dir / fmt::format("s{}.sqlite", count);
    auto db = store::statistics_store::open(path, "/trials/a");
    ASSERT_TRUE(db) << db.error_status().to_string();
    store::row_batch batch;
    std::vector<std::string> records;
    for (std::size_t i = 0; i < count; ++i) records.push_back(fmt::format("record {}", i));
    for (std::size_t i = 0; i < count; ++i) {
      const std::string tensor = fmt::format("t{}", i % 20);  // t0.. repeat from row 20 on
      const std::string ranges = fmt::format("{}+9", i);
      store::row_view v{.tensor = tensor, .step = 1, .worker = "worker_0", .request = "s1;cpu",
                        .event_file = "events/x.tfevents", .ranges = ranges, .file_version = "v",
                        .record = std::span(reinterpret_cast<const std::byte*>(records[i].data()), records[i].size())};
      store::row_columns columns;
      columns.num_elements = static_cast<int64_t>(i);
      batch.add(v, columns);
    }
    ASSERT_TRUE(db->write_rows(batch).ok()) << count;
    std::map<std::string, std::pair<std::string, std::string>> got;  // tensor -> (ranges, record)
    ASSERT_TRUE(db->read_rows(0, 10, [&](store::stored_row&& r) {
                    got[r.tensor] = {r.identity.ranges, std::string(reinterpret_cast<const char*>(r.record.data()),
                                                                    r.record.size())};
                  }).ok());
    ASSERT_EQ(got.size(), std::min<std::size_t>(count, 20)) << count;
    for (std::size_t t = 0; t < got.size(); ++t) {
      const std::size_t last = t + 20 * ((count - 1 - t) / 20);  // the last row of tensor t
      EXPECT_EQ(got[fmt::format("t{}", t)], std::pair(fmt::format("{}+9", last), records[last])) << count << " " << t;
    }
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT sum(num_elements) FROM records", -1, &q, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    int64_t expected = 0;
    for (std::size_t t = 0; t < got.size(); ++t) expected += static_cast<int64_t>(t + 20 * ((count - 1 - t) / 20));
    EXPECT_EQ(sqlite3_column_int64(q, 0), expected) << count;
    sqlite3_finalize(q);
    sqlite3_close(raw);
  }
}

/// The `sql` of `table` in the store at `path` (sqlite_schema), "" when absent.
std::string table_sql(const fs::path& path, const char* table) {
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(raw, "SELECT sql FROM sqlite_schema WHERE name = ?1", -1, &q, nullptr), SQLITE_OK);
  sqlite3_bind_text(q, 1, table, -1, SQLITE_STATIC);
  std::string sql;
  if (sqlite3_step(q) == SQLITE_ROW) sql = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
  sqlite3_finalize(q);
  sqlite3_close(raw);
  return sql;
}

/// Turn the store at `path` into a version-1 store: the same columns keyed by tensor first.
void make_version_1(const fs::path& path) {
  std::string v1 = table_sql(path, "records");
  const std::string v2_key = "PRIMARY KEY (step, tensor, worker, request)";
  ASSERT_NE(v1.find(v2_key), std::string::npos) << v1;
  v1.replace(v1.find(v2_key), v2_key.size(), "PRIMARY KEY (tensor, step, worker, request)");
  v1.replace(v1.find("records"), 7, "records_v1");
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const std::string sql = v1 + "; INSERT INTO records_v1 SELECT * FROM records; DROP TABLE records; "
                               "ALTER TABLE records_v1 RENAME TO records; PRAGMA user_version = 1;";
  ASSERT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
  sqlite3_close(raw);
}

TEST(StoreDatabase, MigratesVersion1KeepingItsRows) {
  const fs::path dir = scratch("migrate");
  std::vector<store::stored_row> rows{make_row("w", 0, "zero"), make_row("w", 1, "one"), make_row("b", 1, "b1")};
  for (const char* name : {"v1.sqlite", "other.sqlite"}) {
    auto db = store::statistics_store::open(dir / name, "/trials/a");
    ASSERT_TRUE(db) << db.error_status().to_string();
    ASSERT_TRUE(db->write_rows(rows).ok());
  }
  make_version_1(dir / "v1.sqlite");
  make_version_1(dir / "other.sqlite");
  ASSERT_NE(table_sql(dir / "v1.sqlite", "records").find("PRIMARY KEY (tensor, step"), std::string::npos);
  // Another trial's version-1 store is left alone, not migrated.
  auto other = store::statistics_store::open(dir / "other.sqlite", "/trials/b");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error_status().code(), error_code::invalid_argument);
  EXPECT_NE(table_sql(dir / "other.sqlite", "records").find("PRIMARY KEY (tensor, step"), std::string::npos);
  // Its own trial's: migrated to the step-first key, every row kept.
  auto db = store::statistics_store::open(dir / "v1.sqlite", "/trials/a");
  ASSERT_TRUE(db) << db.error_status().to_string();
  EXPECT_NE(table_sql(dir / "v1.sqlite", "records").find("PRIMARY KEY (step, tensor"), std::string::npos);
  auto info = db->info();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->version, store::schema_version);
  EXPECT_EQ(info->rows, 3);
  EXPECT_EQ(info->trial, "/trials/a");
  std::vector<store::stored_row> got;
  ASSERT_TRUE(db->read_rows(1, 1, [&](store::stored_row&& r) { got.push_back(std::move(r)); }).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].tensor, "b");  // step 1's rows, in key order
  EXPECT_EQ(got[0].record, bytes_of("b1"));
  EXPECT_EQ(got[1].tensor, "w");
  EXPECT_EQ(got[1].record, bytes_of("one"));
  EXPECT_EQ(got[1].identity, rows[1].identity);
}

TEST(StoreDatabase, LeavesForeignCorruptNewerAndOtherTrialsFilesAlone) {
  const fs::path dir = scratch("faults");
  // Random bytes: not a database (data_loss), and untouched.
  std::vector<std::byte> noise(4096);
  std::mt19937 random(1);
  for (auto& b : noise) b = static_cast<std::byte>(random() & 0xff);
  testing::write_bytes(dir / "noise.sqlite", noise);
  auto opened = store::statistics_store::open(dir / "noise.sqlite", "/t");
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error_status().code(), error_code::data_loss);
  EXPECT_EQ(testing::read_all_bytes(dir / "noise.sqlite"), noise);
  // Someone else's SQLite database: invalid_argument, its table untouched.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "foreign.sqlite").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE mine(x); INSERT INTO mine VALUES (1);", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  opened = store::statistics_store::open(dir / "foreign.sqlite", "/t");
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error_status().code(), error_code::invalid_argument);
  EXPECT_NE(opened.error_status().message().find("not a trialstat store"), std::string::npos);
  // A newer schema: left alone.
  ASSERT_TRUE(store::statistics_store::open(dir / "newer.sqlite", "/t"));
  ASSERT_EQ(sqlite3_open((dir / "newer.sqlite").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  opened = store::statistics_store::open(dir / "newer.sqlite", "/t");
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error_status().message().find("newer"), std::string::npos);
  // Another trial's store.
  ASSERT_TRUE(store::statistics_store::open(dir / "a.sqlite", "/trials/a"));
  opened = store::statistics_store::open(dir / "a.sqlite", "/trials/b");
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error_status().message().find("/trials/a"), std::string::npos);
  // A folder that cannot be made (a file in the way).
  testing::write_bytes(dir / "file", bytes_of("x"));
  opened = store::statistics_store::open(dir / "file" / "s.sqlite", "/t");
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error_status().code(), error_code::io_error);
}

TEST(StoreDatabase, AFullStoreWritesNothingOfTheBatch) {
  const fs::path dir = scratch("full");
  auto db = store::statistics_store::open(dir / "s.sqlite", "/t", /*max_bytes=*/64 << 10);
  ASSERT_TRUE(db);
  std::vector<store::stored_row> rows;
  const std::string payload(1000, 'x');
  for (int i = 0; i < 200; ++i) rows.push_back(make_row(fmt::format("t{}", i), i, payload));
  const status written = db->write_rows(rows);
  EXPECT_EQ(written.code(), error_code::io_error);
  EXPECT_NE(written.message().find("full"), std::string::npos) << written.message();
  auto info = db->info();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->rows, 0);  // all or none
  ASSERT_TRUE(db->write_rows(std::span(rows).first(5)).ok());  // a smaller batch still fits
}

TEST(StoreDatabase, ADamagedRowIsNeverRead) {
  const fs::path dir = scratch("damaged");
  {
    auto db = store::statistics_store::open(dir / "s.sqlite", "/t");
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->write_rows(std::vector<store::stored_row>{make_row("a", 0, "good"), make_row("b", 0, "gone")}).ok());
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "s.sqlite").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE records SET record = X'676F6E66' WHERE tensor = 'b'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  auto db = store::statistics_store::open(dir / "s.sqlite", "/t");
  ASSERT_TRUE(db);
  std::vector<std::string> seen;
  int64_t damaged = 0;
  ASSERT_TRUE(db->read_rows(0, 0, [&](store::stored_row&& r) { seen.push_back(r.tensor); }, &damaged).ok());
  EXPECT_EQ(seen, std::vector<std::string>{"a"});
  EXPECT_EQ(damaged, 1);
}

// --- bundles of small records (schema version 3) ---------------------------------------------

store::row_view view_of(const store::stored_row& r) {
  return store::row_view{r.tensor, r.step, r.worker, r.request, r.mode, r.mode_step, r.identity.event_file,
                         r.identity.ranges, r.identity.file_size_bytes, r.identity.file_version,
                         r.identity.previous, r.record};
}

TEST(StoreBundle, EncodesEveryFieldAndRejectsMalformedBlobs) {
  std::vector<store::stored_row> rows{make_row("bias", 7, "b\0x"), make_row("loss", 7, ""),
                                      make_row("grad/with a longer name", 7, std::string(300, 'g'))};
  rows[0].mode = 2;
  rows[0].mode_step = 3;
  rows[1].identity = {"events/y.tfevents", "10+4;20+6", 1ull << 40, "\"etag-1\"", "5:00000000000000ab|0:1"};
  std::vector<store::row_view> views;
  for (const auto& r : rows) views.push_back(view_of(r));
  std::vector<std::byte> blob;
  store::detail::encode_bundle(views, blob);
  std::vector<store::row_view> back;
  ASSERT_TRUE(store::detail::decode_bundle(blob, 7, "worker_0", "s1;cpu;m1", back));
  ASSERT_EQ(back.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const store::row_view& v = back[i];
    EXPECT_EQ(v.tensor, rows[i].tensor);
    EXPECT_EQ(v.step, 7);
    EXPECT_EQ(v.worker, "worker_0");
    EXPECT_EQ(v.request, "s1;cpu;m1");
    EXPECT_EQ(v.mode, rows[i].mode);
    EXPECT_EQ(v.mode_step, rows[i].mode_step);
    EXPECT_EQ(v.event_file, rows[i].identity.event_file);
    EXPECT_EQ(v.ranges, rows[i].identity.ranges);
    EXPECT_EQ(v.file_size_bytes, rows[i].identity.file_size_bytes);
    EXPECT_EQ(v.file_version, rows[i].identity.file_version);
    EXPECT_EQ(v.previous, rows[i].identity.previous);
    EXPECT_TRUE(std::equal(v.record.begin(), v.record.end(), rows[i].record.begin(), rows[i].record.end()));
  }
  // Cut short anywhere, one byte too many, another format: no row, and `back` as it was.
  for (std::size_t cut = 0; cut < blob.size(); ++cut) {
    std::vector<store::row_view> none{views[0]};
    EXPECT_FALSE(store::detail::decode_bundle(std::span(blob).first(cut), 7, "w", "r", none)) << cut;
    EXPECT_EQ(none.size(), 1u);
  }
  std::vector<std::byte> longer = blob;
  longer.push_back(std::byte{0});
  EXPECT_FALSE(store::detail::decode_bundle(longer, 7, "w", "r", back));
  std::vector<std::byte> other = blob;
  other[0] = std::byte{store::detail::bundle_format + 1};
  EXPECT_FALSE(store::detail::decode_bundle(other, 7, "w", "r", back));
  // An empty bundle is well formed.
  store::detail::encode_bundle({}, blob);
  back.clear();
  EXPECT_TRUE(store::detail::decode_bundle(blob, 0, "w", "r", back));
  EXPECT_TRUE(back.empty());
}

TEST(StoreBundle, MergeKeepsTheOtherTensorsAndTheLaterRowOfOne) {
  const std::vector<store::stored_row> held{make_row("a", 1, "a-old"), make_row("b", 1, "b-old")};
  const std::vector<store::stored_row> fresh{make_row("b", 1, "b-first"), make_row("c", 1, "c"),
                                             make_row("b", 1, "b-later")};
  std::vector<store::row_view> h;
  std::vector<store::row_view> f;
  for (const auto& r : held) h.push_back(view_of(r));
  for (const auto& r : fresh) f.push_back(view_of(r));
  std::vector<store::row_view> merged;
  store::detail::merge_bundle_rows(h, f, merged);
  std::map<std::string, std::string> got;
  for (const auto& v : merged) {
    EXPECT_TRUE(got.emplace(std::string(v.tensor), std::string(reinterpret_cast<const char*>(v.record.data()),
                                                                v.record.size()))
                    .second)
        << v.tensor;
  }
  EXPECT_EQ(got, (std::map<std::string, std::string>{{"a", "a-old"}, {"b", "b-later"}, {"c", "c"}}));
}

/// A batch's bundled rows go into one bundle per (step, worker, request), merged with the bundle
/// the store holds; `records` gets the other rows alone; all are read back as rows.
TEST(StoreDatabase, WritesBundledRowsIntoTheirBundlesMerged) {
  const fs::path dir = scratch("bundles");
  auto db = store::statistics_store::open(dir / "s.sqlite", "/t");
  ASSERT_TRUE(db) << db.error_status().to_string();
  std::vector<store::stored_row> rows{make_row("weight", 2, "w2"), make_row("bias", 2, "b2"),
                                      make_row("loss", 2, "l2"),   make_row("bias", 4, "b4"),
                                      make_row("loss", 2, "l2-other-request"), make_row("bias", 2, "b2-worker-1")};
  rows[4].request = "s1;cpu;m1;h64";
  rows[5].worker = "worker_1";
  store::row_batch batch;
  for (std::size_t i = 0; i < rows.size(); ++i) batch.add(view_of(rows[i]), {}, /*bundled=*/i != 0);
  ASSERT_TRUE(db->write_rows(batch).ok());
  const auto read_all = [&] {
    std::map<std::tuple<int64_t, std::string, std::string, std::string>, std::string> got;
    int64_t damaged = 0;
    EXPECT_TRUE(db->read_rows(0, 10, [&](store::stored_row&& r) {
                    EXPECT_TRUE(got.emplace(std::tuple{r.step, r.worker, r.request, r.tensor},
                                            std::string(reinterpret_cast<const char*>(r.record.data()), r.record.size()))
                                    .second);
                    EXPECT_EQ(r.identity, rows[0].identity);
                  }, &damaged).ok());
    EXPECT_EQ(damaged, 0);
    return got;
  };
  auto got = read_all();
  ASSERT_EQ(got.size(), rows.size());
  for (const auto& r : rows) {
    EXPECT_EQ((got[std::tuple{r.step, r.worker, r.request, r.tensor}]),
              std::string(reinterpret_cast<const char*>(r.record.data()), r.record.size()));
  }
  auto info = db->info();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->rows, 1);  // the weight
  EXPECT_EQ(info->bundles, 4);  // (2, worker_0, m1), (4, worker_0, m1), (2, worker_0, m1;h64), (2, worker_1, m1)
  EXPECT_EQ(info->bundled_rows, 5);
  EXPECT_EQ(info->version, store::schema_version);
  // A second batch: the bias at 2 replaced, a new tensor added, the loss at 2 kept.
  batch.clear();
  const std::vector<store::stored_row> more{make_row("bias", 2, "b2-new"), make_row("grad", 2, "g2")};
  for (const auto& r : more) batch.add(view_of(r), {}, true);
  ASSERT_TRUE(db->write_rows(batch).ok());
  got = read_all();
  EXPECT_EQ(got.size(), rows.size() + 1);
  EXPECT_EQ((got[std::tuple{int64_t{2}, std::string("worker_0"), std::string("s1;cpu;m1"), std::string("bias")}]),
            "b2-new");
  EXPECT_EQ((got[std::tuple{int64_t{2}, std::string("worker_0"), std::string("s1;cpu;m1"), std::string("loss")}]), "l2");
  EXPECT_EQ((got[std::tuple{int64_t{2}, std::string("worker_0"), std::string("s1;cpu;m1"), std::string("grad")}]), "g2");
  // The step bounds see bundles too (step 4 has no row of `records`).
  auto bounds = db->step_bounds(0, 100);
  ASSERT_TRUE(bounds && *bounds);
  EXPECT_EQ(**bounds, (std::pair<int64_t, int64_t>{2, 4}));
}

TEST(StoreDatabase, ADamagedBundleIsNeverRead) {
  const fs::path dir = scratch("damaged_bundle");
  {
    auto db = store::statistics_store::open(dir / "s.sqlite", "/t");
    ASSERT_TRUE(db);
    store::row_batch batch;
    const std::vector<store::stored_row> rows{make_row("a", 0, "good"), make_row("b", 1, "gone"),
                                              make_row("c", 1, "gone too")};
    for (const auto& r : rows) batch.add(view_of(r), {}, true);
    ASSERT_TRUE(db->write_rows(batch).ok());
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "s.sqlite").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE record_bundles SET bundle = X'01020000' WHERE step = 1", nullptr, nullptr,
                         nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  auto db = store::statistics_store::open(dir / "s.sqlite", "/t");
  ASSERT_TRUE(db);
  std::vector<std::string> seen;
  int64_t damaged = 0;
  ASSERT_TRUE(db->read_rows(0, 1, [&](store::stored_row&& r) { seen.push_back(r.tensor); }, &damaged).ok());
  EXPECT_EQ(seen, std::vector<std::string>{"a"});
  EXPECT_EQ(damaged, 2);  // the bundle's two rows
  // Written over: the damaged bundle is replaced whole by the new rows.
  store::row_batch batch;
  const store::stored_row again = make_row("b", 1, "back");
  batch.add(view_of(again), {}, true);
  ASSERT_TRUE(db->write_rows(batch).ok());
  seen.clear();
  damaged = 0;
  ASSERT_TRUE(db->read_rows(1, 1, [&](store::stored_row&& r) { seen.push_back(r.tensor); }, &damaged).ok());
  EXPECT_EQ(seen, std::vector<std::string>{"b"});
  EXPECT_EQ(damaged, 0);
}

TEST(StoreDatabase, MigratesVersion2AddingBundles) {
  const fs::path dir = scratch("migrate_v2");
  {
    auto db = store::statistics_store::open(dir / "s.sqlite", "/trials/a");
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->write_rows(std::vector<store::stored_row>{make_row("w", 0, "zero")}).ok());
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "s.sqlite").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "DROP TABLE record_bundles; PRAGMA user_version = 2;", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  ASSERT_EQ(table_sql(dir / "s.sqlite", "record_bundles"), "");
  auto db = store::statistics_store::open(dir / "s.sqlite", "/trials/a");
  ASSERT_TRUE(db) << db.error_status().to_string();
  EXPECT_NE(table_sql(dir / "s.sqlite", "record_bundles").find("PRIMARY KEY (step, worker, request)"),
            std::string::npos);
  auto info = db->info();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->version, 3);
  EXPECT_EQ(info->rows, 1);
}

TEST(StoreLocation, AutoIsUnderTheCacheFolderKeyedByTheLocation) {
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg_test_cache", 1);
  auto a = store::resolve_store_path("auto", "/data/trial_a");
  auto b = store::resolve_store_path("", "/data/trial_a/");
  auto c = store::resolve_store_path("auto", "s3://bucket/trial_a");
  ASSERT_TRUE(a && b && c);
  ASSERT_TRUE(*a && *b && *c);
  EXPECT_EQ(**a, **b);
  EXPECT_NE(**a, **c);
  EXPECT_EQ((*a)->parent_path(), fs::path("/tmp/xdg_test_cache/trialstat"));
  EXPECT_EQ((*a)->filename().string().rfind("trial_a-", 0), 0u);
  auto off = store::resolve_store_path("off", "/data/trial_a");
  ASSERT_TRUE(off);
  EXPECT_FALSE(*off);
  ::unsetenv("XDG_CACHE_HOME");
}

// --- the store-backed source against the plain run --------------------------------------------

/// A trial with 2 workers, 8 steps (0, 5, ..., 35), a weight whose pairwise statistics look 2
/// steps back, and a tensor missing at step 15.
fs::path write_trial(const fs::path& root, uint64_t seed) {
  for (int worker = 0; worker < 2; ++worker) {
    auto w = writer::trial_writer::create(root, "worker_" + std::to_string(worker), {.num_workers = 2});
    EXPECT_TRUE(w) << w.error_status().to_string();
    for (int64_t step = 0; step < 8; ++step) {
      EXPECT_TRUE(w->begin_step(step * 5, mode::train, step * 5).ok());
      const std::vector<std::pair<std::string, std::vector<int64_t>>> tensors{
          {"weight", {32, 16}}, {"bias", {16}}, {"loss", {}}, {"grad", {64}}};
      for (std::size_t t = 0; t < tensors.size(); ++t) {
        if (tensors[t].first == "grad" && step == 3) continue;
        int64_t n = 1;
        for (int64_t d : tensors[t].second) n *= d;
        const auto bytes = reference::make_tensor_bytes(dtype::float32, n, reference::data_mode::normal,
                                                        seed + 1009 * static_cast<uint64_t>(step) + 31 * t + worker);
        EXPECT_TRUE(w->add_tensor(tensors[t].first, tensor_view{bytes.data(), dtype::float32, tensors[t].second, n}).ok());
      }
      EXPECT_TRUE(w->end_step().ok());
    }
    EXPECT_TRUE(w->close(true).ok());
  }
  return root;
}

plan::read_plan full_plan(const trial::catalog& trial) {
  plan::read_plan plan;
  for (trial::tensor_id t = 0; t < trial.tensor_names().size(); ++t) {
    stats::statistics_request r;
    r.histogram_bins = 16;
    r.log_histogram = true;
    if (trial.tensor_names()[t] == "weight") {
      r.history_depth = 2;
      r.allclose = {{1e-5, 1e-8, false}, {0.1, 0.0, true}};
    }
    if (trial.tensor_names()[t] == "grad") r.percentiles = {50.0, 99.0};
    plan.request(t, r);
  }
  return plan;
}

/// Every record of a run, as the record codec writes it, one string per step.
std::vector<std::string> run_bytes(const pipeline::statistics_source& source, const trial::catalog& trial,
                                   const plan::read_plan& plan, pipeline::pipeline_options options = {}) {
  std::vector<std::string> out;
  auto counters = pipeline::run_statistics_from(source, trial, plan, options, [&](const stats::step_statistics& step) {
    std::vector<std::byte> bytes;
    for (const auto& r : step.records) stats::append_record(r, bytes);
    out.emplace_back(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    out.back() += "|" + std::to_string(step.step) + "|" + std::to_string(step.records.size());
  });
  EXPECT_TRUE(counters) << counters.error_status().to_string();
  return out;
}

/// A trial written under dir/trial (write_trial with `seed`) and opened, with its full plan and
/// the records of a plain run (no store); `trial` holds the error when it did not open.
struct written_trial {
  fs::path root;
  decltype(trial::catalog::open(std::string())) trial;
  plan::read_plan plan;
  std::vector<std::string> plain;
};

written_trial open_written_trial(const fs::path& dir, uint64_t seed) {
  const fs::path root = write_trial(dir / "trial", seed);
  written_trial w{root, trial::catalog::open(root.string()), {}, {}};
  if (w.trial) {
    w.plan = full_plan(*w.trial);
    w.plain = run_bytes({}, *w.trial, w.plan);
  }
  return w;
}

/// Cold, warm, step ranges, a changed file and a corrupt record, against the plain run, with
/// rows for records of at least `min_record_bytes` and bundles for the smaller ones.
void check_cold_warm_and_changed(int64_t min_record_bytes, const std::string& name) {
  const fs::path dir = scratch(name);
  written_trial written = open_written_trial(dir, 99);
  ASSERT_TRUE(written.trial) << written.trial.error_status().to_string();
  const auto& [root, trial, plan, plain] = written;
  ASSERT_EQ(plain.size(), 8u);
  std::vector<std::string> warnings;
  const auto make = [&] {
    return std::make_unique<store::store_source>(store::store_source_options{
        .path = dir / "s.sqlite",
        .warn = [&](const status& s) { warnings.push_back(s.to_string()); },
        .min_record_bytes = min_record_bytes});
  };
  {
    auto cold = make();
    EXPECT_EQ(run_bytes(cold->source(), *trial, plan), plain);
    EXPECT_EQ(cold->summary().served, 0);
    EXPECT_EQ(cold->summary().small, 0);  // every event file holds a weight the store keeps
    EXPECT_GT(cold->summary().written, 50);
  }
  {
    auto db = store::statistics_store::open_existing(dir / "s.sqlite");
    ASSERT_TRUE(db) << db.error_status().to_string();
    auto info = db->info();
    ASSERT_TRUE(info);
    if (min_record_bytes == 0) {
      EXPECT_EQ(info->rows, 62);
      EXPECT_EQ(info->bundles, 0);
    } else {  // the 2 KiB weights as rows; bias and loss in one bundle per step and worker, grad
              // (another request: percentiles) in one of its own, but at step 15
      EXPECT_EQ(info->rows, 16);
      EXPECT_EQ(info->bundles, 16 + 14);
      EXPECT_EQ(info->bundled_rows, 62 - 16);
    }
  }
  {
    auto warm = make();
    EXPECT_EQ(run_bytes(warm->source(), *trial, plan), plain);
    EXPECT_EQ(warm->summary().read, 0);
    EXPECT_EQ(warm->summary().bytes_read, 0);
    EXPECT_EQ(warm->summary().served, 62);  // 2 workers x 4 tensors x 8 steps, no grad at step 15
  }
  // A later step range: comparisons with steps before it are dropped, as the plain run does.
  for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{10, 30}, {20, 21}, {35, 40}}) {
    pipeline::pipeline_options range;
    range.step_begin = begin;
    range.step_end = end;
    auto warm = make();
    EXPECT_EQ(run_bytes(warm->source(), *trial, plan, range), run_bytes({}, *trial, plan, range)) << begin;
    EXPECT_EQ(warm->summary().read, 0) << begin;
  }
  // Worker 0's file of step 15 changes (same bytes, a new mtime): its records are read again;
  // the weight's rows at 20 and 25 compared with it (depth 2) and are read too, the rows from 30
  // on are served again (step 15 is predicted to enter the history, and does); the weight at 5
  // and 10 is read for the history the first read compares with.
  const fs::path changed = root / "events" / "000000000015" / "000000000015_worker_0.tfevents";
  ASSERT_TRUE(fs::exists(changed));
  fs::last_write_time(changed, fs::last_write_time(changed) + std::chrono::seconds(5));
  {
    auto after = make();
    EXPECT_EQ(run_bytes(after->source(), *trial, plan), plain);
    EXPECT_EQ(after->summary().stale, 3 + 2);      // weight, bias, loss at 15 (no grad); weight at 20, 25
    EXPECT_EQ(after->summary().history_reads, 2);  // the weight at steps 5 and 10
    EXPECT_EQ(after->summary().read, 3 + 2);
    EXPECT_EQ(after->summary().restarts, 0);
    EXPECT_GT(after->summary().bytes_read, 0);
  }
  {
    auto warm = make();
    EXPECT_EQ(run_bytes(warm->source(), *trial, plan), plain);
    EXPECT_EQ(warm->summary().read, 0);
  }
  // Now the weight's record at step 15 is corrupt (same size): predicted to enter the history,
  // it fails, so the rows from 20 on (which compared with it) cannot be used: the run finishes
  // without the store, and its records are still the plain run's.
  const trial::tensor_entry* weight =
      trial->find_entry(*trial->find_tensor("weight"), 15, *trial->find_worker("worker_0"));
  ASSERT_TRUE(weight != nullptr && weight->raw);
  auto bytes = testing::read_all_bytes(changed);
  bytes[weight->raw->start_bytes + weight->raw->length_bytes - 12] ^= std::byte{0x5a};
  testing::write_bytes(changed, bytes);
  fs::last_write_time(changed, fs::last_write_time(changed) + std::chrono::seconds(10));
  const auto corrupt_plain = run_bytes({}, *trial, plan);
  ASSERT_NE(corrupt_plain, plain);
  {
    auto after = make();
    EXPECT_EQ(run_bytes(after->source(), *trial, plan), corrupt_plain);
    EXPECT_EQ(after->summary().restarts, 1);
  }
  {
    auto again = make();
    EXPECT_EQ(run_bytes(again->source(), *trial, plan), corrupt_plain);
  }
  EXPECT_TRUE(warnings.empty()) << warnings.front();
}

TEST(StoreSource, ColdWarmAndChangedFilesGiveThePlainRecords) {
  check_cold_warm_and_changed(0, "source");  // these tensors are small: store them all as rows
}

/// The same with the 2 KiB weights as rows and the records under 1 KiB (bias, loss, grad) in
/// bundles: every expectation holds as with rows alone.
TEST(StoreSource, SmallRecordsInBundlesGiveThePlainRecords) { check_cold_warm_and_changed(1024, "source_bundles"); }

/// Records under the bound in event files without a larger record are read, never stored.
TEST(StoreSource, SmallRecordsAloneInTheirFilesAreReadNotStored) {
  const fs::path dir = scratch("small_alone");
  written_trial written = open_written_trial(dir, 5);
  ASSERT_TRUE(written.trial) << written.trial.error_status().to_string();
  const auto& [root, trial, plan, plain] = written;
  const auto make = [&] {
    return std::make_unique<store::store_source>(
        store::store_source_options{.path = dir / "s.sqlite", .min_record_bytes = 4096});  // above the weight
  };
  (void)run_bytes(make()->source(), *trial, plan);
  auto warm = make();
  EXPECT_EQ(run_bytes(warm->source(), *trial, plan), plain);
  EXPECT_EQ(warm->summary().served, 0);
  EXPECT_EQ(warm->summary().read, 62);
  EXPECT_GT(warm->summary().small, 0);
  auto db = store::statistics_store::open_existing(dir / "s.sqlite");
  ASSERT_TRUE(db) << db.error_status().to_string();
  auto info = db->info();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->rows, 0);
  EXPECT_EQ(info->bundled_rows, 0);
}

/// A row whose blob passes its checksum but does not decode (written so, e.g. by another build
/// under the same signature): decoded only when its step is emitted, it restarts the run there
/// without the store, and the records are still the plain run's.
TEST(StoreSource, ABlobThatDoesNotDecodeRestartsAtItsStep) {
  const fs::path dir = scratch("undecodable");
  written_trial written = open_written_trial(dir, 7);
  ASSERT_TRUE(written.trial) << written.trial.error_status().to_string();
  const auto& [root, trial, plan, plain] = written;
  const auto make = [&] {
    return std::make_unique<store::store_source>(
        store::store_source_options{.path = dir / "s.sqlite", .min_record_bytes = 0});
  };
  (void)run_bytes(make()->source(), *trial, plan);  // cold: every row written
  {
    auto db = store::statistics_store::open(dir / "s.sqlite", store::canonical_location(trial->location()));
    ASSERT_TRUE(db) << db.error_status().to_string();
    std::vector<store::stored_row> changed;
    ASSERT_TRUE(db->read_rows(20, 20, [&](store::stored_row&& row) {
                    if (row.tensor != "bias") return;  // no pairwise history: decoded when emitted
                    std::vector<std::byte> raw(row.record.size() / 2 + 1, std::byte{0x7f});
                    row.record = store::pack_record(raw);
                    changed.push_back(std::move(row));
                  }).ok());
    ASSERT_EQ(changed.size(), 2u);  // two workers
    ASSERT_TRUE(db->write_rows(changed).ok());
  }
  auto warm = make();
  EXPECT_EQ(run_bytes(warm->source(), *trial, plan), plain);
  EXPECT_EQ(warm->summary().restarts, 1);
  EXPECT_EQ(warm->summary().stale, 1);
  EXPECT_GT(warm->summary().bytes_read, 0);
  // The restarted run replaced the rows it read: the next run is served whole.
  auto again = make();
  EXPECT_EQ(run_bytes(again->source(), *trial, plan), plain);
  EXPECT_EQ(again->summary().restarts, 0);
  EXPECT_EQ(again->summary().read, 0);
}

/// Every row once, whether read on one thread or split between two (each with a connection of
/// its own), for the whole store and for a range of steps.
TEST(StoreRowReader, TwoThreadsReadEveryRowOnce) {
  const fs::path dir = scratch("reader");
  const fs::path root = write_trial(dir / "trial", 5);
  auto trial = trial::catalog::open(root.string());
  ASSERT_TRUE(trial) << trial.error_status().to_string();
  const plan::read_plan plan = full_plan(*trial);
  {
    store::store_source cold(store::store_source_options{.path = dir / "s.sqlite", .min_record_bytes = 0});
    (void)run_bytes(cold.source(), *trial, plan);
  }
  auto db = store::statistics_store::open(dir / "s.sqlite", store::canonical_location(trial->location()));
  ASSERT_TRUE(db) << db.error_status().to_string();
  using row_text = std::tuple<int64_t, std::string, std::string, std::string, std::string>;
  const auto text_of = [](const store::row_view& v) {
    return row_text{v.step, std::string(v.tensor), std::string(v.worker), std::string(v.previous),
                    std::string(reinterpret_cast<const char*>(v.record.data()), v.record.size())};
  };
  for (const auto& [first, last] : {std::pair<int64_t, int64_t>{INT64_MIN, INT64_MAX}, {10, 30}}) {
    std::vector<row_text> expected;
    ASSERT_TRUE(db->read_row_views(first, last, [&](const store::row_view& v) { expected.push_back(text_of(v)); }).ok());
    ASSERT_GT(expected.size(), 20u);
    for (const uint64_t parallel_min_bytes : {uint64_t{0}, UINT64_MAX}) {
      const auto read = store::detail::read_store_rows(*db, dir / "s.sqlite", first, last, parallel_min_bytes);
      ASSERT_TRUE(read.error.ok()) << read.error.to_string();
      EXPECT_EQ(read.arenas.size(), parallel_min_bytes == 0 ? 2u : 1u);
      std::vector<row_text> got;
      for (const auto& arena : read.arenas) {
        EXPECT_GT(arena.size(), 0u);
        for (std::size_t i = 0; i < arena.size(); ++i) got.push_back(text_of(arena.view(i)));
      }
      EXPECT_EQ(got, expected) << first << " " << parallel_min_bytes;
      EXPECT_EQ(read.damaged, 0);
    }
  }
}

/// Rows read ahead (before the catalog is opened) serve the run that matches them; a prefetch
/// for another trial, a narrower step range or an unopenable store changes nothing in the records.
TEST(StoreSource, PrefetchedRowsServeTheRunTheyMatch) {
  const fs::path dir = scratch("prefetch");
  written_trial written = open_written_trial(dir, 11);
  ASSERT_TRUE(written.trial) << written.trial.error_status().to_string();
  const auto& [root, trial, plan, plain] = written;
  std::vector<std::string> warnings;
  const auto make = [&](const fs::path& path) {
    return std::make_unique<store::store_source>(store::store_source_options{
        .path = path, .warn = [&](const status& s) { warnings.push_back(s.to_string()); }, .min_record_bytes = 0});
  };
  {
    auto cold = make(dir / "s.sqlite");
    cold->prefetch(root.string());  // a new store: no rows yet
    EXPECT_EQ(run_bytes(cold->source(), *trial, plan), plain);
    EXPECT_GT(cold->summary().written, 50);
  }
  {
    auto warm = make(dir / "s.sqlite");
    warm->prefetch((root / "." / "").string());  // the same trial, spelt otherwise
    EXPECT_EQ(run_bytes(warm->source(), *trial, plan), plain);
    EXPECT_EQ(warm->summary().served, 62);
    EXPECT_EQ(warm->summary().bytes_read, 0);
    EXPECT_EQ(run_bytes(warm->source(), *trial, plan), plain);  // a second run reads its own rows
    EXPECT_EQ(warm->summary().served, 2 * 62);
  }
  {
    auto narrower = make(dir / "s.sqlite");
    narrower->prefetch(root.string(), 20, 30);
    EXPECT_EQ(run_bytes(narrower->source(), *trial, plan), plain);
    EXPECT_EQ(narrower->summary().served, 62);
  }
  {
    auto elsewhere = make(dir / "s.sqlite");
    elsewhere->prefetch((dir / "another").string());  // a store made for another trial: not taken
    EXPECT_EQ(run_bytes(elsewhere->source(), *trial, plan), plain);
    EXPECT_EQ(elsewhere->summary().served, 62);
  }
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  {
    testing::write_bytes(dir / "corrupt.sqlite", std::vector<std::byte>(8192, std::byte{0x5a}));
    auto corrupt = make(dir / "corrupt.sqlite");
    corrupt->prefetch(root.string());
    EXPECT_EQ(run_bytes(corrupt->source(), *trial, plan), plain);
    EXPECT_EQ(corrupt->summary().served, 0);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings.front().find("the trial is read instead"), std::string::npos) << warnings.front();
  }
}

}  // namespace
}  // namespace trialstat
