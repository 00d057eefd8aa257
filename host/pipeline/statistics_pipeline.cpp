// SPDX-License-Identifier: Apache-2.0
// The CPU-side driver of stages 4–5: per saved step, read each worker's event file once, decode
// the requested records, then compute statistics for the whole file as segmented batches.
#include "trialstat/pipeline/statistics_pipeline.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "trialstat/io/event_decoder.hpp"
#include "trialstat/io/file_reader.hpp"
#include "trialstat/io/record_reader.hpp"
#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/stats/histogram.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/pairwise.hpp"

namespace trialstat::pipeline {
namespace {

/// A previous saved step's copy of one tensor (for pairwise statistics).
struct snapshot {
  int64_t step = 0;
  dtype type = dtype::invalid;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;
};

uint64_t history_key(trial::tensor_id tensor, trial::worker_id worker) {
  return (static_cast<uint64_t>(tensor) << 32) | worker;
}

/// The value of a one-element tensor, from its moments record (exact: no second conversion).
double scalar_from_moments(const stats::moments& m) {
  if (m.finite_count() == 1) return m.min;
  if (m.nan_count > 0) return std::numeric_limits<double>::quiet_NaN();
  return m.pos_inf_count > 0 ? std::numeric_limits<double>::infinity()
                             : -std::numeric_limits<double>::infinity();
}

/// One group of segments sharing a base buffer, with the record each segment belongs to.
struct batch {
  std::vector<stats::segment> segments;
  std::vector<std::size_t> record_index;
  void clear() {
    segments.clear();
    record_index.clear();
  }
};

/// Bytes of one event file needed for a step: whole file or the requested ranges.
class event_file_bytes {
 public:
  /// Read what `ranges` (start, length) need from `reader`: the whole file when the ranges cover
  /// most of it, else each range into an arena. Returns bytes read.
  result<int64_t> load(const io::file_reader& reader,
                       const std::vector<std::pair<uint64_t, uint64_t>>& ranges,
                       std::size_t whole_file_limit_bytes) {
    uint64_t wanted = 0;
    for (const auto& r : ranges) wanted += r.second;
    const uint64_t size = reader.size_bytes();
    whole_ = size <= whole_file_limit_bytes && (wanted * 2 >= size || size <= (1u << 20));
    range_offsets_.clear();
    if (whole_) {
      buffer_.resize(size + io::record_padding_bytes);
      TRIALSTAT_RETURN_IF_ERROR(reader.read_at(0, {buffer_.data(), size}));
      std::fill(buffer_.begin() + static_cast<std::ptrdiff_t>(size), buffer_.end(), std::byte{0});
      file_size_ = size;
      return static_cast<int64_t>(size);
    }
    buffer_.resize(wanted + io::record_padding_bytes);
    uint64_t cursor = 0;
    for (const auto& [start, length] : ranges) {
      range_offsets_.emplace(start, cursor);
      // A range past the end of the file is reported when the record is parsed.
      const uint64_t available = start < size ? std::min(length, size - start) : 0;
      if (available > 0) {
        TRIALSTAT_RETURN_IF_ERROR(reader.read_at(start, {buffer_.data() + cursor, available}));
      }
      range_available_.insert_or_assign(start, available);
      cursor += length;
    }
    file_size_ = size;
    return static_cast<int64_t>(wanted);
  }

  /// The bytes of the record at `start` (as many as the file has, up to `length`).
  std::span<const std::byte> record(uint64_t start, uint64_t length) const {
    if (whole_) {
      if (start >= file_size_) return {};
      return {buffer_.data() + start, static_cast<std::size_t>(std::min(length, file_size_ - start))};
    }
    const auto it = range_offsets_.find(start);
    if (it == range_offsets_.end()) return {};
    return {buffer_.data() + it->second,
            static_cast<std::size_t>(std::min(length, range_available_.at(start)))};
  }

  std::vector<std::byte>& buffer() noexcept { return buffer_; }

 private:
  std::vector<std::byte> buffer_;
  std::unordered_map<uint64_t, uint64_t> range_offsets_;
  std::unordered_map<uint64_t, uint64_t> range_available_;
  bool whole_ = false;
  uint64_t file_size_ = 0;
};

/// Runs the statistics stage over one trial; holds all per-run reusable state.
class statistics_run {
 public:
  statistics_run(const trial::catalog& trial, const plan::read_plan& plan,
                 const pipeline_options& options)
      : trial_(trial), plan_(plan), options_(options) {}

  result<pipeline_counters> run(const step_callback& on_step) {
    for (const trial::step_info& info : trial_.step_infos()) {
      if (!in_range(info.step)) continue;
      records_.clear();
      const auto entries = trial_.entries_at(info.step);
      std::size_t begin = 0;
      while (begin < entries.size()) {
        std::size_t end = begin;
        while (end < entries.size() && entries[end].worker == entries[begin].worker) ++end;
        TRIALSTAT_RETURN_IF_ERROR(process_worker_file(info, entries.subspan(begin, end - begin)));
        begin = end;
      }
      ++counters_.steps;
      counters_.records += static_cast<int64_t>(records_.size());
      on_step(plan::step_statistics{info.step, info.mode, info.mode_step, records_});
    }
    return counters_;
  }

 private:
  bool in_range(int64_t step) const {
    for (const auto& begin : {plan_.step_begin, options_.step_begin}) {
      if (begin && step < *begin) return false;
    }
    for (const auto& end : {plan_.step_end, options_.step_end}) {
      if (end && step >= *end) return false;
    }
    return true;
  }

  /// All requested entries of one worker at one step come from one event file.
  status process_worker_file(const trial::step_info& info, std::span<const trial::tensor_entry> entries) {
    const std::size_t first_record = records_.size();
    ranges_.clear();
    std::optional<trial::file_id> file;
    for (const trial::tensor_entry& entry : entries) {
      const plan::tensor_request* request = plan_.find(entry.tensor);
      if (request == nullptr) continue;
      if (entry.raw && needs_raw(*request)) {
        ranges_.emplace_back(entry.raw->start_bytes, entry.raw->length_bytes);
        file = entry.raw->event_file;
      }
      if (request->saved_reductions) {
        for (const auto& reduction : entry.reductions) {
          ranges_.emplace_back(reduction.location.start_bytes, reduction.location.length_bytes);
          file = reduction.location.event_file;
        }
      }
    }

    status file_status;
    if (file) {
      const auto path = trial_.root() / trial_.event_file(*file);
      auto reader = io::file_reader::open(path);
      if (!reader) {
        file_status = reader.error_status();
      } else {
        auto loaded = file_bytes_.load(*reader, ranges_, options_.whole_file_limit_bytes);
        if (loaded) {
          counters_.bytes_read += *loaded;
        } else {
          file_status = loaded.error_status();
        }
      }
    }

    file_batch_.clear();
    fallback_batch_.clear();
    fallback_bytes_.clear();
    for (const trial::tensor_entry& entry : entries) {
      const plan::tensor_request* request = plan_.find(entry.tensor);
      if (request == nullptr) continue;
      plan::statistics_record& record = records_.emplace_back();
      record.tensor = entry.tensor;
      record.worker = entry.worker;
      record.step = info.step;
      record.mode = info.mode;
      record.mode_step = info.mode_step;
      if (entry.shape) record.shape = *entry.shape;
      if (request->saved_reductions) read_saved_reductions(entry, file_status, record);
      if (!needs_raw(*request)) continue;
      if (!entry.raw) {
        record.raw_status = status(
            error_code::not_found,
            fmt::format("{}: no raw value saved at step {} for worker {} ({})",
                        trial_.tensor_names()[entry.tensor], info.step,
                        trial_.workers()[entry.worker],
                        entry.reductions.empty() ? "shape only" : "reductions only"));
        continue;
      }
      if (!file_status.ok()) {
        record.raw_status = file_status;
        continue;
      }
      decode_raw(entry, record);
    }
    TRIALSTAT_RETURN_IF_ERROR(compute_batch(file_bytes_.buffer().data(), file_batch_));
    TRIALSTAT_RETURN_IF_ERROR(compute_batch(fallback_bytes_.data(), fallback_batch_));
    for (std::size_t i = first_record; i < records_.size(); ++i) {
      if (!records_[i].raw_status.ok()) ++counters_.failed_records;
    }
    return status::success();
  }

  static bool needs_raw(const plan::tensor_request& r) {
    return r.moments || r.histogram_bins > 0 || r.history_depth > 0 || !r.axis0.empty();
  }

  /// Parse and decode the record at `location` from the loaded file bytes.
  status decode_record(const trial::record_location& location, std::string_view expected_tag) {
    const auto path = trial_.event_file(location.event_file).string();
    const auto bytes = file_bytes_.record(location.start_bytes, location.length_bytes);
    auto frame = io::parse_record(bytes, location.start_bytes, path);
    if (!frame) return frame.error_status();
    if (frame->size_bytes() != location.length_bytes) {
      return status(error_code::data_loss,
                    fmt::format("{}: record at byte {} is {} bytes but the index says {}", path,
                                location.start_bytes, frame->size_bytes(), location.length_bytes));
    }
    status decoded = decoder_.decode(frame->payload, event_);
    if (!decoded.ok()) {
      return status(decoded.code(), fmt::format("{}: record at byte {}: {}", path,
                                                location.start_bytes, decoded.message()));
    }
    if (event_.tag != expected_tag) {
      return status(error_code::data_loss,
                    fmt::format("{}: record at byte {} holds '{}' but the index says '{}'", path,
                                location.start_bytes, event_.tag, expected_tag));
    }
    return status::success();
  }

  void decode_raw(const trial::tensor_entry& entry, plan::statistics_record& record) {
    const std::string& name = trial_.tensor_names()[entry.tensor];
    status decoded = decode_record(*entry.raw, name);
    if (!decoded.ok()) {
      record.raw_status = std::move(decoded);
      return;
    }
    record.type = event_.type;
    record.shape = event_.shape;
    record.num_elements = event_.num_elements;
    if (!dtype_is_real_numeric(event_.type)) {
      record.raw_status = status(
          error_code::unsupported_dtype,
          fmt::format("{} at step {}: {} tensors have no numeric statistics", name, entry.step,
                      dtype_name(event_.type)));
      return;
    }
    const std::byte* base = file_bytes_.buffer().data();
    const auto& content = event_.content;
    const bool in_file_buffer =
        content.empty() || (content.data() >= base &&
                            content.data() + content.size() <= base + file_bytes_.buffer().size());
    batch& target = in_file_buffer ? file_batch_ : fallback_batch_;
    uint64_t offset = 0;
    if (in_file_buffer) {
      offset = content.empty() ? 0 : static_cast<uint64_t>(content.data() - base);
    } else {  // typed-field fallback: the decoder's scratch is reused by the next decode
      offset = fallback_bytes_.size();
      fallback_bytes_.insert(fallback_bytes_.end(), content.begin(), content.end());
    }
    target.segments.push_back({offset, event_.num_elements, event_.type});
    target.record_index.push_back(records_.size() - 1);
    counters_.tensor_bytes += static_cast<int64_t>(content.size());
  }

  void read_saved_reductions(const trial::tensor_entry& entry, const status& file_status,
                             plan::statistics_record& record) {
    if (!file_status.ok()) return;
    const std::string& base_name = trial_.tensor_names()[entry.tensor];
    for (const auto& reduction : entry.reductions) {
      const std::string tag = fmt::format("smdebug/reductions/{}{}/{}", reduction.abs ? "abs_" : "",
                                          trial::reduction_name(reduction.op), base_name);
      if (!decode_record(reduction.location, tag).ok()) continue;
      if (!dtype_is_real_numeric(event_.type) || event_.num_elements != 1) continue;
      auto m = stats::compute_moments(event_.view());
      if (!m) continue;
      record.saved_reductions.push_back(
          {reduction.op, reduction.abs, scalar_from_moments(*m), event_.type});
    }
  }

  status compute_batch(const std::byte* base, const batch& work) {
    if (work.segments.empty()) return status::success();
    moments_.assign(work.segments.size(), stats::moments{});
    TRIALSTAT_RETURN_IF_ERROR(
        stats::compute_moments(base, work.segments, moments_, options_.backend));
    for (std::size_t i = 0; i < work.segments.size(); ++i) {
      plan::statistics_record& record = records_[work.record_index[i]];
      record.moments = moments_[i];
      if (record.num_elements == 1) record.scalar = scalar_from_moments(moments_[i]);
    }
    TRIALSTAT_RETURN_IF_ERROR(compute_histograms(base, work));
    for (std::size_t i = 0; i < work.segments.size(); ++i) {
      plan::statistics_record& record = records_[work.record_index[i]];
      const plan::tensor_request& request = *plan_.find(record.tensor);
      const tensor_view view{base + work.segments[i].offset_bytes, record.type, record.shape,
                             record.num_elements, memory_kind::host};
      TRIALSTAT_RETURN_IF_ERROR(compute_axis0(request, view, record));
      if (request.history_depth > 0) TRIALSTAT_RETURN_IF_ERROR(compare_with_history(request, view, record));
    }
    return status::success();
  }

  status compute_histograms(const std::byte* base, const batch& work) {
    // Group segments by bin count (normally one group: every request uses the same bins).
    for (std::size_t first = 0; first < work.segments.size(); ++first) {
      const int bins = plan_.find(records_[work.record_index[first]].tensor)->histogram_bins;
      if (bins <= 0 || std::find(done_bins_.begin(), done_bins_.end(), bins) != done_bins_.end()) {
        continue;
      }
      done_bins_.push_back(bins);
      hist_segments_.clear();
      hist_moments_.clear();
      hist_records_.clear();
      for (std::size_t i = first; i < work.segments.size(); ++i) {
        if (plan_.find(records_[work.record_index[i]].tensor)->histogram_bins != bins) continue;
        hist_segments_.push_back(work.segments[i]);
        hist_moments_.push_back(moments_[i]);
        hist_records_.push_back(work.record_index[i]);
      }
      histograms_.assign(hist_segments_.size(), stats::histogram{});
      TRIALSTAT_RETURN_IF_ERROR(stats::compute_histograms(base, hist_segments_, hist_moments_, bins,
                                                          histograms_, options_.backend));
      for (std::size_t i = 0; i < hist_records_.size(); ++i) {
        records_[hist_records_[i]].histogram = std::move(histograms_[i]);
      }
    }
    done_bins_.clear();
    return status::success();
  }

  status compute_axis0(const plan::tensor_request& request, const tensor_view& view,
                       plan::statistics_record& record) {
    for (const auto& predicate : request.axis0) {
      auto counts = stats::count_along_axis0(view, predicate, options_.backend);
      if (!counts) return counts.error_status();
      record.axis0.push_back(std::move(*counts));
    }
    return status::success();
  }

  /// Pairwise statistics against the kept copies, newest first; then keep this step's copy.
  status compare_with_history(const plan::tensor_request& request, const tensor_view& view,
                              plan::statistics_record& record) {
    auto& kept = history_[history_key(record.tensor, record.worker)];
    const stats::allclose_params default_params{};
    for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
      plan::previous_comparison comparison;
      comparison.previous_step = it->step;
      comparison.shape_matches = it->shape == record.shape && it->type == record.type;
      if (comparison.shape_matches) {
        const tensor_view previous{it->bytes.data(), it->type, it->shape,
                                   record.num_elements, memory_kind::host};
        const auto& first_params = request.allclose.empty() ? default_params : request.allclose[0];
        auto result = stats::compute_pairwise(previous, view, first_params, options_.backend);
        if (!result) return result.error_status();
        comparison.result = *result;
        comparison.allclose_violations.push_back(result->allclose_violations);
        for (std::size_t p = 1; p < request.allclose.size(); ++p) {
          auto extra = stats::compute_pairwise(previous, view, request.allclose[p], options_.backend);
          if (!extra) return extra.error_status();
          comparison.allclose_violations.push_back(extra->allclose_violations);
        }
      }
      record.previous.push_back(std::move(comparison));
    }
    // Keep this step's copy, recycling the oldest buffer once the window is full.
    snapshot next;
    if (static_cast<int>(kept.size()) >= request.history_depth) {
      next = std::move(kept.front());
      kept.pop_front();
    }
    next.step = record.step;
    next.type = record.type;
    next.shape = record.shape;
    next.bytes.assign(view.data, view.data + view.size_bytes());
    kept.push_back(std::move(next));
    return status::success();
  }

  const trial::catalog& trial_;
  const plan::read_plan& plan_;
  const pipeline_options& options_;
  pipeline_counters counters_;

  std::vector<plan::statistics_record> records_;
  std::vector<std::pair<uint64_t, uint64_t>> ranges_;
  event_file_bytes file_bytes_;
  io::event_decoder decoder_;
  io::event_record event_;
  batch file_batch_;
  batch fallback_batch_;
  std::vector<std::byte> fallback_bytes_;
  std::vector<stats::moments> moments_;
  std::vector<stats::segment> hist_segments_;
  std::vector<stats::moments> hist_moments_;
  std::vector<std::size_t> hist_records_;
  std::vector<stats::histogram> histograms_;
  std::vector<int> done_bins_;
  std::unordered_map<uint64_t, std::deque<snapshot>> history_;
};

}  // namespace

result<pipeline_counters> run_statistics(const trial::catalog& trial, const plan::read_plan& plan,
                                         const pipeline_options& options,
                                         const step_callback& on_step) {
  statistics_run run(trial, plan, options);
  return run.run(on_step);
}

}  // namespace trialstat::pipeline
