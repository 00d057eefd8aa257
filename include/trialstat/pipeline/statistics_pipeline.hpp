// SPDX-License-Identifier: Apache-2.0
/// @file statistics_pipeline.hpp
/// @brief Drives stages 4–5 of DESIGN.md for a read plan: for every saved global step in order,
/// reads the event files of that step once (whole file when most of it is needed, byte ranges
/// otherwise), decodes the requested records, computes their statistics as one segmented batch
/// per event file, and hands the step's records to a callback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trialstat/plan/read_plan.hpp"
#include "trialstat/stats/statistics_record.hpp"
#include "trialstat/progress.hpp"
#include "trialstat/stats/backend.hpp"
#include "trialstat/status.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::pipeline {

/// @brief `--device`: which statistics backend to use.
enum class device_choice : uint8_t {
  automatic,  ///< CUDA when built and a device is visible, else CPU
  cpu,
  cuda,       ///< CUDA or an error (never a silent fallback)
};

/// @brief Parse "auto" / "cpu" / "cuda". Errors: invalid_argument.
[[nodiscard]] result<device_choice> parse_device_choice(std::string_view text);

/// @brief The backend a choice resolves to on this machine, with the reason in words
/// (e.g. "cpu: built without CUDA"). Errors: invalid_argument when `cuda` is asked for and is
/// not built or no device is visible. `TRIALSTAT_FORCE_BACKEND=cpu|cuda` overrides `automatic`.
struct resolved_backend {
  stats::backend backend = stats::backend::cpu;
  std::string reason;
};
[[nodiscard]] result<resolved_backend> resolve_backend(device_choice choice);

/// @brief `--verify-device`: how a CUDA run checks its results against the CPU twin (issue 25).
enum class device_verification : uint8_t {
  off,      ///< no check (benchmarks)
  first,    ///< the first step of the run only; nothing is held back after it
  sampled,  ///< the first step, every `verify_interval`-th, and the last of each `advance`
};

/// @brief Parse "off" / "first" / "sampled". Errors: invalid_argument naming the text.
[[nodiscard]] result<device_verification> parse_device_verification(std::string_view text);

/// @brief Default `pipeline_options::verify_interval` (steps between two checks).
inline constexpr int64_t default_verify_interval = 64;

/// @brief Options of a statistics run.
struct pipeline_options {
  stats::backend backend = stats::backend::cpu;
  /// Event files larger than this are read by byte ranges instead of whole (bytes).
  std::size_t whole_file_limit_bytes = std::size_t{1} << 30;
  /// Whole event files of at least `map_min_bytes` are memory-mapped read-only (the page
  /// cache's pages, no copy: `io::file_reader::map_all`) instead of read into a buffer, when the
  /// executor stages nothing through pinned memory (the CPU backend) and the trial is not read
  /// live (`stop_at_unfinished_records` off: a live file is read with pread). Off: always read.
  /// A file the OS refuses to map (e.g. a file system without mmap) is read instead.
  bool map_event_files = true;
  std::size_t map_min_bytes = std::size_t{256} << 10;
  /// Global steps [step_begin, step_end) to visit, intersected with the plan's range.
  std::optional<int64_t> step_begin;
  std::optional<int64_t> step_end;
  /// Pinned host staging memory of the CUDA backend in bytes (`--pinned-mb`; see
  /// `stats::executor_options::pinned_pool_bytes`), allocated once per stream. Ignored by the CPU.
  std::size_t pinned_pool_bytes = std::size_t{256} << 20;
  /// Live trials (additive, issue 4): before a step is computed, check that every record it
  /// needs lies wholly inside its event file as the file is now; if a file is missing or shorter
  /// than the index says (a record cut short at the tail: still being written, or an index
  /// uploaded before its event file), or a record reads as `truncated_record`, stop *before* that
  /// step — nothing of it is emitted — and report it in `pipeline_counters::unfinished_step`. The
  /// next `advance` retries it. Off (the default), such records fail individually (`raw_status`).
  bool stop_at_unfinished_records = false;
  /// Only these global steps (ascending), intersected with the ranges above; empty = every
  /// step. For a second pass over a few chosen steps (`trialstat report`'s heatmaps).
  std::vector<int64_t> only_steps;
  /// Told about each `advance`: begin(steps to visit, bytes of the records they need), one
  /// advance(1, bytes) per step emitted, end(). Not owned; null = silent (progress.hpp).
  progress_reporter* progress = nullptr;
  /// Verified batches (issue 25): with the CUDA backend, the CPU twin recomputes checked steps
  /// — the first, then (`sampled`) one in every `verify_interval` and the last step of each
  /// `advance` (in a live trial, the last step of every poll) — and compares every record field
  /// by field at result_comparison.hpp's tolerances before anything is emitted. The steps
  /// between two checks are computed on the device and held back (their records, not their
  /// tensors; kept values are copied), and emitted, in order, only when the next check passes;
  /// a check also closes the window whenever the held records reach `verify_held_bytes`. For
  /// pairwise statistics the CPU twin first recomputes the `max_history_depth()` steps before
  /// the check (a check without them — a live poll's last step, a check forced by the held
  /// bytes — compares the pairwise entries the CPU twin could compute). On a difference, or on
  /// a CUDA error (cuda_error, cuda_fatal, out_of_memory from the executor), the run warns
  /// once (`warn`: the statistic, tensor, step, worker and both values, or the CUDA error),
  /// recomputes on the CPU every step held since the last passed check — reading their bytes
  /// again, after the earlier steps each tensor's pairwise history needs — and finishes the run,
  /// and every later `advance` of the stream, on the CPU: the output is then the CPU backend's.
  /// Ignored by the CPU backend, except under the fault-injection test switch
  /// (stats/fault_injection.hpp), where a CPU executor stands in for the device.
  device_verification verify_device = device_verification::sampled;
  /// Steps between two sampled checks (>= 1).
  int64_t verify_interval = default_verify_interval;
  /// Held-back records (bytes, kept values included) that force a check.
  std::size_t verify_held_bytes = std::size_t{64} << 20;
  /// Told the device fallback's warning (one line, once per stream). Empty: printed to
  /// standard error as "trialstat: warning: ...".
  std::function<void(const std::string&)> warn;
  /// Strict reading (`--strict`, issue 12): in a rule session, a rule whose tensors have a record
  /// that cannot be read (`rule_result::skipped`) ends Error at once instead of concluding
  /// without it. Off: the record is reported as skipped and the rule goes on.
  bool strict = false;
  /// Which entries of the plan's tensors to read (the statistics store, issue 26: the entries
  /// whose statistics it does not hold). An entry it rejects is not read and gets no record;
  /// empty = every entry. Called on the reader thread (and the read-ahead's), so it must be
  /// thread-safe; it must answer the same for an entry every time.
  std::function<bool(const trial::tensor_entry&)> read_entry;
};

/// @brief Whether a statistics run visits global step `step`: inside both the plan's and the
/// options' [step_begin, step_end) (unset bounds are open).
[[nodiscard]] bool step_in_range(int64_t step, const plan::read_plan& plan,
                                 const pipeline_options& options) noexcept;

/// @brief Counters of one run (for reports and benchmarks).
struct pipeline_counters {
  int64_t steps = 0;              ///< global steps visited
  int64_t records = 0;            ///< statistics records produced
  int64_t failed_records = 0;     ///< records whose raw tensor could not be used (raw_status)
  int64_t bytes_read = 0;         ///< event-file bytes read
  int64_t tensor_bytes = 0;       ///< tensor content bytes reduced
  /// With `pipeline_options::stop_at_unfinished_records`: the step this call stopped before
  /// because a record of it is not fully written yet (retry after the next catalog refresh).
  std::optional<int64_t> unfinished_step;
  status unfinished_reason;       ///< why (names the event file, byte offset and sizes)
  /// Steps of this call whose device results were compared with the CPU twin and agreed
  /// (`pipeline_options::verify_device`); 0 on the CPU backend.
  int64_t verified_steps = 0;
  /// Set when this call left the device for the CPU: the warning's text.
  std::optional<std::string> device_fallback;

  /// @brief Add the counters of a later run over other steps: the counts add up; the unfinished
  /// step and the device fall-back are `later`'s when it has them.
  pipeline_counters& operator+=(const pipeline_counters& later) {
    steps += later.steps;
    records += later.records;
    failed_records += later.failed_records;
    bytes_read += later.bytes_read;
    tensor_bytes += later.tensor_bytes;
    verified_steps += later.verified_steps;
    if (later.unfinished_step) {
      unfinished_step = later.unfinished_step;
      unfinished_reason = later.unfinished_reason;
    }
    if (later.device_fallback) device_fallback = later.device_fallback;
    return *this;
  }
};

/// @brief Called once per saved global step (ascending) with all records of that step.
/// The records are valid only during the call.
using step_callback = std::function<void(const stats::step_statistics&)>;

/// @brief Incremental statistics over a trial that may still be growing (live trials): each
/// `advance` processes, in global-step order, the saved steps after the last one processed, up
/// to the first step that is not complete yet. Pairwise history and the executor persist across
/// calls, so a watcher calls `catalog::refresh()` then `advance()` repeatedly.
///
/// Stages overlap: a reader thread reads and decodes steps k+1, k+2, … (one event-file read per
/// worker) while the executor computes step k; records are emitted in step order. The reader
/// runs up to 8 steps ahead while they hold at most 64 MiB (counting a whole event file for a
/// file of at most 1 MiB or one mostly wanted), else one step (always one with the CUDA
/// backend, whose pinned staging buffers serve two steps). A record whose
/// bytes are corrupt, truncated or of an unsupported dtype has `raw_status` set and no
/// statistics: it costs only itself. Memory: the steps read ahead (two steps' event files, or
/// ≈ 64 MiB of small steps) plus the pairwise history (requested tensors × depth), independent
/// of trial length.
class statistics_stream {
 public:
  /// @param trial   must outlive the stream; may be refreshed between `advance` calls
  /// @param plan    what to compute (copied)
  statistics_stream(const trial::catalog& trial, plan::read_plan plan, pipeline_options options);
  ~statistics_stream();
  statistics_stream(statistics_stream&&) noexcept;
  statistics_stream& operator=(statistics_stream&&) noexcept;

  /// @brief Process new steps. With `include_incomplete`, steps some worker has not written
  /// yet are processed too (use when training has ended: the catalog then reports every step
  /// complete anyway).
  /// @return counters of this call; errors: failures of the whole run (an unusable backend, a
  ///   kernel error); after an error the stream should not be advanced again.
  [[nodiscard]] result<pipeline_counters> advance(const step_callback& on_step,
                                                  bool include_incomplete = false);

  /// @brief Replace the plan from the next `advance` on (live trials: the catalog learned new
  /// tensors or collections, so the rules asked for more). Kept pairwise history of tensors that
  /// stay requested is preserved (it lives in the executor, keyed by tensor and worker).
  void set_plan(plan::read_plan plan);
  /// @brief Continue after global step `step`, whose steps were delivered elsewhere (a watcher's
  /// statistics store served them): the next `advance` starts after it, first reading — not
  /// delivering — the saved steps before its first step that hold the pairwise history that
  /// step's records compare with (`history_depth` saves of each such tensor and worker).
  void resume_after(int64_t step);
  /// @brief Turn `pipeline_options::stop_at_unfinished_records` on or off from the next
  /// `advance` on (a watcher turns it off for its final pass once training has ended).
  void set_stop_at_unfinished_records(bool stop) noexcept;

  /// @brief The last global step processed, or nullopt before the first.
  [[nodiscard]] std::optional<int64_t> last_step() const noexcept;
  [[nodiscard]] const plan::read_plan& plan() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

/// @brief Live trials: whether every record of `info` that `plan` needs (and `options.read_entry`
/// keeps) lies wholly inside its event file as the file is now (what
/// `stop_at_unfinished_records` checks before reading a step). Errors: truncated_record naming
/// the file and step when a file is missing or shorter than its index says.
[[nodiscard]] status step_records_written(const trial::catalog& trial, const plan::read_plan& plan,
                                          const pipeline_options& options, const trial::step_info& info);

/// @brief Compute the statistics `plan` asks for over a whole trial, step by step (one
/// `statistics_stream::advance` over every saved step).
/// @return counters; errors: only failures that stop the whole run (invalid_argument for an
///   unusable backend, kernel errors).
[[nodiscard]] result<pipeline_counters> run_statistics(const trial::catalog& trial,
                                                       const plan::read_plan& plan,
                                                       const pipeline_options& options,
                                                       const step_callback& on_step);

/// @brief Where a one-shot run's statistics come from: `run_statistics` (one process; what an
/// empty source means everywhere it is taken), or e.g. `distributed::run_statistics` (the merged
/// steps of MPI ranks, issue 10). Must call `on_step` for every saved step in range, ascending,
/// as `run_statistics` does (under MPI: on rank 0 only).
using statistics_source = std::function<result<pipeline_counters>(
    const trial::catalog&, const plan::read_plan&, const pipeline_options&, const step_callback&)>;

/// @brief `source(...)`, or `run_statistics(...)` when `source` is empty.
[[nodiscard]] result<pipeline_counters> run_statistics_from(const statistics_source& source,
                                                            const trial::catalog& trial,
                                                            const plan::read_plan& plan,
                                                            const pipeline_options& options,
                                                            const step_callback& on_step);

}  // namespace trialstat::pipeline
