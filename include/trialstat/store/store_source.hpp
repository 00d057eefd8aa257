// SPDX-License-Identifier: Apache-2.0
/// @file store_source.hpp
/// @brief A `pipeline::statistics_source` backed by the statistics store (issue 26): records the
/// store holds (valid, for this exact request) are emitted from it; the others are read through
/// the inner source (`pipeline::run_statistics` by default) and written to the store. Each step's
/// records reach the callback in the same order, with the same bytes, as without the store.
///
/// Pairwise statistics (update ratio, allclose against the previous steps of a tensor and
/// worker) depend on the records before: a row is used only when the previous steps it compared
/// with are the ones this run visits (same steps, same record identities). When a record of a
/// (tensor, worker) must be read, the `history_depth` records before it are read too (their
/// stored rows are still what is emitted) so the executor holds the copies it compares with; it
/// is predicted to enter the history, so later rows that compared with its bytes are still
/// served — and if it does not (it no longer decodes), the rest of the run is read without the
/// store (`store_run_summary::restarts`).
///
/// Memory: the rows of the visited steps, packed (a few hundred bytes a record), for the run.
/// They are read by two threads when the store has at least 1 MiB, and can be read ahead of the
/// run (`prefetch`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/status.hpp"

namespace trialstat::store {

/// @brief What one store-backed run did (for `trialstat: store: ...` and the tests).
struct store_run_summary {
  bool used = false;          ///< the store was opened and read
  int64_t served = 0;         ///< records emitted from the store
  int64_t read = 0;           ///< records read from the trial (and emitted)
  int64_t history_reads = 0;  ///< records read only for the pairwise history (the store's emitted)
  int64_t written = 0;        ///< rows written
  int64_t stale = 0;          ///< rows present but no longer describing their record
  int64_t small = 0;          ///< records read: smaller than min_record_bytes, alone in their files
  int64_t restarts = 0;       ///< runs finished without the store (a predicted record failed)
  int64_t bytes_read = 0;     ///< event-file bytes read by this run
};

/// @brief Options of a store-backed source.
struct store_source_options {
  std::filesystem::path path;  ///< the store file (`resolve_store_path`)
  /// Told every problem of the store (the run goes on reading the trial); null = silent. Called
  /// from the calling thread or the source's row-writer thread, never by both at once.
  std::function<void(const status&)> warn;
  /// Rows are committed every this many steps (and at the end): a watcher's rows are visible
  /// to other processes step by step with 1.
  int64_t commit_every_steps = 64;
  /// Off: nothing is served from the store, only rows written (MPI rank 0 behind
  /// `distributed::run_statistics`, whose ranks share out the reading of every record).
  bool serve = true;
  /// > 0: the store file grows to at most this many bytes; past it, rows are no longer written
  /// (a warning, as for a full disk). `TRIALSTAT_STORE_MAX_MB` sets it from the CLI.
  int64_t max_store_bytes = 0;
  /// The backend the records are computed on (live writer only: a one-shot run takes it from
  /// its pipeline options). Part of every row's key.
  stats::backend backend = stats::backend::cpu;
  /// Records whose bytes in the event file (all the records of an entry a request reads) are
  /// fewer than this are *small*: kept in the bundle of their step, worker and request (one
  /// SQLite row for all of them) when their event file holds a record stored as a row, so that a
  /// warm run opens no event file; otherwise neither stored nor served but read from the trial,
  /// which costs less than their rows (a row takes ~3 µs to write and ~2.3 µs to read back and
  /// decode, a 1 KiB record from the page cache ~1.5 µs; bench/RESULTS.md "Statistics store").
  /// < 0: automatic — `TRIALSTAT_STORE_MIN_RECORD_BYTES` when set, else
  /// `default_min_record_bytes` for a local trial and 0 (every record a row) for an S3 trial,
  /// where every record read is network traffic.
  int64_t min_record_bytes = -1;
};

/// @brief The automatic `store_source_options::min_record_bytes` of a local trial (4 KiB): where
/// reading a record from the page cache costs about what its row costs to read back (measured,
/// bench/RESULTS.md "Statistics store", eleventh session).
inline constexpr int64_t default_min_record_bytes = int64_t{4} << 10;

/// @brief `options.min_record_bytes` resolved for `trial` (see there).
[[nodiscard]] int64_t min_record_bytes_for(const store_source_options& options, const trial::catalog& trial);

/// @brief A store-backed statistics source: hand `source()` to a command (it may be called
/// several times; each call is one run) and read `summary()` after it.
class store_source {
 public:
  /// @param inner the source of what the store lacks (empty: `pipeline::run_statistics`)
  store_source(store_source_options options, pipeline::statistics_source inner = {});
  ~store_source();
  store_source(const store_source&) = delete;
  store_source& operator=(const store_source&) = delete;

  /// @brief Start opening the store and reading its rows of global steps [step_begin, step_end)
  /// (unset: open) for the trial at `trial_location` on threads of their own, before the
  /// caller opens the trial's catalog: the rows are read while the catalog loads. The next run
  /// takes them when it is on that trial and within those steps (else it reads its own); a
  /// store that cannot be opened is reported by that run, as without a prefetch. Does nothing
  /// when there is no store file yet (nothing to read; none is created before the trial is
  /// known to open), when `serve` is off, or when a run already opened the store.
  void prefetch(std::string_view trial_location, std::optional<int64_t> step_begin = std::nullopt,
                std::optional<int64_t> step_end = std::nullopt);
  /// @brief The source to pass on (refers to this object: keep it alive while it is used).
  [[nodiscard]] pipeline::statistics_source source();
  /// @brief Totals over every run so far.
  [[nodiscard]] const store_run_summary& summary() const noexcept;
  [[nodiscard]] const std::filesystem::path& path() const noexcept;

  /// @brief One run (what `source()` calls).
  [[nodiscard]] result<pipeline::pipeline_counters> run(const trial::catalog& trial, const plan::read_plan& plan,
                                                        const pipeline::pipeline_options& options,
                                                        const pipeline::step_callback& on_step);

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace trialstat::store
