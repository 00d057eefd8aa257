// SPDX-License-Identifier: Apache-2.0
/// @file catalog.hpp
/// @brief The trial catalog: what a trial folder holds, from its index and collection files —
/// every (tensor, global step, worker) entry with the byte range of its raw tensor, saved
/// reductions and shape; steps per mode; workers; collections; completeness; the end marker.
/// Sources: spec/FORMAT.md §1, §6, §7, §8; spec/TRIAL_API.md §2, §3, §4.
///
/// Memory is O(entries): 64 bytes per (tensor, step, worker) entry, tensor and worker names and
/// shapes interned, saved reductions in a side table (32 bytes each). Payload bytes are never read here
/// except when a step's index file is missing and its event file is scanned instead.
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

#include "trialstat/io/source_options.hpp"
#include "trialstat/io/trial_source.hpp"
#include "trialstat/mode.hpp"
#include "trialstat/status.hpp"
#include "trialstat/trial/name_regex.hpp"

namespace trialstat::trial {

using tensor_id = uint32_t;  ///< index into `catalog::tensor_names()`
using worker_id = uint32_t;  ///< index into `catalog::workers()`
using file_id = uint32_t;    ///< index into `catalog::event_file()`

/// @brief The reductions smdebug saves (FORMAT §7) and `reduction_value` accepts (TRIAL_API §8).
enum class reduction_op : uint8_t { min, max, mean, std, variance, sum, prod, l1, l2 };

/// @brief "min", "max", "mean", "std", "variance", "sum", "prod", "l1", "l2".
[[nodiscard]] std::string_view reduction_name(reduction_op op) noexcept;
/// @brief Inverse of `reduction_name`; nullopt for anything else (e.g. "median").
[[nodiscard]] std::optional<reduction_op> parse_reduction(std::string_view name) noexcept;

/// @brief Byte range of one whole TFRecord record (framing included) in an event file.
struct record_location {
  uint64_t start_bytes = 0;
  uint64_t length_bytes = 0;
  file_id event_file = 0;
};

/// @brief A saved reduction record `smdebug/reductions/[abs_]<op>/<tensor>` attached to its base.
struct saved_reduction {
  reduction_op op = reduction_op::min;
  bool abs = false;
  record_location location;
};

/// @brief The raw tensor record of an entry, if the index lists one: reads like
/// `std::optional<record_location>` (`if (e.raw)`, `e.raw->start_bytes`, `*e.raw`) in 24 bytes
/// (absence is an event file id no file has).
class optional_location {
 public:
  optional_location() noexcept { value_.event_file = absent; }
  optional_location(const record_location& at) noexcept : value_(at) {}  // NOLINT: like optional
  optional_location& operator=(const record_location& at) noexcept {
    value_ = at;
    return *this;
  }
  [[nodiscard]] bool has_value() const noexcept { return value_.event_file != absent; }
  explicit operator bool() const noexcept { return has_value(); }
  [[nodiscard]] const record_location& operator*() const noexcept { return value_; }
  [[nodiscard]] const record_location* operator->() const noexcept { return &value_; }
  operator std::optional<record_location>() const {  // NOLINT: converts like the optional it replaces
    return has_value() ? std::optional<record_location>(value_) : std::nullopt;
  }

 private:
  static constexpr file_id absent = UINT32_MAX;
  record_location value_;
};

/// @brief The shape an index file saved for an entry (`shape_payload`), if any: reads like
/// `std::optional<std::vector<int64_t>>`. Shapes are interned by the catalog (one copy per
/// distinct shape), so an entry holds a pointer; valid while the catalog lives.
class optional_shape {
 public:
  optional_shape() noexcept = default;
  explicit optional_shape(const std::vector<int64_t>* dims) noexcept : dims_(dims) {}
  [[nodiscard]] bool has_value() const noexcept { return dims_ != nullptr; }
  explicit operator bool() const noexcept { return has_value(); }
  /// @pre has_value()
  [[nodiscard]] const std::vector<int64_t>& operator*() const noexcept { return *dims_; }
  [[nodiscard]] const std::vector<int64_t>* operator->() const noexcept { return dims_; }
  friend bool operator==(const optional_shape& a, const std::vector<int64_t>& b) {
    return a.has_value() && *a == b;
  }
  friend bool operator==(const optional_shape& a, const optional_shape& b) {
    return a.has_value() == b.has_value() && (!a.has_value() || *a == *b);
  }

 private:
  const std::vector<int64_t>* dims_ = nullptr;
};

/// @brief An entry's saved reductions, in index order (a (op, abs) pair appears once): reads
/// like a `const std::vector<saved_reduction>` (range-for, `size()`, `[i]`, `front()`). The
/// records live in the catalog's reduction table; valid while the catalog lives.
class reduction_list {
 public:
  reduction_list() noexcept = default;
  reduction_list(const saved_reduction* data, uint32_t count) noexcept : data_(data), count_(count) {}
  [[nodiscard]] const saved_reduction* begin() const noexcept { return data_; }
  [[nodiscard]] const saved_reduction* end() const noexcept { return data_ + count_; }
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
  /// @pre i < size()
  [[nodiscard]] const saved_reduction& operator[](std::size_t i) const noexcept { return data_[i]; }
  /// @pre !empty()
  [[nodiscard]] const saved_reduction& front() const noexcept { return data_[0]; }

 private:
  const saved_reduction* data_ = nullptr;
  uint32_t count_ = 0;
};

/// @brief Everything saved for one (tensor, global step, worker): 64 bytes (issue 10: the
/// catalog of a 10⁶-file trial holds 10⁷ of them).
struct tensor_entry {
  int64_t step = 0;  ///< global step
  tensor_id tensor = 0;
  worker_id worker = 0;
  optional_location raw;       ///< raw tensor record, if the index lists one
  optional_shape shape;        ///< from `shape_payload`, if saved
  reduction_list reductions;   ///< in index order; a (op, abs) pair appears once
};

/// @brief One saved global step.
struct step_info {
  int64_t step = 0;                    ///< global step
  trialstat::mode mode = trialstat::mode::global;
  int64_t mode_step = 0;
  std::vector<worker_id> workers;      ///< workers that wrote this step (sorted, unique)
};

/// @brief Save settings of one mode in a collection (null in JSON → absent).
struct save_config {
  int64_t save_interval = 0;
  std::vector<int64_t> save_steps;
  int64_t start_step = 0;
  std::optional<int64_t> end_step;
};

/// @brief One collection from the collections file (FORMAT §8).
struct collection {
  std::string name;
  std::vector<std::string> include_regex;
  std::vector<std::string> tensor_names;    ///< as listed in the file (sorted there)
  bool save_raw_tensor = true;
  bool save_shape = false;
  std::string reductions;                   ///< comma list, as in the file
  bool has_reduction_config = false;        ///< `reduction_config` was an object (not null/absent)
  bool save_histogram = true;               ///< `save_histogram` as in the file
  std::optional<save_config> save_configs[4];  ///< indexed by mode − 1 (TRAIN..GLOBAL)
};

/// @brief Processes that load one catalog together (issue 10: the MPI ranks of a job). Each
/// lists the trial, reads and parses only its share of the index files to load (a contiguous
/// slice of the sorted listing, 1/size of them), and `exchange` hands every share to every
/// process, which applies them all in listing order: each process ends with exactly the catalog
/// one process would load, for about 1/size of the reading and parsing. `open` and `refresh`
/// are then collective: every process of the group must call them, with the same options.
struct load_group {
  int rank = 0;  ///< this process, in [0, size)
  int size = 1;  ///< processes in the group; 1 loads alone (exchange is not called)
  /// @brief Gives this process's share (bytes) to all and returns every process's share,
  /// indexed by rank. Errors end the load (e.g. io_error from the transport).
  std::function<result<std::vector<std::vector<std::byte>>>(std::vector<std::byte> mine)> exchange;
};

/// @brief Options for `catalog::open`.
struct catalog_options {
  std::optional<int64_t> range_begin;  ///< load only steps s with begin <= s (TRIAL_API §1)
  std::optional<int64_t> range_end;    ///< ... and s < end
  bool scan_missing_index = true;      ///< scan event files that have no index file
  io::source_options source;           ///< S3 settings (for `s3://` locations)
  /// Load together with other processes (MPI ranks); loading alone when absent. Errors of the
  /// group: invalid_argument when another process listed other index files (the trial changed
  /// while the processes opened it), the exchange's own errors.
  std::optional<load_group> group;
  /// Loading alone from a local folder with at least this many index files to load, a second
  /// thread reads and parses them while this one applies them in listing order (the catalog and
  /// its warnings are the same as on one thread); 0 = one thread always.
  std::size_t parse_thread_min_files = 32;
};

/// @brief A problem found while loading that cost part of the trial but not the run
/// (a corrupt index file, an unparsable name, a corrupt record met while scanning).
struct load_warning {
  std::filesystem::path file;  ///< relative to the trial root
  status problem;              ///< the message names the file, byte offset or step
};

class catalog {
 public:
  /// @brief Load a trial: a local folder or `s3://bucket/prefix` (spec/TRIAL_API.md §1; the
  /// location's surrounding whitespace is ignored). Does not wait for collections (unlike
  /// smdebug); a trial with no collections file loads with no collections and `num_workers()` =
  /// number of workers seen.
  /// @return the catalog; errors: not_found when the folder does not exist or the S3 prefix has
  ///   no objects (or the bucket does not exist); io_error when it cannot be listed (S3: access
  ///   denied, naming the bucket and where the credentials came from; the network, after
  ///   retries); invalid_argument for a bad range, a malformed `s3://` location or AWS settings.
  ///   Bad individual files become `warnings()`, never a failure.
  [[nodiscard]] static result<catalog> open(const std::string& location, catalog_options options = {});
  /// @brief Load a trial from an open source (shared, e.g. with another catalog of the same
  /// trial). Errors: as above.
  [[nodiscard]] static result<catalog> open(std::shared_ptr<const io::trial_source> source,
                                            catalog_options options = {});

  /// @brief Live trials: list again and load index/event files not seen yet (ignoring `*.tmp`),
  /// update completeness and the end marker. Cheap when nothing changed.
  /// @return the number of new (step, worker) files loaded; errors: io_error.
  [[nodiscard]] result<std::size_t> refresh();

  /// @brief The trial location as given to `open` (trimmed): a folder or `s3://bucket/prefix`.
  [[nodiscard]] const std::string& location() const noexcept;
  /// @brief Where the trial's bytes are read from: open event files with
  /// `source().open(event_file_key(id))`.
  [[nodiscard]] const io::trial_source& source() const noexcept;
  [[nodiscard]] std::shared_ptr<const io::trial_source> shared_source() const noexcept;

  // ---- names -------------------------------------------------------------------------------
  /// @brief Every tensor name seen (reductions attach to their base name), indexed by tensor_id
  /// in first-seen order. Ids are stable across `refresh()` (new names are appended), so use
  /// `sorted_tensor_ids()` for name order.
  [[nodiscard]] std::span<const std::string> tensor_names() const noexcept;
  [[nodiscard]] std::vector<tensor_id> sorted_tensor_ids() const;
  [[nodiscard]] std::optional<tensor_id> find_tensor(std::string_view name) const;
  /// @brief Worker names indexed by worker_id (first-seen order, stable across refresh).
  /// `sorted_worker_ids()` gives lexicographic order (`worker_10` < `worker_2`, like smdebug).
  [[nodiscard]] std::span<const std::string> workers() const noexcept;
  [[nodiscard]] std::vector<worker_id> sorted_worker_ids() const;
  [[nodiscard]] std::optional<worker_id> find_worker(std::string_view name) const;
  /// @brief Event file path relative to the root ("events/000000000005/..._worker_0.tfevents");
  /// empty for an unknown id. Built on each call (the catalog keeps keys as plain strings).
  [[nodiscard]] std::filesystem::path event_file(file_id id) const;
  /// @brief The same as a source key ('/'-separated, relative to the root), without building a
  /// path: for opening (`source().open(...)`) and messages per record. Valid while the catalog
  /// lives (a refresh adds keys; it does not move the ones there). Empty for an unknown id.
  [[nodiscard]] std::string_view event_file_key(file_id id) const noexcept;

  // ---- steps and modes ---------------------------------------------------------------------
  /// @brief Saved steps: global steps for GLOBAL, mode steps otherwise; sorted ascending.
  /// Without `include_incomplete`, only complete steps (TRIAL_API §4).
  [[nodiscard]] std::vector<int64_t> steps(trialstat::mode m = trialstat::mode::global,
                                           bool include_incomplete = false) const;
  /// @brief All saved global steps with their mode, mode step and workers, ascending.
  [[nodiscard]] std::span<const step_info> step_infos() const noexcept;
  [[nodiscard]] const step_info* find_step(int64_t global_step) const;
  /// @brief Global step of (mode, mode step); identity for GLOBAL; nullopt if unknown.
  [[nodiscard]] std::optional<int64_t> global_step(trialstat::mode m, int64_t mode_step) const;
  /// @brief Modes other than GLOBAL that have saved steps, in enum order.
  [[nodiscard]] std::vector<trialstat::mode> modes() const;

  // ---- entries ------------------------------------------------------------------------------
  /// @brief Every (tensor, step, worker) entry, ordered by (step, worker, order in the index).
  [[nodiscard]] std::span<const tensor_entry> entries() const noexcept;
  /// @brief The entries of one global step (all workers), a contiguous sub-range of entries().
  [[nodiscard]] std::span<const tensor_entry> entries_at(int64_t global_step) const;
  /// @brief The entry for (tensor, step, worker), or nullptr.
  [[nodiscard]] const tensor_entry* find_entry(tensor_id tensor, int64_t global_step,
                                               worker_id worker) const;
  /// @brief Global steps at which `tensor` has any entry (raw, reduction or shape), ascending.
  [[nodiscard]] std::vector<int64_t> tensor_steps(tensor_id tensor) const;

  // ---- completeness (TRIAL_API §4) ----------------------------------------------------------
  /// @brief `_meta.num_workers` of the first collections file, else the number of workers seen.
  [[nodiscard]] int num_workers() const noexcept;
  /// @brief `training_job_end.ts` exists.
  [[nodiscard]] bool training_ended() const noexcept;
  /// @brief Exact completeness: every worker wrote the step, or training ended.
  [[nodiscard]] bool is_complete(int64_t global_step) const;
  /// @brief Largest global step such that it and every earlier saved step are complete; -1 if none.
  [[nodiscard]] int64_t last_complete_step() const noexcept;

  // ---- collections and selection (FORMAT §8, TRIAL_API §9) ----------------------------------
  [[nodiscard]] std::span<const collection> collections() const noexcept;
  /// @brief A collections file was found and read (it may list no collections, or have been
  /// unreadable: see `warnings()`). smdebug's trials wait for this, not for a non-empty list.
  [[nodiscard]] bool has_collections_file() const noexcept;
  [[nodiscard]] const collection* find_collection(std::string_view name) const;
  /// @brief Whether the tensor belongs to the collection: listed in its `tensor_names`, or a
  /// match of any `include_regex` (Python re.search). False for an unknown collection.
  [[nodiscard]] bool in_collection(tensor_id tensor, std::string_view collection_name) const;
  /// @brief Tensors (sorted by name) in any of `collection_names` or matching any of `regexes`
  /// (the union, spec/RULES.md §2). Errors: invalid_argument for a pattern that does not compile.
  [[nodiscard]] result<std::vector<tensor_id>> select(std::span<const std::string> collection_names,
                                                      std::span<const std::string> regexes) const;

  /// @brief Problems met while loading (never fatal).
  [[nodiscard]] std::span<const load_warning> warnings() const noexcept;

  catalog(catalog&&) noexcept;
  catalog& operator=(catalog&&) noexcept;
  ~catalog();

 private:
  struct state;
  explicit catalog(std::unique_ptr<state> s);
  std::unique_ptr<state> state_;
};

}  // namespace trialstat::trial
