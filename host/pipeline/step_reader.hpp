// SPDX-License-Identifier: Apache-2.0
// Stage 4 for one saved step: read each worker's event file once (whole, or the requested byte
// ranges), decode the requested records into statistics records, and lay out the element bytes
// of the numeric tensors as segmented batches for an executor. Internal to host/pipeline.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "trialstat/decode/event_decoder.hpp"
#include "trialstat/io/file_reader.hpp"
#include "trialstat/io/object_reader.hpp"
#include "trialstat/memory/pinned_pool.hpp"
#include "trialstat/stats/statistics_executor.hpp"
#include "trialstat/pipeline/statistics_pipeline.hpp"
#include "trialstat/plan/read_plan.hpp"
#include "trialstat/trial/catalog.hpp"

namespace trialstat::pipeline::detail {

/// The bytes of one event file needed for a step: the whole file, or each requested range.
/// With a staging pool (the CUDA executor's), the bytes go straight into a pinned pool buffer
/// when they fit one (kept across loads), so the executor copies them to the device without a
/// host copy; otherwise into the source's own receive buffer when it hands it over
/// (`object_reader::take_ranges`), else into an owned vector.
class event_file_bytes {
 public:
  /// Read what `ranges` need from `reader`. Returns the bytes read. A local file is read whole
  /// when most of it is wanted (a whole file of at least `map_min_bytes` is mapped instead when
  /// `map` and no pool is given); remote objects are read by their ranges only (the source
  /// coalesces nearby ranges).
  result<int64_t> load(const io::object_reader& reader, const std::vector<io::byte_range>& ranges,
                       std::size_t whole_file_limit_bytes, memory::pinned_pool* pool = nullptr,
                       bool map = false, std::size_t map_min_bytes = 0);
  /// The loaded bytes of the record at `start` (as many as the file has, up to `length`).
  [[nodiscard]] std::span<const std::byte> record(uint64_t start, uint64_t length) const;
  [[nodiscard]] std::span<const std::byte> buffer() const noexcept { return data_; }
  [[nodiscard]] uint64_t file_size_bytes() const noexcept { return file_size_; }
  /// Whether the bytes were mapped and the file shrank under the mapping while they were read
  /// (the lost pages read as zeros: io::mapped_bytes::damaged).
  [[nodiscard]] bool damaged() const noexcept { return mapping_ && mapping_.damaged(); }

 private:
  /// `bytes` of storage for the next load: the pool lease when it fits, else `buffer_`.
  std::byte* storage(std::size_t bytes, memory::pinned_pool* pool);

  std::vector<std::byte> buffer_;
  memory::pool_lease lease_;        // pinned buffer from the executor's pool (kept)
  io::mapped_bytes mapping_;        // the whole file, mapped (kept until the next load)
  io::taken_bytes taken_;           // a source's receive buffer, handed over (until the next load)
  std::span<const std::byte> data_; // the loaded bytes: in lease_, buffer_, mapping_ or taken_
  std::unordered_map<uint64_t, std::pair<uint64_t, uint64_t>> ranges_;  // start → (offset, available)
  std::vector<uint64_t> available_;  // remote reads: bytes present per range
  bool whole_ = false;
  uint64_t file_size_ = 0;
};

/// One worker's event file of a step: its bytes, and the batches of segments in them.
struct file_part {
  event_file_bytes file;
  trial::worker_id worker = 0;                // whose event file it is
  std::string path;                           // trial-relative, for messages
  std::vector<std::size_t> segment_records;   // record index per segment of `segments`
  std::vector<stats::segment> segments;       // element bytes inside `file.buffer()`
  std::vector<std::byte> fallback;            // typed-field contents copied out of the decoder
  std::vector<std::size_t> fallback_records;
  std::vector<stats::segment> fallback_segments;
};

/// Everything read for one saved global step, ready for an executor.
struct step_batch {
  trial::step_info info;
  std::vector<stats::statistics_record> records;  // recycled across steps (step_reader::next_record)
  std::vector<file_part> parts;    // reused across steps (capacity kept)
  std::size_t parts_used = 0;
  int64_t bytes_read = 0;
  int64_t tensor_bytes = 0;
  status failure;  // set by the reader thread when reading threw (the run stops with it)
  status unfinished;  // live trials: why this step is not fully written yet (retried later)
};

/// Reads steps; keeps its decoder and range lists across steps. One per reader thread.
class step_reader {
 public:
  /// @param pool  where event-file bytes go when they fit a buffer (statistics_executor::
  ///               staging_pool()); nullptr: owned vectors
  step_reader(const trial::catalog& trial, const plan::read_plan& plan, const pipeline_options& options,
              memory::pinned_pool* pool = nullptr)
      : trial_(trial), plan_(plan), options_(options), pool_(pool) {}

  /// Fill `out` for `info`. Per-record problems go into the records' `raw_status`; an error is
  /// returned only for failures of the whole run (none today: files that cannot be opened or
  /// read cost their records).
  [[nodiscard]] status read_step(const trial::step_info& info, step_batch& out);

  /// The reads `read_step(info, ...)` will make, in its order: for each worker's event file, its
  /// key and the ranges `event_file_bytes::load` is given (a read-ahead schedule).
  void for_each_read(const trial::step_info& info,
                     const std::function<void(trial::file_id, const std::vector<io::byte_range>&)>& on_read);

 private:
  void read_worker_file(const trial::step_info& info, std::span<const trial::tensor_entry> entries,
                        step_batch& out);
  /// The ranges of one worker's entries the plan needs (into `ranges_`); the file, if any.
  std::optional<trial::file_id> collect_ranges(std::span<const trial::tensor_entry> entries);
  /// Calls `on_worker(entries)` for each worker's run of entries at `step`.
  template <typename Function>
  void for_each_worker(int64_t step, Function&& on_worker) const;
  /// Whether `pipeline_options::read_entry` lets this entry be read (always without one).
  [[nodiscard]] bool reads(const trial::tensor_entry& entry) const { return !options_.read_entry || options_.read_entry(entry); }
  /// decode::decode_indexed_record on the loaded bytes of `location` (into `event_`).
  status decode_record(const event_file_bytes& file, const trial::record_location& location,
                       std::string_view expected_tag, bool one_number);
  void decode_raw(const trial::tensor_entry& entry, const stats::statistics_request& request,
                  file_part& part, step_batch& out, std::size_t record_index);
  /// The next record of `out` for this step: a recycled one of an earlier step
  /// (recycle_record) while there are some, else a new one.
  stats::statistics_record& next_record(step_batch& out);
  /// `statistics_request::wall_time` where no statistics need the record: decode the raw record
  /// (a failure becomes `raw_status`) or, without one, the first saved reduction's (a failure
  /// becomes a reduction problem unless `read_saved_reductions` reported it already).
  void read_wall_time(const trial::tensor_entry& entry, const stats::statistics_request& request,
                      const event_file_bytes& file, const status& file_status,
                      stats::statistics_record& record);
  void read_saved_reductions(const trial::tensor_entry& entry, const event_file_bytes& file,
                             stats::statistics_record& record);

  const trial::catalog& trial_;
  const plan::read_plan& plan_;
  const pipeline_options& options_;
  memory::pinned_pool* pool_ = nullptr;
  std::vector<io::byte_range> ranges_;
  std::size_t records_used_ = 0;  // records of the step being read (read_step)
  decode::event_decoder decoder_;
  decode::event_record event_;
};

/// @brief Make a record of an earlier step ready for reuse: afterwards it equals a
/// default-constructed statistics_record, except that its vectors keep their capacity (the
/// shape and the list of pairwise comparisons above all), so the steps after the first
/// allocate nothing for them. A new statistics_record field must be reset here too.
void recycle_record(stats::statistics_record& r);

/// @brief recycle_record on every record of `batch` (the consumer, before handing it back to
/// the reader: the records' buffers are freed on the thread that allocated them).
void recycle_records(step_batch& batch);

/// After the batch was computed: the records of every file that shrank under its mapping while
/// it was read lose their statistics and fail with truncated_record naming the file (their
/// values were read as zeros). Call before handing the records on.
void discard_damaged(step_batch& batch);

/// Whether a request needs the raw tensor (anything beyond saved reductions).
[[nodiscard]] bool needs_raw(const stats::statistics_request& request) noexcept;

/// @brief Hand a read step to `executor`: per file part, the segments in the event file's buffer,
/// then the typed-field fallbacks, each as one tensor batch (`work`, reused) whose records carry
/// their tensor's request from `plan`. Synchronous. Errors: what the executor returns.
[[nodiscard]] status compute_step_batch(stats::statistics_executor& executor, const plan::read_plan& plan,
                                        step_batch& batch, stats::tensor_batch& work);

}  // namespace trialstat::pipeline::detail
