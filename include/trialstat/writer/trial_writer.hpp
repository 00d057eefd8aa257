// SPDX-License-Identifier: Apache-2.0
/// @file trial_writer.hpp
/// @brief Writes a genuine smdebug-layout trial (one worker per writer): event files, index
/// files, the collections file and the end marker, byte for byte as smdebug 1.0.34 would for the
/// same tensors and wall times. Source: spec/FORMAT.md §1–§8 (smdebug/core/{writer,locations,
/// index_reader,collection}.py and the PyTorch hook's save path).
///
/// Layout written under `root` (FORMAT §1):
///   events/<S12>/<S12>_<worker>.tfevents              one per step that has tensor records
///   index/<B9>/<S12>_<worker>.json                     one per step with tensors or shapes
///   collections/000000000/<worker>_collections.json    after the first step, again on close
///   training_job_end.ts                                 empty, on close(true)
/// Every file is written to `<final>.tmp` and renamed into place when complete, the event file
/// before the index file, so a concurrent reader never sees a partial file (a live trial).
///
/// Streaming: `add_tensor` appends its record to the open event file at once (through a small
/// write buffer; element bytes of large tensors go straight from the caller's memory to the
/// file), so memory use does not grow with tensor or trial size.
///
/// Example (the pattern of tests/writer/trial_writer_test.cpp, `LayoutAndTotals`):
/// @code
///   auto w = trial_writer::create(root, "worker_0", {.num_workers = 1,
///                                                    .collections = pytorch_default_collections(5)});
///   TRIALSTAT_RETURN_IF_ERROR(w->begin_step(/*global*/ 5, mode::train, /*mode_step*/ 5));
///   TRIALSTAT_RETURN_IF_ERROR(w->add_tensor("MLP_fc1.weight", weight_view));
///   TRIALSTAT_RETURN_IF_ERROR(w->end_step());
///   TRIALSTAT_RETURN_IF_ERROR(w->close(/*write_end_marker=*/true));
/// @endcode
///
/// Not thread-safe: one writer per worker, used from one thread at a time. Several writers
/// (different workers) may write into the same root concurrently.
#pragma once

#include <array>
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
#include "trialstat/writer/event_encoder.hpp"

namespace trialstat::writer {

/// @brief One mode's save settings as the collections file states them (FORMAT §8). The writer
/// does not apply them (the caller decides what to write); they are metadata for readers.
struct save_config_spec {
  int64_t save_interval = 1;
  std::vector<int64_t> save_steps;
  int64_t start_step = 0;
  std::optional<int64_t> end_step;  ///< nullopt → JSON null (no end)
};

/// @brief One collection of the collections file (FORMAT §8), in the JSON's field order.
struct collection_spec {
  std::string name;
  std::vector<std::string> include_regex;  ///< e.g. "^(?!gradient).*weight"
  /// Members listed explicitly. With `writer_options::match_members_by_regex` (the default) the
  /// writer adds every tensor it writes (the base name, for reduction records and shapes too)
  /// whose name matches one of `include_regex` (re.search), as smdebug does; the file lists the
  /// union, sorted and unique. Without it the file lists exactly these names (sorted, unique).
  std::vector<std::string> tensor_names;
  bool save_raw_tensor = true;
  std::string reductions;  ///< comma list as smdebug writes it, e.g. "min,max,l2_norm"; "" = none
  bool save_shape = false;
  /// Per mode, indexed by `mode − 1` (TRAIN, EVAL, PREDICT, GLOBAL); nullopt → JSON null.
  std::array<std::optional<save_config_spec>, 4> save_configs;
  bool save_histogram = true;
};

/// @brief The same save config for all four modes (what `hook = Hook(save_config=SaveConfig(
/// save_interval=n))` gives every collection).
[[nodiscard]] std::array<std::optional<save_config_spec>, 4> uniform_save_configs(
    int64_t save_interval);

/// @brief The collections the smdebug PyTorch hook writes by default, in its order: biases, all,
/// weights, gradients, default, losses (regexes `^(?!gradient).*bias`, none,
/// `^(?!gradient).*weight`, `^gradient`, none, `[Ll]oss_(?!input).*output`), every one with
/// `uniform_save_configs(save_interval)`, raw tensors, no reductions, `save_histogram` true except
/// for losses. Matches the golden `vanishing` trial's file.
[[nodiscard]] std::vector<collection_spec> pytorch_default_collections(int64_t save_interval);

/// @brief Check collection specs as `trial_writer::create` does: every collection named, no name
/// twice, every `include_regex` compiles with Python `re` semantics (`trial::name_regex`).
/// @return ok or invalid_argument naming the collection. Synchronous, thread-safe.
[[nodiscard]] status validate_collection_specs(std::span<const collection_spec> collections);

/// @brief Options for `trial_writer::create`.
struct writer_options {
  /// `_meta.num_workers` of the collections file: how many workers write this trial (>= 1).
  int num_workers = 1;
  /// Collections for `collections/000000000/<worker>_collections.json`. Empty → no collections
  /// file is written (a reader then has no collections and counts workers itself).
  std::vector<collection_spec> collections;
  footer_policy footer = footer_policy::smdebug_constant;
  /// Write the collections file after the first finished step (so a live reader knows
  /// `num_workers` early) as well as on close. false: on close only.
  bool write_collections_early = true;
  /// true (smdebug's FileWriter users, the default): collection members grow by `include_regex`
  /// matching of the names written (see `collection_spec::tensor_names`). false: the collections
  /// file lists exactly the `tensor_names` supplied (by `collections` or `set_collections`) —
  /// for a caller that computes membership itself, like the PyTorch hook, where only *saved*
  /// collections record names (HOOK_API §3.4).
  bool match_members_by_regex = true;
  /// Event-file write buffer size in bytes; element bytes of tensors at least this large bypass
  /// the buffer. Clamped to [4 KiB, 64 MiB].
  std::size_t buffer_bytes = std::size_t{1} << 20;
};

/// @brief Totals of what a writer produced so far (final files only; `.tmp` files excluded).
struct writer_totals {
  uint64_t steps_count = 0;          ///< steps that produced files
  uint64_t files_count = 0;          ///< event + index + collections + end-marker files
  uint64_t bytes = 0;                ///< their sizes summed (a rewritten collections file once)
  uint64_t tensor_records_count = 0; ///< records appended to event files
};

/// @brief Writes one worker's share of a trial. Move-only.
class trial_writer {
 public:
  /// @brief Prepare to write worker `worker` of the trial at `root` (created if missing; an
  /// existing trial there is added to, and files of the same steps are replaced).
  /// @param worker  file-name part, e.g. "worker_0"; non-empty, no '/', no NUL
  /// @return the writer; errors: invalid_argument (bad worker name, num_workers < 1, a collection
  ///   without a name or with duplicate names, an include_regex that does not compile with
  ///   Python `re` semantics — `trial::name_regex`); io_error
  ///   (root cannot be created), naming the path.
  [[nodiscard]] static result<trial_writer> create(const std::filesystem::path& root,
                                                   std::string worker, writer_options options = {});

  /// @brief Start a step. Files use the global step; `m`/`mode_step` go into each record's
  /// plugin data and the index file's `meta` (FORMAT §5).
  /// @return invalid_argument when a step is already open, when `global_step` < 0, `mode_step`
  ///   < −1 (−1: a mode not stepped yet, as smdebug stamps it) or `global_step` is not greater
  ///   than the previous step's; errors from a closed writer.
  [[nodiscard]] status begin_step(int64_t global_step, trialstat::mode m, int64_t mode_step);

  /// @brief Stamp the records appended from now until the end of the open step with `m` and
  /// `mode_step` in their plugin data (FORMAT §5), while the index file's `meta` keeps the values
  /// given to `begin_step`. This is what smdebug writes after a mid-step `set_mode` (HOOK_API
  /// §6.2, §6.5). `begin_step` resets the record mode to the step's own.
  /// @return invalid_argument when no step is open, `m` is not 1..4 or `mode_step` < −1 (smdebug
  ///   stamps −1 for a mode never stepped, HOOK_API §6.5).
  [[nodiscard]] status set_record_mode(trialstat::mode m, int64_t mode_step);

  /// @brief Append one raw tensor record to the step's event file (created on the first call of
  /// the step) and list it in the index (`tensor_payload`, in call order). The bytes are written
  /// before this returns; `tensor`'s memory may be reused right after.
  /// @param name       tensor name (Summary.Value.tag); a repeated name within a step is written
  ///                   again and listed again (readers take the last one, like smdebug)
  /// @param tensor     any fixed-size dtype; 0-d allowed; zero elements allowed (see the encoder)
  /// @param wall_time  Event.wall_time; default: the current time (as smdebug's `time.time()`)
  /// @return invalid_argument (no open step, bad name/shape, see `encode_tensor_record_parts`),
  ///   io_error (write failed: the message names the .tmp file; the step is then abandoned).
  [[nodiscard]] status add_tensor(std::string_view name, const tensor_view& tensor,
                                  std::optional<double> wall_time = std::nullopt);

  /// @brief Append a string tensor (numpy str array: `string_val`, dtype 0, one dim). Errors as
  /// `add_tensor`, plus invalid_argument for an empty `values`.
  [[nodiscard]] status add_strings(std::string_view name, std::span<const std::string> values,
                                   std::optional<double> wall_time = std::nullopt);

  /// @brief Append a reduction record `smdebug/reductions/[abs_]<op>/<tensor>` holding a 0-d
  /// float32 (what the PyTorch hook writes for float32 tensors, FORMAT §7). `op` must be one of
  /// min, max, mean, std, variance, sum, prod, l1, l2 (else invalid_argument). The collection
  /// membership is recorded under `tensor_name`.
  [[nodiscard]] status add_reduction(std::string_view tensor_name, std::string_view op, bool abs,
                                     float value, std::optional<double> wall_time = std::nullopt);

  /// @brief Record a shape-only entry (`shape_payload`: tensorname, originalname = name, shape);
  /// writes no bytes (FORMAT §7, `save_shape=True`). A step with shapes but no tensors produces
  /// an index file without `event_file_name` and no event file (FORMAT §6).
  [[nodiscard]] status add_shape(std::string_view name, std::span<const int64_t> shape);

  /// @brief Finish the step: rename the event file into place, then write the index file
  /// (tmp + rename). A step with nothing added writes no files. After the first finished step
  /// the collections file is written too (see `writer_options::write_collections_early`).
  /// @return invalid_argument (no open step), io_error naming the file.
  [[nodiscard]] status end_step();

  /// @brief Drop the open step: close and delete its `.tmp` event file; nothing is published.
  void abandon_step() noexcept;

  /// @brief Replace the collections (names, regexes, members, configs) that every later
  /// collections-file write uses; `close` then rewrites the file even if it was written before.
  /// With `match_members_by_regex`, the members become the given `tensor_names` plus every name
  /// written so far that matches the new regexes.
  /// @return invalid_argument as `validate_collection_specs` (the old collections stay), or for a
  ///   closed writer.
  [[nodiscard]] status set_collections(std::vector<collection_spec> collections);

  /// @brief (Re)write the collections file now (tmp + rename), with the members seen so far.
  /// No-op when `writer_options::collections` is empty. Errors: io_error.
  [[nodiscard]] status write_collections();

  /// @brief End writing: finish an open step, write the collections file, then (if asked) the
  /// empty `training_job_end.ts` marker. With several workers, let only the last one to finish
  /// write the marker (a reader treats the trial as complete once it exists). Idempotent.
  /// Errors: io_error naming the file.
  [[nodiscard]] status close(bool write_end_marker = true);

  /// @brief Write the empty `training_job_end.ts` marker into `root` (tmp + rename) without a
  /// writer, e.g. from a coordinator once every worker's writer has closed. Errors: io_error.
  [[nodiscard]] static status write_end_marker(const std::filesystem::path& root);

  [[nodiscard]] const std::filesystem::path& root() const noexcept;
  [[nodiscard]] const std::string& worker() const noexcept;
  [[nodiscard]] writer_totals totals() const noexcept;
  /// @brief Whether a step is open (between begin_step and end_step).
  [[nodiscard]] bool in_step() const noexcept;

  /// @brief Path of a step's files relative to the root (FORMAT §1):
  /// "events/<S12>/<S12>_<worker>.tfevents" and "index/<B9>/<S12>_<worker>.json".
  [[nodiscard]] static std::filesystem::path event_file_path(int64_t global_step,
                                                             std::string_view worker);
  [[nodiscard]] static std::filesystem::path index_file_path(int64_t global_step,
                                                             std::string_view worker);
  [[nodiscard]] static std::filesystem::path collections_file_path(std::string_view worker);

  trial_writer(trial_writer&&) noexcept;
  trial_writer& operator=(trial_writer&&) noexcept;
  trial_writer(const trial_writer&) = delete;
  trial_writer& operator=(const trial_writer&) = delete;
  /// @brief Abandons an open step (its `.tmp` file is deleted) and closes files; writes nothing
  /// else (no collections, no end marker): like a training process that exits without
  /// `hook.close()`. Call `close()` to finish properly.
  ~trial_writer();

 private:
  struct state;
  explicit trial_writer(std::unique_ptr<state> s);
  std::unique_ptr<state> state_;
};

}  // namespace trialstat::writer
