// SPDX-License-Identifier: Apache-2.0
/// @file capture_writer.hpp
/// @brief The write path of a training-side capture hook (issue 22, `trialstat.torch.Hook`): an
/// asynchronous writer. The training thread only enqueues commands — tensor bytes are copied
/// once into a queue-owned buffer — and one background thread applies them in FIFO order to a
/// `writer::trial_writer` (the smdebug trial, byte-compatible, FORMAT §1–§8) and to the
/// TensorBoard files of HOOK_API §8.2 / FORMAT §10. Source: smdebug/core/hook.py (writer and TB
/// helpers), core/writer.py FileWriter, core/tfevent/{event_file_writer,summary}.py.
///
/// Which records to write, their names and collection membership are the caller's decisions
/// (the hook's save configs, HOOK_API §3–§6); this writer only makes them durable off the
/// training thread.
///
/// Queue: bounded by the payload bytes of queued tensors (`capture_options::queue_bytes`).
/// When a tensor does not fit, the caller blocks until the writer thread frees space, or — with
/// `drop_when_full` — the tensor is dropped and counted. A tensor larger than the whole queue is
/// accepted when the queue is empty (it then holds the queue alone), so nothing deadlocks.
///
/// Errors: calls return `invalid_argument` synchronously for unusable input (bad dtype, shape
/// and size disagreeing, commands out of order, a closed writer). Write failures on the thread
/// (disk full, unwritable folder) never throw and never stop the thread: each is recorded as a
/// message naming the file, tensor and step (`take_errors`); the rest of that step's records are
/// skipped and counted as lost — one error per step, not one per record — and the next step is
/// tried again normally. Likewise per TensorBoard file.
///
/// Example (the pattern of tests/capture/capture_writer_test.cpp, `RoundTripEveryDtype`):
/// @code
///   auto w = capture_writer::start({.out_dir = root, .worker = "worker_0"}).value();
///   TRIALSTAT_RETURN_IF_ERROR(w->set_collections(specs));
///   TRIALSTAT_RETURN_IF_ERROR(w->begin_step(/*global*/ 0, mode::train, /*mode_step*/ 0));
///   auto queued = w->add_tensor("Net_fc1.weight", weight_view, wall_time);  // copies, returns
///   TRIALSTAT_RETURN_IF_ERROR(w->end_step());
///   w->close(/*write_end_marker=*/true);  // drains the queue, joins the thread
///   for (const auto& message : w->take_errors()) log(message);
/// @endcode
///
/// Threads: commands are meant for ONE producer thread (the training thread); their order is the
/// order of the files. Every member takes an internal mutex, so `close`, `flush`, `counters` and
/// `take_errors` may also be called from another thread (e.g. an atexit handler) while the
/// producer is blocked on a full queue: it then wakes and gets `invalid_argument` ("closed").
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trialstat/mode.hpp"
#include "trialstat/status.hpp"
#include "trialstat/tensor_view.hpp"
#include "trialstat/writer/trial_writer.hpp"

namespace trialstat::capture {

/// @brief Options for `capture_writer::start`.
struct capture_options {
  /// Trial root (local path), created by the writer thread when it first writes. Failures to
  /// create it are write errors (`take_errors`), naming the path.
  std::filesystem::path out_dir;
  /// File-name part of every trial file, e.g. "worker_0" (non-empty, no '/', no NUL).
  std::string worker;
  /// `_meta.num_workers` of the collections file (>= 1).
  int num_workers = 1;
  /// Bound on the payload bytes of queued tensors (`add_tensor`, `add_tensorboard_histogram`),
  /// counted from enqueue until the writer thread has written them.
  std::size_t queue_bytes = std::size_t{256} << 20;
  /// When a tensor does not fit: false → the caller blocks until it fits; true → the tensor is
  /// dropped (`add_tensor` returns false, `tensors_dropped` counts it).
  bool drop_when_full = false;
  /// TensorBoard root (HOOK_API §8.2); nullopt → no TensorBoard output (the add_tensorboard_*
  /// calls then return invalid_argument).
  std::optional<std::filesystem::path> tensorboard_dir;
  /// TB file names are `<tensorboard_dir>/<MODE>/<S12>_<suffix>.tfevents`; smdebug's suffix is
  /// "<pid>_<hostname>". Empty → that default for this process (`default_tensorboard_file_suffix`).
  std::string tensorboard_file_suffix;
};

/// @brief What the writer did so far. "Tensors" are the payload-carrying commands:
/// `add_tensor` records and `add_tensorboard_histogram` histograms.
struct capture_counters {
  uint64_t tensors_queued = 0;   ///< accepted into the queue
  uint64_t tensors_written = 0;  ///< in a published file (step finished / TB file closed)
  uint64_t tensors_dropped = 0;  ///< refused because the queue was full (`drop_when_full`)
  uint64_t tensors_lost = 0;     ///< accepted but not published: a write failure in their step/file
  uint64_t bytes_written = 0;    ///< payload (element) bytes of `tensors_written`
  uint64_t queue_bytes_now = 0;  ///< payload bytes queued or being written now
  uint64_t queue_bytes_peak = 0; ///< maximum of `queue_bytes_now` so far
  uint64_t errors_count = 0;     ///< write errors recorded (also those no longer kept as text)
};

/// @brief Asynchronous smdebug trial + TensorBoard writer for one worker. Not copyable or
/// movable; owned through the `unique_ptr` from `start`.
class capture_writer {
 public:
  /// @brief Validate `options` and start the writer thread. Writes nothing yet: the trial
  /// folder is created by the first command that writes (a step, the collections file, close).
  /// @return the writer; invalid_argument (empty out_dir, bad worker name, num_workers < 1);
  ///   out_of_memory / io_error if the thread cannot start.
  [[nodiscard]] static result<std::unique_ptr<capture_writer>> start(capture_options options);

  /// @brief Without `close`: stops the thread without writing what is still queued, abandons an
  /// open step and unclosed TensorBoard files (their `.tmp` files are deleted) and writes no end
  /// marker — like a training process that exits without `hook.close()`. Does not wait for a
  /// full queue to drain; waits only for the one command being applied.
  ~capture_writer();
  capture_writer(const capture_writer&) = delete;
  capture_writer& operator=(const capture_writer&) = delete;

  /// @brief Start global step `global_step` (files use it; `m`/`mode_step` go into each record's
  /// plugin data and the index `meta`, FORMAT §5). Enqueues and returns.
  /// @return invalid_argument: a step is open, `global_step` <= the previous step's, a negative
  ///   global step, `mode_step` < −1, `m` not 1..4, closed writer.
  [[nodiscard]] status begin_step(int64_t global_step, trialstat::mode m, int64_t mode_step);

  /// @brief Stamp the open step's later records with `m`/`mode_step` (smdebug after a mid-step
  /// `set_mode`, HOOK_API §6.2); the index `meta` keeps `begin_step`'s. See
  /// `trial_writer::set_record_mode`.
  /// @return invalid_argument: no open step, `m` not 1..4, `mode_step` < −1, closed writer.
  [[nodiscard]] status set_record_mode(trialstat::mode m, int64_t mode_step);

  /// @brief Queue one raw tensor record of the open step. The element bytes are copied once,
  /// before this returns (the caller's memory may change right after); blocks while the queue
  /// is full unless `drop_when_full`.
  /// @param name         tensor name (Summary.Value.tag), non-empty
  /// @param host_tensor  dense C-order host memory (`memory_kind` host or host_pinned); any
  ///                     fixed-size dtype (bfloat16 too); 0-d = shape {} with one element;
  ///                     `num_elements` must equal the product of `shape`
  /// @param wall_time    Event.wall_time, seconds since the epoch
  /// @return true if queued, false if dropped (queue full with `drop_when_full`, or the writer
  ///   was closed from another thread during the copy); invalid_argument (no open step, bad
  ///   name/shape/dtype/memory kind, closed writer); out_of_memory (the copy buffer).
  [[nodiscard]] result<bool> add_tensor(std::string_view name, const tensor_view& host_tensor,
                                        double wall_time);

  /// @brief Queue a shape-only index entry (`shape_payload`, FORMAT §7) for the open step.
  /// @param shape  [rank] dims >= 0, outermost first
  /// @return invalid_argument: no open step, empty name, negative dim, closed writer.
  [[nodiscard]] status add_shape(std::string_view name, std::span<const int64_t> shape);

  /// @brief Finish the open step: its event file, then its index file, are published (nothing
  /// for a step without records or shapes). @return invalid_argument: no open step, closed.
  [[nodiscard]] status end_step();

  /// @brief Replace the collections written to `collections/000000000/<worker>_collections.json`
  /// by later `write_collections`/`close`. The file lists exactly the `tensor_names` given (no
  /// regex matching: the hook computes membership, HOOK_API §3.4).
  /// @return invalid_argument as `writer::validate_collection_specs`, or a closed writer.
  [[nodiscard]] status set_collections(std::vector<writer::collection_spec> specs);

  /// @brief Queue a write of the collections file (tmp + rename) with the current specs; the
  /// hook decides when (HOOK_API §8.1). No file while no collections were set.
  /// @return invalid_argument: closed writer.
  [[nodiscard]] status write_collections();

  /// @brief Queue a TensorBoard scalar (`simple_value`, float32) for `tensorboard_tag(tag)`,
  /// `Event.step = global_step`, into the open TB file of mode `m` (opened lazily as
  /// `tensorboard_file_path(tb_dir, m, global_step, suffix)` — the step at open names the file,
  /// as smdebug's `_maybe_get_tb_writer`).
  /// @return invalid_argument: no tensorboard_dir, `m` not 1..4, closed writer.
  [[nodiscard]] status add_tensorboard_scalar(std::string_view tag, trialstat::mode m,
                                              int64_t global_step, double value, double wall_time);

  /// @brief Queue a TensorBoard histogram of `host_tensor` (copied once, like `add_tensor`, and
  /// bounded by the same queue). The writer thread computes it with trialstat's CPU
  /// log-histogram and moments code as smdebug's `_make_histogram` on the values as float64:
  /// TensorBoard's 1548 default buckets, trimmed to one empty bin before the first non-empty bin
  /// through the last one; `min`/`max`/`sum`/`sum_squares` over all values (NaN when any value
  /// is NaN, ±Inf propagate as in numpy); `num` = element count. NaN, ±Inf and |x| ≳ 9.9e19 are
  /// in no bucket. No record when no value falls in a bucket (smdebug raises there).
  /// Source: smdebug/core/tfevent/summary.py `_make_histogram`; FORMAT §10.
  /// @param tag  used as `tensorboard_tag(tag)`; smdebug's is "<collection>/<tensor name>"
  /// @return true if queued; false if dropped (queue full with `drop_when_full`) or skipped as
  ///   smdebug skips them: bool and empty tensors; invalid_argument (no tensorboard_dir, complex
  ///   or string dtype, bad shape, closed writer); out_of_memory.
  [[nodiscard]] result<bool> add_tensorboard_histogram(std::string_view tag, trialstat::mode m,
                                                       int64_t global_step,
                                                       const tensor_view& host_tensor,
                                                       double wall_time);

  /// @brief Queue closing (publishing) every open TensorBoard file: smdebug closes them all at
  /// the next step's forward pre-hook and at close (HOOK_API §6.3 A1). The next TB record of a
  /// mode opens a new file. @return invalid_argument: closed writer.
  [[nodiscard]] status close_tensorboard_files();

  /// @brief Block until every command queued before this call has been applied (written or
  /// failed). Returns at once on a closed writer. Does not fsync.
  void flush();

  /// @brief Apply everything queued, finish an open step, write the collections file (if any
  /// collections were set and it is not yet written or they changed since), then — if asked —
  /// the empty `training_job_end.ts`; close TB files; join the thread. Failures go to
  /// `take_errors`. Idempotent; safe from another thread than the producer.
  void close(bool write_end_marker = true);

  /// @brief The error messages recorded since the last call (oldest first). At most 1000 are
  /// kept between calls; a final line says how many more were only counted.
  [[nodiscard]] std::vector<std::string> take_errors();

  /// @brief A consistent snapshot of the counters.
  [[nodiscard]] capture_counters counters() const;

  /// @brief Whether `close` was called (or the writer is being destroyed).
  [[nodiscard]] bool closed() const;

  [[nodiscard]] const capture_options& options() const noexcept;

  /// @brief `<tb_dir>/<MODE>/<S12>_<suffix>.tfevents` (FORMAT §1, HOOK_API §8.2); S12 is
  /// `format(global_step, "012")`.
  [[nodiscard]] static std::filesystem::path tensorboard_file_path(
      const std::filesystem::path& tb_dir, trialstat::mode m, int64_t global_step,
      std::string_view suffix);

  /// @brief "<pid>_<hostname>" of this process (smdebug: `os.getpid()`, `socket.gethostname()`).
  [[nodiscard]] static std::string default_tensorboard_file_suffix();

 private:
  struct state;
  explicit capture_writer(std::unique_ptr<state> s);
  std::unique_ptr<state> state_;
};

}  // namespace trialstat::capture
