// SPDX-License-Identifier: Apache-2.0
#include "host/store/row_reader.hpp"

#include <algorithm>
#include <new>
#include <system_error>
#include <utility>

#include <fmt/format.h>

namespace trialstat::store::detail {
namespace {

/// Rows of [first, last] through `db` into `arena`, room reserved for `reserve_bytes`.
status read_part(statistics_store& db, int64_t first, int64_t last, std::size_t reserve_bytes, row_arena& arena,
                 int64_t& damaged) {
  arena.reserve(reserve_bytes);
  return db.read_row_views(first, last, [&arena](const row_view& v) { arena.add(v); }, &damaged);
}

}  // namespace

read_rows_outcome read_store_rows(statistics_store& db, const std::filesystem::path& path, int64_t first,
                                  int64_t last, uint64_t parallel_min_bytes) {
  read_rows_outcome out;
  std::error_code ec;
  const uint64_t file_bytes = std::filesystem::file_size(path, ec);
  // The rows copied are at most the database file: room for them once (address space only).
  const auto reserve = static_cast<std::size_t>(ec ? 0 : std::min<uint64_t>(file_bytes, uint64_t{1} << 30));
  const bool parallel = !ec && file_bytes >= parallel_min_bytes && std::thread::hardware_concurrency() >= 2;
  std::optional<std::pair<int64_t, int64_t>> bounds;
  if (parallel) {
    auto found = db.step_bounds(first, last);
    if (!found) {
      out.error = found.error_status();
      return out;
    }
    bounds = *found;
  }
  if (!bounds || bounds->first == bounds->second) {
    out.arenas.resize(1);
    out.error = read_part(db, first, last, reserve, out.arenas[0], out.damaged);
    return out;
  }
  // Two halves of the steps the rows have (rows are spread about evenly over the steps).
  const int64_t middle = bounds->first + (bounds->second - bounds->first) / 2;
  out.arenas.resize(2);
  int64_t upper_damaged = 0;
  status upper;
  bool upper_read = false;
  std::thread helper;
  try {
    helper = std::thread([&] {
      try {
        auto second = statistics_store::open_existing(path);
        if (!second) return;  // read below through `db`
        upper = read_part(*second, middle + 1, bounds->second, reserve, out.arenas[1], upper_damaged);
        upper_read = true;
      } catch (const std::bad_alloc&) {
        out.arenas[1].clear();  // read below through `db` (and fail there as the caller would)
      }
    });
  } catch (const std::system_error&) {
    // No thread to spare: both halves through `db`.
  }
  out.error = read_part(db, bounds->first, middle, reserve, out.arenas[0], out.damaged);
  if (helper.joinable()) helper.join();
  if (!upper_read) upper = read_part(db, middle + 1, bounds->second, reserve, out.arenas[1], upper_damaged);
  out.damaged += upper_damaged;
  if (out.error.ok()) out.error = upper;
  return out;
}

row_prefetch::row_prefetch(std::filesystem::path path, std::string location, int64_t max_store_bytes, int64_t first,
                           int64_t last) {
  outcome_.location = std::move(location);
  outcome_.first = first;
  outcome_.last = last;
  thread_ = std::thread([this, path = std::move(path), max_store_bytes] {
    try {
      outcome_.db = statistics_store::open(path, outcome_.location, max_store_bytes);
      if (*outcome_.db) outcome_.rows = read_store_rows(**outcome_.db, path, outcome_.first, outcome_.last);
    } catch (const std::bad_alloc&) {
      outcome_.rows = {};
      outcome_.rows.error = status(error_code::out_of_memory,
                                   fmt::format("statistics store {}: no memory for its rows", path.string()));
    }
  });
}

row_prefetch::~row_prefetch() {
  if (thread_.joinable()) thread_.join();
}

row_prefetch::outcome& row_prefetch::wait() {
  if (thread_.joinable()) thread_.join();
  return outcome_;
}

}  // namespace trialstat::store::detail
