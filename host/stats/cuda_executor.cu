// SPDX-License-Identifier: Apache-2.0
// The CUDA statistics executor: pinned staging, two streams, fixed device buffers, the
// kernels/ launchers, and a device-resident history arena for pairwise statistics. Design and
// counters: cuda_executor.hpp. Semantics mirror host/stats/cpu_executor.cpp field by field.
#include "host/stats/cuda_executor.hpp"

#include <cuda_runtime.h>
#include <thrust/iterator/transform_iterator.h>

#include <cub/device/device_memcpy.cuh>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "host/stats/batch_split.hpp"
#include "host/stats/cuda_context.hpp"
#include "host/stats/rule_statistics.hpp"
#include "kernels/axis_counts/axis_counts_cuda.hpp"
#include "kernels/axis_counts/axis_counts_op.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/common/result_poison.hpp"
#include "kernels/histogram/histogram_cuda.hpp"
#include "kernels/histogram/histogram_op.hpp"
#include "kernels/log_histogram/log_histogram_cuda.hpp"
#include "kernels/log_histogram/log_histogram_op.hpp"
#include "kernels/moments/moments_cuda.hpp"
#include "kernels/pairwise/pairwise_cuda.hpp"
#include "trialstat/detail/cuda_check.hpp"
#include "trialstat/dtype.hpp"
#include "trialstat/memory/pinned_pool.hpp"
#include "trialstat/stats/log_histogram.hpp"
#include "trialstat/stats/moments.hpp"

namespace trialstat::stats {
namespace {

using detail::batch_piece;
using detail::piece_group;

constexpr int num_stream_slots = 2;
constexpr std::size_t num_pool_buffers = 8;        // 2 staging (one per stream slot) + 6 for the reader
constexpr std::size_t num_staging_buffers = num_stream_slots;
constexpr std::size_t min_buffer_bytes = std::size_t{64} << 10;
constexpr std::size_t default_max_segments = 16384;
constexpr auto log_cells = static_cast<std::size_t>(kernels::log_histogram_num_cells);

using detail::align_up;
using detail::device_block;
using detail::pinned_block;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// cudaPointerGetAttributes' answer for `p` (pageable when it has none).
detail::source_memory source_memory_of(const void* p) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    return detail::source_memory::pageable;
  }
  switch (attributes.type) {
    case cudaMemoryTypeHost: return detail::source_memory::host_pinned;
    case cudaMemoryTypeDevice: return detail::source_memory::device;
    case cudaMemoryTypeManaged: return detail::source_memory::managed;
    default: return detail::source_memory::pageable;
  }
}

uint64_t history_key(trial::tensor_id tensor, trial::worker_id worker) {
  return (static_cast<uint64_t>(tensor) << 32) | worker;
}

// ---- history copies: cub::DeviceMemcpy::Batched ---------------------------------------------

/// Copy `bytes` from the device input + src_offset to the history arena + dst_offset (one piece).
struct copy_job {
  uint64_t src_offset;
  uint64_t dst_offset;
  uint64_t bytes;
};

/// Device-side views of a copy_job table as cub::DeviceMemcpy::Batched's pointer and size
/// iterators (no table of absolute pointers to build on the host).
struct copy_source {
  const unsigned char* base;
  __host__ __device__ const unsigned char* operator()(const copy_job& j) const { return base + j.src_offset; }
};
struct copy_destination {
  unsigned char* base;
  __host__ __device__ unsigned char* operator()(const copy_job& j) const { return base + j.dst_offset; }
};
struct copy_size {
  __host__ __device__ uint64_t operator()(const copy_job& j) const { return j.bytes; }
};

/// Enqueue (or, with a null temp, size) the batched copy of `num_jobs` jobs at `d_jobs`.
cudaError_t history_copy(void* d_temp, std::size_t& temp_bytes, const copy_job* d_jobs,
                         int64_t num_jobs, const std::byte* d_input, std::byte* arena,
                         cudaStream_t stream) {
  const thrust::transform_iterator<copy_source, const copy_job*> sources(
      d_jobs, copy_source{reinterpret_cast<const unsigned char*>(d_input)});
  const thrust::transform_iterator<copy_destination, const copy_job*> destinations(
      d_jobs, copy_destination{reinterpret_cast<unsigned char*>(arena)});
  const thrust::transform_iterator<copy_size, const copy_job*> sizes(d_jobs, copy_size{});
  return cub::DeviceMemcpy::Batched(d_temp, temp_bytes, sources, destinations, sizes, num_jobs,
                                    stream);
}

// ---- per-batch bookkeeping --------------------------------------------------------------------

/// One earlier saved step a segment is compared with (newest first, as the CPU executor).
struct comparison_plan {
  int64_t previous_step = 0;
  bool shape_matches = false;
  uint64_t slot_offset = 0;  // arena offset of the previous copy
};

struct segment_work {
  stats::statistics_record* record = nullptr;
  const stats::statistics_request* request = nullptr;
  int bins = 0;
  bool split = false;
  int element_size = 0;
  int64_t axis0_batch = 0;
  int64_t axis0_nodes = 0;
  bool has_history = false;
  uint64_t write_offset = 0;   // arena offset receiving this step's copy
  uint32_t compare_first = 0;  // into compares_
  uint32_t compare_count = 0;
  uint32_t num_params = 0;     // allclose parameter sets (≥ 1 with history)
  uint32_t pair_first = 0;     // into pair_acc_: compare_count × num_params
  uint32_t hist_first = 0;     // into hist_acc_ (split segments with histograms)
  bool log_hist = false;       // fixed log-scale histogram requested
  uint64_t log_first = 0;      // into log_acc_ (log_cells cells, the pieces' counts added)
  stats::moments merged;       // split segments: merge of the pieces
};

/// A kept copy of one (tensor, worker) at an earlier step.
struct history_slot {
  uint64_t offset = 0;
  uint64_t capacity = 0;
  int64_t step = 0;
  dtype type = dtype::invalid;
  std::vector<int64_t> shape;
};

/// Table positions [first, first + count) counted with `bins` bins.
struct bins_run {
  int bins = 0;
  uint32_t first = 0;
  uint32_t count = 0;
  uint64_t counts_offset = 0;  // int64 cells into the histogram results
  int64_t total_elements = 0;
};

struct axis0_job {
  uint32_t segment = 0;
  uint32_t predicate = 0;
  bool whole = true;
  uint64_t data_offset = 0;    // device input offset of the region's first element
  int64_t rows = 0;
  int64_t node_begin = 0;
  int64_t num_nodes = 0;
  uint64_t result_offset = 0;  // int64 cells into the axis-0 results
};

struct pair_entry {
  uint32_t segment = 0;
  uint32_t comparison = 0;
  uint32_t param = 0;
  stats::segment previous;  // in the arena
  stats::segment current;   // in the device input
};

struct pair_run {
  stats::allclose_params params;
  uint32_t first = 0;
  uint32_t count = 0;
  int64_t total_elements = 0;
};

/// A stream slot: one CUDA stream with its buffers and the plan of the group in flight on it.
struct stream_slot {
  cudaStream_t stream = nullptr;
  device_block d_input;
  device_block d_scratch;  // tables | results | workspace
  pinned_block h_tables;
  pinned_block h_results;
  memory::pool_lease staging;

  bool busy = false;
  int pass = 1;
  const std::vector<batch_piece>* pieces = nullptr;
  std::vector<uint32_t> order;  // table position → index into *pieces
  std::vector<bins_run> bins_runs;
  std::vector<axis0_job> axis0_jobs;
  std::vector<pair_entry> pairs;
  std::vector<pair_entry> pairs_scratch;
  std::vector<pair_run> pair_runs;
  std::vector<copy_job> copies;
  std::vector<uint32_t> log_positions;  // pass 1: table positions with log-scale histograms
  int64_t log_total_elements = 0;
  // Layout (bytes from the scratch / results base).
  std::size_t tab_segments = 0, tab_moments = 0, tab_prev = 0, tab_cur = 0, tab_copies = 0;
  std::size_t tab_log = 0;
  std::size_t tables_bytes = 0;
  std::size_t res_moments = 0, res_hist = 0, res_axis0 = 0, res_pairs = 0, res_log = 0;
  std::size_t results_bytes = 0;
  std::size_t workspace_offset = 0, workspace_bytes = 0;
};

class cuda_executor final : public statistics_executor {
 public:
  stats::backend backend() const noexcept override { return stats::backend::cuda; }
  memory::pinned_pool* staging_pool() noexcept override { return reader_pool_.get(); }
  const cuda_executor_counters& counters() const noexcept { return counters_; }

  ~cuda_executor() override {
    rule_cuda_.reset();  // it waits for slots_[0]'s stream: before the streams go
    for (stream_slot& l : slots_) {
      if (l.stream != nullptr) {
        static_cast<void>(cudaStreamSynchronize(l.stream));
        l.staging.release();
        static_cast<void>(cudaStreamDestroy(l.stream));
      }
    }
    if (arena_ != nullptr) static_cast<void>(cudaFree(arena_));
  }

  status init(const executor_options& options) {
    std::size_t buffer = options.pinned_pool_bytes / num_pool_buffers;
    buffer = std::max(min_buffer_bytes, buffer / 4096 * 4096);
    buffer_bytes_ = buffer;
    max_segments_ = options.max_segments_per_launch > 0
                        ? std::min<std::size_t>(options.max_segments_per_launch, UINT32_MAX)
                        : default_max_segments;
    auto staging = memory::pinned_pool::create(
        {num_staging_buffers, buffer, memory::pool_memory::pinned});
    if (!staging) return staging.error_status();
    staging_ = std::move(*staging);
    auto reader = memory::pinned_pool::create(
        {num_pool_buffers - num_staging_buffers, buffer, memory::pool_memory::pinned});
    if (!reader) return reader.error_status();
    reader_pool_ = std::move(*reader);
    int64_t ignored = 0;
    for (stream_slot& l : slots_) {
      TRIALSTAT_CUDA_TRY(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
      TRIALSTAT_RETURN_IF_ERROR(l.d_input.reserve(buffer, ignored));
      TRIALSTAT_RETURN_IF_ERROR(l.d_scratch.reserve(std::size_t{4} << 20, ignored));
      TRIALSTAT_RETURN_IF_ERROR(l.h_tables.reserve(std::size_t{1} << 20, ignored));
      TRIALSTAT_RETURN_IF_ERROR(l.h_results.reserve(std::size_t{1} << 20, ignored));
    }
    rule_cuda_ = std::make_unique<detail::cuda_context>(slots_[0].stream);
    limits_.max_span_bytes = buffer;
    limits_.max_pieces = static_cast<uint32_t>(max_segments_);
    limits_.max_result_bytes = std::max<uint64_t>(buffer, uint64_t{8} << 20);
    return status::success();
  }

  status compute(const tensor_batch& batch) override {
    if (batch.segments.empty()) return status::success();
    const auto t0 = std::chrono::steady_clock::now();
    status s = compute_batch(batch);
    if (!s.ok()) abandon();
    counters_.compute_seconds += seconds_since(t0);
    return s;
  }

 private:
  // ---- planning -------------------------------------------------------------------------------

  status prepare(const tensor_batch& batch) {
    const std::size_t n = batch.segments.size();
    TRIALSTAT_RETURN_IF_ERROR(batch.check("cuda executor"));
    TRIALSTAT_RETURN_IF_ERROR(kernels::validate_segments(batch.base, batch.segments, "compute_moments"));
    seg_.resize(n);
    compares_.clear();
    pair_acc_.clear();
    hist_acc_.clear();
    log_acc_.clear();
    keys_seen_.clear();
    arena_copied_ = arena_used_;  // slots planned by earlier batches hold kept copies
    const uint64_t piece_limit = detail::max_piece_bytes(limits_);
    for (std::size_t i = 0; i < n; ++i) {
      segment_work& w = seg_[i];
      w = segment_work{};
      w.record = batch.records[i];
      w.request = batch.requests[i];
      const stats::segment& s = batch.segments[i];
      w.element_size = static_cast<int>(dtype_size_bytes(s.type));
      w.split = static_cast<uint64_t>(s.num_elements) * static_cast<uint64_t>(w.element_size) > piece_limit;
      w.bins = std::max(0, w.request->histogram_bins);
      if (w.bins > (1 << 24)) {
        return status(error_code::invalid_argument,
                      "compute_histograms: bins must be in [1, 2^24], got " + std::to_string(w.bins));
      }
      if (w.split) counters_.split_segments += 1;
      if (w.request->log_histogram) {
        // Every piece (whole or split) is counted in pass 1; the pieces' cells add up here.
        w.log_hist = true;
        w.log_first = log_acc_.size();
        log_acc_.resize(log_acc_.size() + log_cells, 0);
      }
      if (w.split && w.bins > 0) {
        w.hist_first = static_cast<uint32_t>(hist_acc_.size());
        hist_acc_.resize(hist_acc_.size() + static_cast<std::size_t>(w.bins), 0);
      }
      stats::statistics_record& record = *w.record;
      if (!w.request->axis0.empty()) {
        if (!kernels::axis0_layout(record.shape.data(), record.shape.size(), s.num_elements,
                                   w.axis0_batch, w.axis0_nodes)) {
          return status(error_code::invalid_argument,
                        "count_along_axis0: shape of rank " + std::to_string(record.shape.size()) +
                            " does not describe " + std::to_string(s.num_elements) + " elements");
        }
        record.axis0.clear();
        for (std::size_t k = 0; k < w.request->axis0.size(); ++k) {
          stats::axis0_counts& counts = record.axis0.emplace_back();
          counts.batch = w.axis0_batch;
          counts.per_node.assign(static_cast<std::size_t>(w.axis0_nodes), 0);
        }
      }
      if (w.request->history_depth > 0) TRIALSTAT_RETURN_IF_ERROR(plan_history(w, s));
    }
    return grow_arena();
  }

  /// Comparisons against the kept copies (newest first) and the slot for this step's copy,
  /// exactly as cpu_executor's compare_with_history keeps its deque.
  status plan_history(segment_work& w, const stats::segment& s) {
    const stats::statistics_record& record = *w.record;
    const uint64_t key = history_key(record.tensor, record.worker);
    if (std::find(keys_seen_.begin(), keys_seen_.end(), key) != keys_seen_.end()) {
      return status(error_code::invalid_argument,
                    "cuda executor: tensor " + std::to_string(record.tensor) + " of worker " +
                        std::to_string(record.worker) + " appears twice in one batch");
    }
    keys_seen_.push_back(key);
    w.has_history = true;
    std::vector<history_slot>& kept = history_[key];
    w.compare_first = static_cast<uint32_t>(compares_.size());
    for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
      compares_.push_back({it->step, it->shape == record.shape && it->type == record.type, it->offset});
    }
    w.compare_count = static_cast<uint32_t>(kept.size());
    w.num_params = static_cast<uint32_t>(std::max<std::size_t>(1, w.request->allclose.size()));
    w.pair_first = static_cast<uint32_t>(pair_acc_.size());
    pair_acc_.resize(pair_acc_.size() + std::size_t{w.compare_count} * w.num_params, stats::pairwise{});
    // Keep this step's copy, recycling the oldest slot once the window is full.
    if (!kept.empty() && static_cast<int>(kept.size()) >= w.request->history_depth) {
      std::rotate(kept.begin(), kept.begin() + 1, kept.end());
    } else {
      kept.emplace_back();
    }
    history_slot& slot = kept.back();
    const uint64_t bytes = static_cast<uint64_t>(s.num_elements) * static_cast<uint64_t>(w.element_size);
    if (slot.capacity < bytes || slot.capacity == 0) {
      slot.offset = arena_used_;
      slot.capacity = align_up(std::max<uint64_t>(bytes, 1));
      arena_used_ += slot.capacity;
    }
    slot.step = record.step;
    slot.type = record.type;
    slot.shape = record.shape;
    w.write_offset = slot.offset;
    return status::success();
  }

  /// Make the arena hold every slot planned so far (streams are idle between batches).
  status grow_arena() {
    if (arena_used_ <= arena_capacity_) return status::success();
    const uint64_t capacity = std::max<uint64_t>({arena_used_, arena_capacity_ * 2, uint64_t{16} << 20});
    void* fresh = nullptr;
    const cudaError_t err = cudaMalloc(&fresh, capacity);
    if (err != cudaSuccess) {
      status failure = ::trialstat::detail::cuda_failure(err, "cudaMalloc (pairwise history arena)", __FILE__, __LINE__);
      return status(failure.code(), "pairwise history needs " + std::to_string(arena_used_) +
                                        " bytes of device memory: " + failure.message());
    }
    if (arena_ != nullptr) {
      // Both streams are idle here (the previous batch drained them); copy the kept slots on
      // one and wait, so nothing reads the old arena once it is freed.
      const cudaStream_t stream = slots_[0].stream;
      if (arena_copied_ > 0) {
        TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(fresh, arena_, arena_copied_, cudaMemcpyDeviceToDevice, stream));
      }
      TRIALSTAT_CUDA_TRY(cudaStreamSynchronize(stream));
      TRIALSTAT_CUDA_TRY(cudaFree(arena_));
      counters_.buffer_growths += 1;
    }
    arena_ = static_cast<std::byte*>(fresh);
    arena_capacity_ = capacity;
    counters_.history_bytes = static_cast<int64_t>(capacity);
    return status::success();
  }

  /// Bytes of results (and table entries) a piece adds to its group, for packing.
  uint64_t piece_result_bytes(const batch_piece& p, int pass) const {
    const segment_work& w = seg_[p.segment];
    uint64_t bytes = sizeof(stats::moments) + 64;
    if (w.bins > 0 && (pass == 2 || p.whole())) bytes += static_cast<uint64_t>(w.bins) * 8;
    if (pass == 1) {
      if (w.log_hist) bytes += log_cells * 8 + sizeof(stats::segment);
      if (!w.request->axis0.empty()) {
        const uint64_t nodes = p.whole() ? static_cast<uint64_t>(w.axis0_nodes)
                                         : std::min<uint64_t>(static_cast<uint64_t>(w.axis0_nodes),
                                                              static_cast<uint64_t>(p.element_count));
        bytes += (nodes + 3) * 8 * w.request->axis0.size();
      }
      if (w.has_history) {
        bytes += uint64_t{w.compare_count} * w.num_params * (sizeof(stats::pairwise) + 32);
        bytes += sizeof(copy_job);
      }
    }
    return bytes;
  }

  // ---- one batch ------------------------------------------------------------------------------

  status compute_batch(const tensor_batch& batch) {
    counters_.batches += 1;
    // Pinned or registered memory is copied directly; pageable bytes are staged; device and
    // managed memory are rejected (plan_batch_source: the bytes are also read on the host),
    // before anything (the history plan) changes.
    TRIALSTAT_RETURN_IF_ERROR(detail::plan_batch_source(source_memory_of(batch.base), direct_source_));
    TRIALSTAT_RETURN_IF_ERROR(prepare(batch));
    TRIALSTAT_RETURN_IF_ERROR(detail::split_segments(batch.segments, limits_, pieces_));
    const auto base_address = reinterpret_cast<uintptr_t>(batch.base);

    result_bytes_.resize(pieces_.size());
    for (std::size_t i = 0; i < pieces_.size(); ++i) result_bytes_[i] = piece_result_bytes(pieces_[i], 1);
    detail::group_pieces(pieces_, result_bytes_, base_address, limits_, groups_);
    TRIALSTAT_RETURN_IF_ERROR(run_pass(1, batch, pieces_, groups_));

    // Second pass: histograms of split segments over their merged [min, max].
    pieces2_.clear();
    for (const batch_piece& p : pieces_) {
      const segment_work& w = seg_[p.segment];
      if (w.split && w.bins > 0 && w.merged.has_finite() && w.merged.min <= w.merged.max) {
        pieces2_.push_back(p);
      }
    }
    if (!pieces2_.empty()) {
      result_bytes_.resize(pieces2_.size());
      for (std::size_t i = 0; i < pieces2_.size(); ++i) result_bytes_[i] = piece_result_bytes(pieces2_[i], 2);
      detail::group_pieces(pieces2_, result_bytes_, base_address, limits_, groups2_);
      counters_.second_pass_groups += static_cast<int64_t>(groups2_.size());
      TRIALSTAT_RETURN_IF_ERROR(run_pass(2, batch, pieces2_, groups2_));
    }
    TRIALSTAT_RETURN_IF_ERROR(finish_records());
    // The rule statistics without a place in the fused launches (percentiles, equality counts,
    // channel sums, kept values): one launch each over the whole batch (task tables), on the
    // first stream slot's stream (idle after the harvest) with memory reused from batch to batch.
    return detail::compute_rule_statistics_batch(batch, *rule_cuda_, rule_buffers_);
  }

  status run_pass(int pass, const tensor_batch& batch, const std::vector<batch_piece>& pieces,
                  const std::vector<piece_group>& groups) {
    for (std::size_t g = 0; g < groups.size(); ++g) {
      stream_slot& l = slots_[g % num_stream_slots];
      if (l.busy) TRIALSTAT_RETURN_IF_ERROR(wait_and_harvest(l));
      TRIALSTAT_RETURN_IF_ERROR(enqueue_group(l, pass, batch, pieces, groups[g]));
      counters_.groups += 1;
    }
    for (std::size_t k = 0; k < num_stream_slots; ++k) {
      // Harvest in submission order: the stream slot of the older group first.
      stream_slot& l = slots_[(groups.size() + k) % num_stream_slots];
      if (l.busy) TRIALSTAT_RETURN_IF_ERROR(wait_and_harvest(l));
    }
    return status::success();
  }

  /// Lay out the group's tables and results on stream slot `l` (idle) and fill the host tables.
  status plan_group(stream_slot& l, int pass, const tensor_batch& batch,
                    const std::vector<batch_piece>& pieces, const piece_group& group) {
    l.pass = pass;
    l.pieces = &pieces;
    l.order.clear();
    l.bins_runs.clear();
    l.axis0_jobs.clear();
    l.pairs.clear();
    l.pair_runs.clear();
    l.copies.clear();
    l.log_positions.clear();
    l.log_total_elements = 0;
    const auto device_offset = [&](const batch_piece& p) { return p.offset_bytes - group.host_begin; };
    const auto piece_bins = [&](const batch_piece& p) {
      const segment_work& w = seg_[p.segment];
      return (pass == 2 || p.whole()) ? w.bins : 0;
    };

    // Table order: pieces with histograms, grouped by bin count (first-seen order), then the rest.
    uint64_t hist_cells = 0;
    for (uint32_t i = 0; i < group.count; ++i) {
      const int bins = piece_bins(pieces[group.first + i]);
      if (bins <= 0) continue;
      bool seen = false;
      for (const bins_run& r : l.bins_runs) seen = seen || r.bins == bins;
      if (seen) continue;
      bins_run run;
      run.bins = bins;
      run.first = static_cast<uint32_t>(l.order.size());
      run.counts_offset = hist_cells;
      for (uint32_t j = i; j < group.count; ++j) {
        const batch_piece& p = pieces[group.first + j];
        if (piece_bins(p) != bins) continue;
        l.order.push_back(group.first + j);
        run.total_elements += p.element_count;
      }
      run.count = static_cast<uint32_t>(l.order.size()) - run.first;
      hist_cells += uint64_t{run.count} * static_cast<uint64_t>(bins);
      l.bins_runs.push_back(run);
    }
    for (uint32_t i = 0; i < group.count; ++i) {
      if (piece_bins(pieces[group.first + i]) <= 0) l.order.push_back(group.first + i);
    }
    const std::size_t n = l.order.size();
    int64_t total_elements = 0;
    for (uint32_t index : l.order) total_elements += pieces[index].element_count;

    uint64_t axis0_cells = 0;
    if (pass == 1) {
      // Log-scale histograms: their own segment table (a subset of the group's, in table order).
      for (std::size_t i = 0; i < n; ++i) {
        const batch_piece& p = pieces[l.order[i]];
        if (!seg_[p.segment].log_hist) continue;
        l.log_positions.push_back(static_cast<uint32_t>(i));
        l.log_total_elements += p.element_count;
      }
      for (uint32_t index : l.order) {
        const batch_piece& p = pieces[index];
        const segment_work& w = seg_[p.segment];
        // Axis-0 counts: the whole tensor, or the ≤ 3 contiguous rectangles of a piece.
        for (uint32_t k = 0; k < w.request->axis0.size(); ++k) {
          if (p.whole()) {
            l.axis0_jobs.push_back({p.segment, k, true, device_offset(p), w.axis0_batch, 0,
                                    w.axis0_nodes, axis0_cells});
            axis0_cells += static_cast<uint64_t>(w.axis0_nodes);
            continue;
          }
          detail::axis0_region regions[3];
          const int count = detail::axis0_regions(w.axis0_nodes, p.element_begin, p.element_count, regions);
          for (int r = 0; r < count; ++r) {
            const uint64_t first_element = static_cast<uint64_t>(regions[r].element_begin(w.axis0_nodes));
            l.axis0_jobs.push_back(
                {p.segment, k, false,
                 device_offset(p) + (first_element - static_cast<uint64_t>(p.element_begin)) *
                                        static_cast<uint64_t>(w.element_size),
                 regions[r].num_rows, regions[r].node_begin, regions[r].num_nodes, axis0_cells});
            axis0_cells += static_cast<uint64_t>(regions[r].num_nodes);
          }
        }
        if (!w.has_history) continue;
        // Pairwise entries against the matching kept copies, and this step's copy into its slot.
        const stats::segment cur{device_offset(p), p.element_count, batch.segments[p.segment].type};
        for (uint32_t c = 0; c < w.compare_count; ++c) {
          const comparison_plan& cmp = compares_[w.compare_first + c];
          if (!cmp.shape_matches) continue;
          const stats::segment prev{cmp.slot_offset + static_cast<uint64_t>(p.element_begin) *
                                                          static_cast<uint64_t>(w.element_size),
                                    p.element_count, cur.type};
          for (uint32_t q = 0; q < w.num_params; ++q) l.pairs.push_back({p.segment, c, q, prev, cur});
        }
        const uint64_t dst = w.write_offset + static_cast<uint64_t>(p.element_begin) *
                                                  static_cast<uint64_t>(w.element_size);
        if (p.size_bytes > 0) l.copies.push_back({cur.offset_bytes, dst, p.size_bytes});
      }
      // Pairwise entries grouped by allclose parameters (one launch per distinct set).
      l.pairs_scratch.clear();
      for (std::size_t i = 0; i < l.pairs.size(); ++i) {
        const stats::allclose_params params = params_of(l.pairs[i]);
        bool seen = false;
        for (const pair_run& r : l.pair_runs) seen = seen || r.params == params;
        if (seen) continue;
        pair_run run;
        run.params = params;
        run.first = static_cast<uint32_t>(l.pairs_scratch.size());
        for (std::size_t j = i; j < l.pairs.size(); ++j) {
          if (!(params_of(l.pairs[j]) == params)) continue;
          l.pairs_scratch.push_back(l.pairs[j]);
          run.total_elements += l.pairs[j].previous.num_elements;
        }
        run.count = static_cast<uint32_t>(l.pairs_scratch.size()) - run.first;
        l.pair_runs.push_back(run);
      }
      l.pairs.swap(l.pairs_scratch);
    }
    const std::size_t np = l.pairs.size();

    // Layout: tables (uploaded) | results (downloaded) | kernel workspace.
    std::size_t at = 0;
    const auto take = [&](std::size_t bytes) {
      const std::size_t offset = at;
      at += align_up(bytes);
      return offset;
    };
    l.tab_segments = take(n * sizeof(stats::segment));
    l.tab_moments = take(pass == 2 ? n * sizeof(stats::moments) : 0);
    l.tab_prev = take(np * sizeof(stats::segment));
    l.tab_cur = take(np * sizeof(stats::segment));
    l.tab_copies = take(l.copies.size() * sizeof(copy_job));
    const std::size_t nlog = l.log_positions.size();
    l.tab_log = take(nlog * sizeof(stats::segment));
    l.tables_bytes = at;
    std::size_t r = 0;
    const auto take_result = [&](std::size_t bytes) {
      const std::size_t offset = r;
      r += align_up(bytes);
      return offset;
    };
    l.res_moments = take_result(pass == 1 ? n * sizeof(stats::moments) : 0);
    l.res_hist = take_result(hist_cells * sizeof(int64_t));
    l.res_axis0 = take_result(axis0_cells * sizeof(int64_t));
    l.res_pairs = take_result(np * sizeof(stats::pairwise));
    l.res_log = take_result(nlog * log_cells * sizeof(int64_t));
    l.results_bytes = r;

    // Workspace: the largest any launch of the group asks for (they run one after another).
    std::size_t workspace = 0;
    std::size_t asked = 0;
    const kernels::device_batch all{nullptr, nullptr, static_cast<int64_t>(n), total_elements};
    if (pass == 1) {
      TRIALSTAT_RETURN_IF_ERROR(kernels::launch_moments(all, nullptr, nullptr, &asked, l.stream));
      workspace = std::max(workspace, asked);
    }
    for (const bins_run& run : l.bins_runs) {
      const kernels::device_batch sub{nullptr, nullptr, run.count, run.total_elements};
      TRIALSTAT_RETURN_IF_ERROR(
          kernels::launch_histograms(sub, nullptr, run.bins, nullptr, nullptr, &asked, l.stream));
      workspace = std::max(workspace, asked);
    }
    for (const pair_run& run : l.pair_runs) {
      const kernels::device_batch sub{nullptr, nullptr, run.count, run.total_elements};
      TRIALSTAT_RETURN_IF_ERROR(
          kernels::launch_pairwise(sub, sub, run.params, nullptr, nullptr, &asked, l.stream));
      workspace = std::max(workspace, asked);
    }
    if (nlog > 0) {
      const kernels::device_batch sub{nullptr, nullptr, static_cast<int64_t>(nlog), l.log_total_elements};
      TRIALSTAT_RETURN_IF_ERROR(kernels::launch_log_histograms(sub, nullptr, nullptr, &asked, l.stream));
      workspace = std::max(workspace, asked);
    }
    if (!l.copies.empty()) {
      asked = 0;
      TRIALSTAT_CUDA_TRY(history_copy(nullptr, asked, nullptr, static_cast<int64_t>(l.copies.size()),
                                      nullptr, nullptr, l.stream));
      workspace = std::max(workspace, asked);
    }
    l.workspace_offset = align_up(l.tables_bytes + l.results_bytes);
    l.workspace_bytes = std::max<std::size_t>(workspace, 1);

    TRIALSTAT_RETURN_IF_ERROR(l.d_scratch.reserve(l.workspace_offset + l.workspace_bytes, counters_.buffer_growths));
    TRIALSTAT_RETURN_IF_ERROR(l.h_tables.reserve(l.tables_bytes, counters_.buffer_growths));
    TRIALSTAT_RETURN_IF_ERROR(l.h_results.reserve(l.results_bytes, counters_.buffer_growths));

    // Host tables.
    std::byte* h = l.h_tables.get();
    auto* segments = reinterpret_cast<stats::segment*>(h + l.tab_segments);
    for (std::size_t i = 0; i < n; ++i) {
      const batch_piece& p = pieces[l.order[i]];
      segments[i] = {device_offset(p), p.element_count, batch.segments[p.segment].type};
    }
    if (pass == 2) {
      auto* moments = reinterpret_cast<stats::moments*>(h + l.tab_moments);
      for (std::size_t i = 0; i < n; ++i) moments[i] = seg_[pieces[l.order[i]].segment].merged;
    }
    auto* prev = reinterpret_cast<stats::segment*>(h + l.tab_prev);
    auto* cur = reinterpret_cast<stats::segment*>(h + l.tab_cur);
    for (std::size_t i = 0; i < np; ++i) {
      prev[i] = l.pairs[i].previous;
      cur[i] = l.pairs[i].current;
    }
    if (!l.copies.empty()) {
      std::memcpy(h + l.tab_copies, l.copies.data(), l.copies.size() * sizeof(copy_job));
    }
    auto* log_segments = reinterpret_cast<stats::segment*>(h + l.tab_log);
    for (std::size_t k = 0; k < nlog; ++k) log_segments[k] = segments[l.log_positions[k]];
    return status::success();
  }

  stats::allclose_params params_of(const pair_entry& e) const {
    const auto& sets = seg_[e.segment].request->allclose;
    return sets.empty() ? stats::allclose_params{} : sets[e.param];
  }

  status enqueue_group(stream_slot& l, int pass, const tensor_batch& batch,
                       const std::vector<batch_piece>& pieces, const piece_group& group) {
    TRIALSTAT_RETURN_IF_ERROR(plan_group(l, pass, batch, pieces, group));
    const cudaStream_t stream = l.stream;
    std::byte* scratch = l.d_scratch.get();
    std::byte* results = scratch + l.tables_bytes;
    const std::size_t span = group.span_bytes();

    // Bytes to the device: straight from pinned/device memory, else through a staging buffer
    // that goes back to the pool once an event after the copy has completed.
    const std::byte* source = batch.base + group.host_begin;
    if (!direct_source_ && span > 0) {
      auto lease = staging_->acquire();
      if (!lease) return lease.error_status();
      l.staging = std::move(*lease);
      const auto t0 = std::chrono::steady_clock::now();
      std::memcpy(l.staging.data(), source, span);
      counters_.stage_seconds += seconds_since(t0);
      counters_.bytes_staged += static_cast<int64_t>(span);
      source = l.staging.data();
    }
    if (span > 0) {
      TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(l.d_input.get(), source, span, cudaMemcpyDefault, stream));
    }
    counters_.bytes_to_device += static_cast<int64_t>(span);
    TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(scratch, l.h_tables.get(), l.tables_bytes,
                                       cudaMemcpyHostToDevice, stream));
    if (l.staging) TRIALSTAT_RETURN_IF_ERROR(l.staging.release_after(stream));
    l.busy = true;  // from here on, harvesting (or abandoning) must wait for the stream

    const auto* d_segments = reinterpret_cast<const stats::segment*>(scratch + l.tab_segments);
    std::byte* workspace = scratch + l.workspace_offset;
    std::size_t workspace_bytes = l.workspace_bytes;
    const std::size_t n = l.order.size();
    int64_t total_elements = 0;
    for (uint32_t index : l.order) total_elements += pieces[index].element_count;
    const kernels::device_batch all{l.d_input.get(), d_segments, static_cast<int64_t>(n), total_elements};

    auto* d_moments = reinterpret_cast<stats::moments*>(pass == 1 ? results + l.res_moments
                                                                  : scratch + l.tab_moments);
    if (pass == 1) {
      TRIALSTAT_RETURN_IF_ERROR(
          kernels::launch_moments(all, d_moments, workspace, &workspace_bytes, stream));
    }
    auto* d_hist = reinterpret_cast<int64_t*>(results + l.res_hist);
    for (const bins_run& run : l.bins_runs) {
      const kernels::device_batch sub{l.d_input.get(), d_segments + run.first, run.count,
                                      run.total_elements};
      workspace_bytes = l.workspace_bytes;
      TRIALSTAT_RETURN_IF_ERROR(kernels::launch_histograms(sub, d_moments + run.first, run.bins,
                                                           d_hist + run.counts_offset, workspace,
                                                           &workspace_bytes, stream));
    }
    auto* d_axis0 = reinterpret_cast<int64_t*>(results + l.res_axis0);
    for (const axis0_job& job : l.axis0_jobs) {
      const segment_work& w = seg_[job.segment];
      TRIALSTAT_RETURN_IF_ERROR(kernels::launch_axis0_counts(
          l.d_input.get() + job.data_offset, batch.segments[job.segment].type, job.rows,
          job.num_nodes, w.request->axis0[job.predicate], d_axis0 + job.result_offset, stream));
    }
    auto* d_pairs = reinterpret_cast<stats::pairwise*>(results + l.res_pairs);
    const auto* d_prev = reinterpret_cast<const stats::segment*>(scratch + l.tab_prev);
    const auto* d_cur = reinterpret_cast<const stats::segment*>(scratch + l.tab_cur);
    for (const pair_run& run : l.pair_runs) {
      const kernels::device_batch previous{arena_, d_prev + run.first, run.count, run.total_elements};
      const kernels::device_batch current{l.d_input.get(), d_cur + run.first, run.count,
                                          run.total_elements};
      workspace_bytes = l.workspace_bytes;
      TRIALSTAT_RETURN_IF_ERROR(kernels::launch_pairwise(previous, current, run.params,
                                                         d_pairs + run.first, workspace,
                                                         &workspace_bytes, stream));
    }
    if (!l.log_positions.empty()) {
      const kernels::device_batch sub{l.d_input.get(),
                                      reinterpret_cast<const stats::segment*>(scratch + l.tab_log),
                                      static_cast<int64_t>(l.log_positions.size()),
                                      l.log_total_elements};
      workspace_bytes = l.workspace_bytes;
      TRIALSTAT_RETURN_IF_ERROR(kernels::launch_log_histograms(
          sub, reinterpret_cast<int64_t*>(results + l.res_log), workspace, &workspace_bytes, stream));
    }
    if (!l.copies.empty()) {
      // After the pairwise launches on this stream: a recycled slot is read before it is
      // rewritten. The workspace (sized for this copy too) is free again by stream order.
      workspace_bytes = l.workspace_bytes;
      TRIALSTAT_CUDA_TRY(history_copy(workspace, workspace_bytes,
                                      reinterpret_cast<const copy_job*>(scratch + l.tab_copies),
                                      static_cast<int64_t>(l.copies.size()), l.d_input.get(),
                                      arena_, stream));
    }
    if (l.results_bytes > 0) {
      TRIALSTAT_CUDA_TRY(cudaMemcpyAsync(l.h_results.get(), results, l.results_bytes,
                                         cudaMemcpyDeviceToHost, stream));
    }
    return status::success();
  }

  // ---- results --------------------------------------------------------------------------------

  status wait_and_harvest(stream_slot& l) {
    const auto t0 = std::chrono::steady_clock::now();
    const cudaError_t err = cudaStreamSynchronize(l.stream);
    counters_.wait_seconds += seconds_since(t0);
    l.busy = false;
    if (err != cudaSuccess) return ::trialstat::detail::cuda_failure(err, "cudaStreamSynchronize", __FILE__, __LINE__);
    return harvest(l);
  }

  /// The error for a result the kernels poisoned (result_poison.hpp): never a record value.
  static status poisoned(const char* what, const stats::statistics_record& record) {
    return status(error_code::cuda_error,
                  std::string("cuda executor: ") + what + " of tensor " + std::to_string(record.tensor) +
                      " at step " + std::to_string(record.step) +
                      " came back poisoned (a kernel could not compute it: workspace smaller than "
                      "the batch, or an unsupported dtype on the device)");
  }

  /// Move a finished group's results into the records and accumulators. Every result kind is
  /// checked for the kernels' poison before it is used.
  status harvest(const stream_slot& l) {
    const std::vector<batch_piece>& pieces = *l.pieces;
    const std::byte* h = l.h_results.get();
    const auto* moments = reinterpret_cast<const stats::moments*>(h + l.res_moments);
    const auto* hist = reinterpret_cast<const int64_t*>(h + l.res_hist);
    const auto* axis0 = reinterpret_cast<const int64_t*>(h + l.res_axis0);
    const auto* pairs = reinterpret_cast<const stats::pairwise*>(h + l.res_pairs);
    const auto* log_counts = reinterpret_cast<const int64_t*>(h + l.res_log);
    if (l.pass == 1) {
      for (std::size_t k = 0; k < l.log_positions.size(); ++k) {
        segment_work& w = seg_[pieces[l.order[l.log_positions[k]]].segment];
        const int64_t* part = log_counts + k * log_cells;
        if (kernels::counts_poisoned(part, log_cells)) return poisoned("log-scale histogram", *w.record);
        detail::add_counts(std::span<int64_t>(log_acc_).subspan(w.log_first, log_cells), {part, log_cells});
      }
      for (std::size_t i = 0; i < l.order.size(); ++i) {
        const batch_piece& p = pieces[l.order[i]];
        segment_work& w = seg_[p.segment];
        if (kernels::is_poisoned(moments[i])) return poisoned("moments", *w.record);
        if (p.whole()) {
          w.record->moments = moments[i];
          if (w.record->num_elements == 1) w.record->scalar = scalar_from_moments(moments[i]);
        } else {
          w.merged = stats::merge(w.merged, moments[i]);  // pieces arrive in element order
        }
      }
      for (const bins_run& run : l.bins_runs) {
        for (uint32_t i = 0; i < run.count; ++i) {
          const segment_work& w = seg_[pieces[l.order[run.first + i]].segment];
          const int64_t* counts = hist + run.counts_offset + uint64_t{i} * static_cast<uint64_t>(run.bins);
          if (kernels::counts_poisoned(counts, static_cast<std::size_t>(run.bins))) {
            return poisoned("histogram", *w.record);
          }
          set_histogram(*w.record, moments[run.first + i], run.bins, counts);
        }
      }
      for (const axis0_job& job : l.axis0_jobs) {
        std::vector<int64_t>& per_node = seg_[job.segment].record->axis0[job.predicate].per_node;
        const int64_t* part = axis0 + job.result_offset;
        if (job.whole) {
          std::copy(part, part + job.num_nodes, per_node.begin());
        } else {
          detail::add_counts(std::span<int64_t>(per_node).subspan(static_cast<std::size_t>(job.node_begin)),
                             {part, static_cast<std::size_t>(job.num_nodes)});
        }
      }
      for (std::size_t i = 0; i < l.pairs.size(); ++i) {
        const pair_entry& e = l.pairs[i];
        const segment_work& w = seg_[e.segment];
        if (kernels::is_poisoned(pairs[i])) return poisoned("pairwise comparison", *w.record);
        stats::pairwise& acc = pair_acc_[w.pair_first + e.comparison * w.num_params + e.param];
        acc = detail::merge_pairwise(acc, pairs[i]);
      }
    } else {
      for (const bins_run& run : l.bins_runs) {
        for (uint32_t i = 0; i < run.count; ++i) {
          const segment_work& w = seg_[pieces[l.order[run.first + i]].segment];
          const int64_t* part = hist + run.counts_offset + uint64_t{i} * static_cast<uint64_t>(run.bins);
          if (kernels::counts_poisoned(part, static_cast<std::size_t>(run.bins))) {
            return poisoned("histogram", *w.record);
          }
          detail::add_counts(std::span<int64_t>(hist_acc_).subspan(w.hist_first, static_cast<std::size_t>(w.bins)),
                             {part, static_cast<std::size_t>(run.bins)});
        }
      }
    }
    return status::success();
  }

  /// The record's histogram over [min, max] of `m`, as compute_histograms fills it.
  static void set_histogram(stats::statistics_record& record, const stats::moments& m, int bins,
                            const int64_t* counts) {
    stats::histogram h;
    if (m.has_finite() && m.min <= m.max) {
      const kernels::histogram_params p = kernels::make_histogram_params(m.min, m.max, bins);
      h.bins = bins;
      h.lo = p.lo;
      h.hi = p.hi;
      h.degenerate = p.degenerate;
      h.counts.assign(counts, counts + bins);
    }
    record.histogram = std::move(h);
  }


  status finish_records() {
    for (segment_work& w : seg_) {
      stats::statistics_record& record = *w.record;
      if (w.split) {
        record.moments = w.merged;
        if (record.num_elements == 1) record.scalar = scalar_from_moments(w.merged);
        if (w.bins > 0) set_histogram(record, w.merged, w.bins, hist_acc_.data() + w.hist_first);
      }
      if (w.log_hist) {
        record.log_histogram = stats::log_histogram_from_cells(log_acc_.data() + w.log_first);
      }
      if (!w.has_history) continue;
      record.previous.clear();
      for (uint32_t c = 0; c < w.compare_count; ++c) {
        const comparison_plan& cmp = compares_[w.compare_first + c];
        stats::previous_comparison& comparison = record.previous.emplace_back();
        comparison.previous_step = cmp.previous_step;
        comparison.shape_matches = cmp.shape_matches;
        if (!cmp.shape_matches) continue;
        const stats::pairwise* results = pair_acc_.data() + w.pair_first + c * w.num_params;
        comparison.result = results[0];
        for (uint32_t q = 0; q < w.num_params; ++q) {
          comparison.allclose_violations.push_back(results[q].allclose_violations);
        }
      }
    }
    return status::success();
  }

  /// After an error: wait for both streams (their copies may read the caller's buffers) and
  /// give staging buffers back. The history is no longer trustworthy; the pipeline stops.
  void abandon() noexcept {
    for (stream_slot& l : slots_) {
      if (l.stream != nullptr) static_cast<void>(cudaStreamSynchronize(l.stream));
      l.busy = false;
      l.staging.release();
    }
    static_cast<void>(cudaGetLastError());
  }

  std::size_t buffer_bytes_ = 0;
  std::size_t max_segments_ = default_max_segments;
  detail::split_limits limits_;
  std::unique_ptr<memory::pinned_pool> staging_;
  std::unique_ptr<memory::pinned_pool> reader_pool_;
  stream_slot slots_[num_stream_slots];
  /// The rule statistics' context (host/stats/tensor_statistics.hpp) on slots_[0]'s stream.
  std::unique_ptr<detail::cuda_context> rule_cuda_;
  detail::rule_task_buffers rule_buffers_;  // host side of the batched rule statistics, reused
  bool direct_source_ = false;

  std::vector<segment_work> seg_;
  std::vector<comparison_plan> compares_;
  std::vector<stats::pairwise> pair_acc_;
  std::vector<int64_t> hist_acc_;
  std::vector<int64_t> log_acc_;  // [segments with log-scale histograms × log_cells]
  std::vector<uint64_t> keys_seen_;
  std::vector<batch_piece> pieces_, pieces2_;
  std::vector<piece_group> groups_, groups2_;
  std::vector<uint64_t> result_bytes_;

  std::unordered_map<uint64_t, std::vector<history_slot>> history_;
  std::byte* arena_ = nullptr;
  uint64_t arena_capacity_ = 0;
  uint64_t arena_used_ = 0;
  uint64_t arena_copied_ = 0;  // bytes of the arena holding planned slots before this batch

  cuda_executor_counters counters_;
};

}  // namespace

result<std::unique_ptr<statistics_executor>> make_cuda_statistics_executor(
    const executor_options& options) {
  auto executor = std::make_unique<cuda_executor>();
  TRIALSTAT_RETURN_IF_ERROR(executor->init(options));
  return std::unique_ptr<statistics_executor>(std::move(executor));
}

std::optional<cuda_executor_counters> cuda_counters(const statistics_executor& executor) {
  const auto* cuda = dynamic_cast<const cuda_executor*>(&executor);
  if (cuda == nullptr) return std::nullopt;
  return cuda->counters();
}

}  // namespace trialstat::stats
