// SPDX-License-Identifier: Apache-2.0
#include "host/pipeline/step_reader.hpp"

#include <algorithm>
#include <exception>
#include <limits>

#include <fmt/format.h>

#include "trialstat/decode/indexed_record.hpp"
#include "trialstat/stats/moments.hpp"

namespace trialstat::pipeline::detail {

bool needs_raw(const stats::statistics_request& r) noexcept { return r.needs_raw(); }

std::byte* event_file_bytes::storage(std::size_t bytes, memory::pinned_pool* pool) {
  if (pool != nullptr && bytes <= pool->buffer_bytes()) {
    if (!lease_) lease_ = pool->try_acquire();  // none free: the vector below
    if (lease_) {
      data_ = {lease_.data(), bytes};
      return lease_.data();
    }
  } else {
    lease_.release();  // too small for this file: let another file use it
  }
  buffer_.resize(bytes);
  data_ = {buffer_.data(), bytes};
  return buffer_.data();
}

result<int64_t> event_file_bytes::load(const io::object_reader& reader, const std::vector<io::byte_range>& ranges,
                                       std::size_t whole_file_limit_bytes, memory::pinned_pool* pool,
                                       bool map, std::size_t map_min_bytes) {
  mapping_.reset();
  taken_.reset();
  ranges_.clear();
  const io::file_reader* local = reader.local_file();
  // Storage for `needed` bytes + padding; lengths come from index files, so the sizes are checked
  // and a failed allocation is an error (this runs on a reader thread: no exception may leave it).
  const auto allocate = [&](uint64_t needed) -> result<std::byte*> {
    if (needed > std::numeric_limits<std::size_t>::max() - io::record_padding_bytes ||
        needed > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return status(error_code::out_of_memory,
                    fmt::format("{}: {} bytes to read do not fit in memory", reader.display_name(), needed));
    }
    try {
      return storage(static_cast<std::size_t>(needed) + io::record_padding_bytes, pool);
    } catch (const std::exception&) {
      data_ = {};
      return status(error_code::out_of_memory,
                    fmt::format("{}: cannot allocate {} bytes for the requested records", reader.display_name(),
                                needed + io::record_padding_bytes));
    }
  };
  if (local == nullptr) {
    // Remote: only the ranges, each in a slot of its length (the source coalesces nearby ones
    // and fetches them concurrently); the object's size is learnt from what arrives.
    whole_ = false;
    file_size_ = 0;
    auto total = io::total_range_bytes(ranges, reader.display_name());
    if (!total) return total.error_status();
    const uint64_t wanted = *total;
    available_.resize(ranges.size());
    result<std::byte*> out = nullptr;
    // Without a staging pool, the source's own receive buffer when it can hand it over (the
    // S3 read-ahead's, laid out as read_ranges would copy it): no copy, no fresh pages.
    std::optional<io::taken_bytes> taken;
    if (pool == nullptr) taken = reader.take_ranges(ranges, io::record_padding_bytes, available_);
    if (taken) {
      taken_ = std::move(*taken);
      data_ = {taken_.data(), static_cast<std::size_t>(wanted) + io::record_padding_bytes};
      out = taken_.data();
    } else {
      out = allocate(wanted);
      if (!out) return out.error_status();
      TRIALSTAT_RETURN_IF_ERROR(reader.read_ranges(ranges, *out, available_));
    }
    std::fill(*out + wanted, *out + wanted + io::record_padding_bytes, std::byte{0});
    uint64_t cursor = 0;
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      ranges_.insert_or_assign(ranges[i].offset_bytes, std::make_pair(cursor, available_[i]));
      file_size_ = std::max(file_size_, ranges[i].offset_bytes + available_[i]);
      cursor += ranges[i].length_bytes;
    }
    return static_cast<int64_t>(wanted);
  }
  const uint64_t size = local->size_bytes();
  file_size_ = size;
  // Only the bytes the file has are wanted (a range past the end is reported when its record is
  // parsed), and their sum is checked against overflow.
  const auto available = [size](uint64_t start, uint64_t length) {
    return start < size ? std::min(length, size - start) : uint64_t{0};
  };
  uint64_t wanted = 0;
  for (const auto& [start, length] : ranges) {
    const uint64_t n = available(start, length);
    if (n > std::numeric_limits<uint64_t>::max() - wanted) {
      return status(error_code::out_of_memory,
                    fmt::format("{}: the {} requested records add up to more than 2^64 bytes",
                                reader.display_name(), ranges.size()));
    }
    wanted += n;
  }
  // Whole file when most of it is wanted (one sequential read); else only the ranges.
  whole_ = size <= whole_file_limit_bytes && (wanted >= size / 2 || size <= (uint64_t{1} << 20));
  if (whole_ && map && pool == nullptr && size >= map_min_bytes) {
    // A file system that cannot map (some FUSE mounts) is read below instead.
    if (auto mapped = local->map_all()) {
      mapping_ = std::move(*mapped);
      data_ = {mapping_.data(), static_cast<std::size_t>(size) + io::record_padding_bytes};
      return static_cast<int64_t>(size);
    }
  }
  auto out = allocate(whole_ ? size : wanted);
  if (!out) return out.error_status();
  if (whole_) {
    TRIALSTAT_RETURN_IF_ERROR(local->read_at(0, {*out, static_cast<std::size_t>(size)}));
    std::fill(*out + size, *out + size + io::record_padding_bytes, std::byte{0});
    return static_cast<int64_t>(size);
  }
  uint64_t cursor = 0;
  for (const auto& [start, length] : ranges) {
    const uint64_t n = available(start, length);
    if (n > 0) TRIALSTAT_RETURN_IF_ERROR(local->read_at(start, {*out + cursor, static_cast<std::size_t>(n)}));
    ranges_.insert_or_assign(start, std::make_pair(cursor, n));
    cursor += n;
  }
  std::fill(*out + cursor, *out + cursor + io::record_padding_bytes, std::byte{0});
  return static_cast<int64_t>(wanted);
}

std::span<const std::byte> event_file_bytes::record(uint64_t start, uint64_t length) const {
  if (whole_) {
    if (start >= file_size_) return {};
    return {data_.data() + start, static_cast<std::size_t>(std::min(length, file_size_ - start))};
  }
  const auto it = ranges_.find(start);
  if (it == ranges_.end()) return {};
  return {data_.data() + it->second.first, static_cast<std::size_t>(std::min(length, it->second.second))};
}

template <typename Function>
void step_reader::for_each_worker(int64_t step, Function&& on_worker) const {
  const auto entries = trial_.entries_at(step);
  std::size_t begin = 0;
  while (begin < entries.size()) {
    std::size_t end = begin;
    while (end < entries.size() && entries[end].worker == entries[begin].worker) ++end;
    // A plan may read only some workers (a rank's share of an MPI run).
    if (plan_.reads_worker(entries[begin].worker)) on_worker(entries.subspan(begin, end - begin));
    begin = end;
  }
}

void recycle_record(stats::statistics_record& r) {
  // Field by field: move-assigning a fresh record cost about what the saved allocations did.
  // Vectors are cleared (capacity kept); tests/pipeline/recycle_record_test.cpp checks the
  // result against a default record through the record codec, which writes every field.
  r.tensor = 0;
  r.worker = 0;
  r.step = 0;
  r.mode = trialstat::mode::global;
  r.mode_step = 0;
  r.wall_time.reset();
  if (!r.raw_status.ok()) r.raw_status = status::success();
  r.type = dtype::invalid;
  r.shape.clear();
  r.num_elements = 0;
  r.moments.reset();
  r.histogram.reset();
  r.log_histogram.reset();
  r.scalar.reset();
  r.previous.clear();
  r.axis0.clear();
  r.saved_reductions.clear();
  r.reduction_problems.clear();
  r.percentiles.clear();
  r.equal_counts.clear();
  r.channel_sums.clear();
  r.strings.clear();
  r.values_data = nullptr;
}

void recycle_records(step_batch& batch) {
  for (stats::statistics_record& r : batch.records) recycle_record(r);
}

stats::statistics_record& step_reader::next_record(step_batch& out) {
  if (records_used_ < out.records.size()) {
    recycle_record(out.records[records_used_]);
  } else {
    out.records.emplace_back();
  }
  return out.records[records_used_++];
}

status step_reader::read_step(const trial::step_info& info, step_batch& out) {
  out.info = info;
  out.parts_used = 0;
  out.bytes_read = 0;
  out.tensor_bytes = 0;
  // The previous step's records are recycled in place (next_record), the surplus dropped.
  records_used_ = 0;
  for_each_worker(info.step, [&](std::span<const trial::tensor_entry> entries) {
    read_worker_file(info, entries, out);
  });
  out.records.erase(out.records.begin() + static_cast<std::ptrdiff_t>(records_used_), out.records.end());
  return status::success();
}

void step_reader::for_each_read(
    const trial::step_info& info,
    const std::function<void(trial::file_id, const std::vector<io::byte_range>&)>& on_read) {
  for_each_worker(info.step, [&](std::span<const trial::tensor_entry> entries) {
    if (const auto file = collect_ranges(entries)) on_read(*file, ranges_);
  });
}

std::optional<trial::file_id> step_reader::collect_ranges(std::span<const trial::tensor_entry> entries) {
  ranges_.clear();
  std::optional<trial::file_id> file;
  for (const trial::tensor_entry& entry : entries) {
    const stats::statistics_request* request = plan_.find(entry.tensor);
    if (request == nullptr || !reads(entry)) continue;
    plan::for_each_needed_record(entry, *request, [&](const trial::record_location& at) {
      ranges_.push_back({at.start_bytes, at.length_bytes});
      file = at.event_file;
    });
  }
  return file;
}

/// All requested entries of one worker at one step come from one event file.
void step_reader::read_worker_file(const trial::step_info& info,
                                   std::span<const trial::tensor_entry> entries, step_batch& out) {
  const std::optional<trial::file_id> file = collect_ranges(entries);
  if (out.parts.size() <= out.parts_used) out.parts.emplace_back();
  file_part& part = out.parts[out.parts_used++];
  part.worker = entries.empty() ? 0 : entries.front().worker;
  part.path = file ? trial_.event_file_key(*file) : std::string_view();
  part.segments.clear();
  part.segment_records.clear();
  part.fallback.clear();
  part.fallback_segments.clear();
  part.fallback_records.clear();

  status file_status;
  if (file) {
    auto reader = trial_.source().open(trial_.event_file_key(*file));
    if (!reader) {
      file_status = reader.error_status();
    } else if (auto loaded = part.file.load(**reader, ranges_, options_.whole_file_limit_bytes, pool_,
                                            options_.map_event_files && !options_.stop_at_unfinished_records,
                                            options_.map_min_bytes)) {
      out.bytes_read += *loaded;
    } else {
      file_status = loaded.error_status();
    }
  }

  for (const trial::tensor_entry& entry : entries) {
    const stats::statistics_request* request = plan_.find(entry.tensor);
    if (request == nullptr || !reads(entry)) continue;
    const std::size_t record_index = records_used_;
    stats::statistics_record& record = next_record(out);
    record.tensor = entry.tensor;
    record.worker = entry.worker;
    record.step = info.step;
    record.mode = info.mode;
    record.mode_step = info.mode_step;
    if (entry.shape) record.shape = *entry.shape;
    if (request->saved_reductions) {
      if (file_status.ok()) {
        read_saved_reductions(entry, part.file, record);
      } else {
        for (const auto& reduction : entry.reductions) {
          record.reduction_problems.push_back({reduction.location, file_status});
        }
      }
    }
    if (!needs_raw(*request)) {
      if (request->wall_time) read_wall_time(entry, *request, part.file, file_status, record);
      continue;
    }
    if (!entry.raw) {
      record.raw_status = status(
          error_code::not_found,
          fmt::format("{}: no raw value saved at step {} for worker {} ({})",
                      trial_.tensor_names()[entry.tensor], info.step, trial_.workers()[entry.worker],
                      entry.reductions.empty() ? "shape only" : "reductions only"));
      if (request->wall_time) read_wall_time(entry, *request, part.file, file_status, record);
    } else if (!file_status.ok()) {
      record.raw_status = file_status;
    } else {
      decode_raw(entry, *request, part, out, record_index);
    }
  }
}

void step_reader::read_wall_time(const trial::tensor_entry& entry,
                                 const stats::statistics_request& request,
                                 const event_file_bytes& file, const status& file_status,
                                 stats::statistics_record& record) {
  const std::string& name = trial_.tensor_names()[entry.tensor];
  if (entry.raw) {  // only when no statistics need it (else decode_raw sets the wall time)
    status decoded = file_status.ok() ? decode_record(file, *entry.raw, name, /*one_number=*/false)
                                      : file_status;
    if (decoded.ok()) {
      record.wall_time = event_.wall_time;
    } else {
      record.raw_status = std::move(decoded);
    }
    return;
  }
  if (entry.reductions.empty()) return;  // a shape-only entry has no record
  const trial::saved_reduction& first = entry.reductions.front();
  status decoded =
      file_status.ok()
          ? decode_record(file, first.location,
                          decode::saved_reduction_tag(trial::reduction_name(first.op), first.abs, name),
                          /*one_number=*/true)
          : file_status;
  if (decoded.ok()) {
    record.wall_time = event_.wall_time;
  } else if (!request.saved_reductions) {  // else read_saved_reductions reported it already
    record.reduction_problems.push_back({first.location, std::move(decoded)});
  }
}

status step_reader::decode_record(const event_file_bytes& file, const trial::record_location& location,
                                  std::string_view expected_tag, bool one_number) {
  return decode::decode_indexed_record(
      file.record(location.start_bytes, location.length_bytes), file.file_size_bytes(),
      {location.start_bytes, location.length_bytes, expected_tag, one_number},
      trial_.event_file_key(location.event_file), decoder_, event_);
}

void step_reader::decode_raw(const trial::tensor_entry& entry, const stats::statistics_request& request,
                             file_part& part, step_batch& out, std::size_t record_index) {
  stats::statistics_record& record = out.records[record_index];
  const std::string& name = trial_.tensor_names()[entry.tensor];
  status decoded = decode_record(part.file, *entry.raw, name, /*one_number=*/false);
  if (!decoded.ok()) {
    record.raw_status = std::move(decoded);
    return;
  }
  record.wall_time = event_.wall_time;
  record.type = event_.type;
  record.shape = event_.shape;
  record.num_elements = event_.num_elements;
  if (request.keep_strings && event_.type == dtype::string) {
    record.strings.assign(event_.strings.begin(), event_.strings.end());
  }
  if (!dtype_is_real_numeric(event_.type)) {
    record.raw_status = status(error_code::unsupported_dtype,
                               fmt::format("{} at step {}: {} tensors have no numeric statistics",
                                           name, entry.step, dtype_name(event_.type)));
    return;
  }
  const std::byte* base = part.file.buffer().data();
  const auto& content = event_.content;
  const bool in_file_buffer =
      content.empty() ||
      (content.data() >= base && content.data() + content.size() <= base + part.file.buffer().size());
  if (in_file_buffer) {
    const uint64_t offset = content.empty() ? 0 : static_cast<uint64_t>(content.data() - base);
    part.segments.push_back({offset, event_.num_elements, event_.type});
    part.segment_records.push_back(record_index);
  } else {  // typed-field fallback: the decoder's scratch is reused by the next decode
    part.fallback_segments.push_back({part.fallback.size(), event_.num_elements, event_.type});
    part.fallback_records.push_back(record_index);
    part.fallback.insert(part.fallback.end(), content.begin(), content.end());
  }
  out.tensor_bytes += static_cast<int64_t>(content.size());
}

void step_reader::read_saved_reductions(const trial::tensor_entry& entry, const event_file_bytes& file,
                                        stats::statistics_record& record) {
  const std::string& base_name = trial_.tensor_names()[entry.tensor];
  for (const auto& reduction : entry.reductions) {
    const std::string tag =
        decode::saved_reduction_tag(trial::reduction_name(reduction.op), reduction.abs, base_name);
    status decoded = decode_record(file, reduction.location, tag, /*one_number=*/true);
    if (!decoded.ok()) {  // reported (rules: skipped records; stats: warnings), never silent
      record.reduction_problems.push_back({reduction.location, std::move(decoded)});
      continue;
    }
    auto m = stats::compute_moments(event_.view());
    if (!m) {
      record.reduction_problems.push_back({reduction.location, m.error_status()});
      continue;
    }
    record.saved_reductions.push_back({reduction.op, reduction.abs, stats::scalar_from_moments(*m), event_.type});
  }
}

void discard_damaged(step_batch& batch) {
  for (std::size_t p = 0; p < batch.parts_used; ++p) {
    const file_part& part = batch.parts[p];
    if (!part.file.damaged()) continue;
    const status why(error_code::truncated_record,
                     fmt::format("{}: the file shrank below the {} bytes mapped while it was read "
                                 "(step {}); the record's statistics are discarded",
                                 part.path, part.file.file_size_bytes(), batch.info.step));
    for (stats::statistics_record& r : batch.records) {
      // Records that hold nothing read from the file keep their reason.
      if (r.worker != part.worker ||
          (!r.raw_status.ok() && r.saved_reductions.empty() && r.strings.empty() && !r.wall_time)) {
        continue;
      }
      stats::statistics_record fresh;
      fresh.tensor = r.tensor;
      fresh.worker = r.worker;
      fresh.step = r.step;
      fresh.mode = r.mode;
      fresh.mode_step = r.mode_step;
      fresh.shape = std::move(r.shape);
      fresh.raw_status = why;
      r = std::move(fresh);
    }
  }
}

status compute_step_batch(stats::statistics_executor& executor, const plan::read_plan& plan,
                          step_batch& batch, stats::tensor_batch& work) {
  for (std::size_t p = 0; p < batch.parts_used; ++p) {
    file_part& part = batch.parts[p];
    for (int pass = 0; pass < 2; ++pass) {
      const auto& segments = pass == 0 ? part.segments : part.fallback_segments;
      const auto& indices = pass == 0 ? part.segment_records : part.fallback_records;
      if (segments.empty()) continue;
      work.clear();
      work.base = pass == 0 ? part.file.buffer().data() : part.fallback.data();
      work.segments = segments;
      for (std::size_t index : indices) {
        stats::statistics_record& record = batch.records[index];
        work.records.push_back(&record);
        work.requests.push_back(plan.find(record.tensor));
      }
      TRIALSTAT_RETURN_IF_ERROR(executor.compute(work));
    }
  }
  return status::success();
}

}  // namespace trialstat::pipeline::detail
