// SPDX-License-Identifier: Apache-2.0
// Reading a store's rows for a run. The range of global steps is split between two threads, each
// with a connection of its own (SQLite readers run side by side under WAL), each into its own
// arena; and the same can start before the trial's catalog is opened (`row_prefetch`), so the
// rows are read while the catalog loads. Internal to host/store.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "host/store/row_arena.hpp"
#include "trialstat/store/statistics_store.hpp"

namespace trialstat::store::detail {

/// The rows read: one arena per part of the step range, in step order.
struct read_rows_outcome {
  std::vector<row_arena> arenas;
  int64_t damaged = 0;  ///< rows skipped: their blob failed its checksum
  status error;         ///< success, or why the rows could not be read (the run reads the trial)
};

/// Stores of at least this many bytes are read by two threads; below, a second connection (about
/// a millisecond to open) costs more than it saves.
inline constexpr uint64_t parallel_read_min_bytes = uint64_t{1} << 20;

/// The rows of global steps [first, last] of `db`, the store at `path`: the lower half of the
/// steps its rows have through `db` on the calling thread, the upper half on a thread with a
/// read-only connection of its own when the file has at least `parallel_min_bytes` and the
/// machine two cores (through `db` after the lower half when that connection cannot be opened).
[[nodiscard]] read_rows_outcome read_store_rows(statistics_store& db, const std::filesystem::path& path, int64_t first,
                                                int64_t last, uint64_t parallel_min_bytes = parallel_read_min_bytes);

/// A thread, started at once, that opens the store at `path` for the trial at `location`
/// (`statistics_store::open`, with `max_store_bytes`) and reads its rows of global steps
/// [first, last] (`read_store_rows`). A run that finds it matching its trial and steps takes the
/// connection and the rows instead of opening and reading them itself.
class row_prefetch {
 public:
  struct outcome {
    std::string location;  ///< canonical_location of the trial it was started for
    int64_t first = 0;
    int64_t last = 0;
    std::optional<result<statistics_store>> db;  ///< set by the thread: the store, or why not
    read_rows_outcome rows;                      ///< when `db` holds a store
  };

  row_prefetch(std::filesystem::path path, std::string location, int64_t max_store_bytes, int64_t first,
               int64_t last);
  ~row_prefetch();
  row_prefetch(const row_prefetch&) = delete;
  row_prefetch& operator=(const row_prefetch&) = delete;

  /// Wait for the thread; what it read (the caller may move out of it).
  outcome& wait();

 private:
  outcome outcome_;
  std::thread thread_;
};

}  // namespace trialstat::store::detail
