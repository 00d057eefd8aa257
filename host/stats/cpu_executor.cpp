// SPDX-License-Identifier: Apache-2.0
// The CPU statistics executor: the CPU twins over a batch's segments, plus host-memory history
// for pairwise statistics (cpu_pairwise_history.hpp). Each batch is split by tensor size:
//  - tensors within the cache budget (executor_options::cpu_block_bytes) are blocked: each
//    one's moments, histograms and pairwise pass run back to back on one thread while it is in
//    that core's L2 (cpu_tensor_statistics.hpp), the tensors spread over the worker pool;
//  - larger tensors are streamed: each statistic is one pass over all of them, its chunks spread
//    over the pool (the moments first: the fixed-bin histograms need their range).
// Both paths run the same chunk functions merged in the same order, so a record does not
// depend on the path, the budget or the thread count. Axis-0 counts and rule statistics follow,
// tensor by tensor.
#include <algorithm>
#include <limits>

#include "host/stats/cpu_pairwise_history.hpp"
#include "host/stats/cpu_tensor_statistics.hpp"
#include "host/stats/rule_statistics.hpp"
#include "kernels/common/cpu_parallel.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/stats/histogram.hpp"
#include "trialstat/stats/log_histogram.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/statistics_executor.hpp"

namespace trialstat::stats {
namespace {

class cpu_executor final : public statistics_executor {
 public:
  explicit cpu_executor(std::size_t block_bytes) : block_bytes_(block_bytes) {}

  stats::backend backend() const noexcept override { return stats::backend::cpu; }

  status compute(const tensor_batch& batch) override {
    const std::size_t n = batch.segments.size();
    if (n == 0) return status::success();
    TRIALSTAT_RETURN_IF_ERROR(batch.check("cpu executor"));
    TRIALSTAT_RETURN_IF_ERROR(kernels::validate_segments(batch.base, batch.segments, "compute_moments"));
    split(batch);
    // History windows are looked up here, on one thread; the blocked tasks compare their
    // tensors with them unless two records of the batch share a window (then every comparison
    // runs below, in record order).
    windows_.assign(n, nullptr);
    for (std::size_t i = 0; i < n; ++i) {
      if (batch.requests[i]->history_depth > 0) windows_[i] = &history_.window_of(*batch.records[i]);
    }
    const bool blocked_pairwise = windows_distinct();
    TRIALSTAT_RETURN_IF_ERROR(compute_streamed(batch));
    TRIALSTAT_RETURN_IF_ERROR(compute_blocked(batch, blocked_pairwise));
    for (std::size_t i = 0; i < n; ++i) {
      stats::statistics_record& record = *batch.records[i];
      const stats::statistics_request& request = *batch.requests[i];
      const tensor_view view{batch.base + batch.segments[i].offset_bytes, record.type,
                             record.shape, record.num_elements, memory_kind::host};
      for (const auto& predicate : request.axis0) {
        auto counts = stats::count_along_axis0(view, predicate, stats::backend::cpu);
        if (!counts) return counts.error_status();
        record.axis0.push_back(std::move(*counts));
      }
      // Statistics added by later rules go here (one request field → one record field).
      TRIALSTAT_RETURN_IF_ERROR(
          detail::compute_rule_statistics(request, view, record, stats::backend::cpu, nullptr));
      const bool compared = blocked_[i] && blocked_pairwise;
      if (windows_[i] != nullptr && !compared) {
        TRIALSTAT_RETURN_IF_ERROR(detail::compare_with_history(request, view, record, *windows_[i]));
      }
    }
    return status::success();
  }

 private:
  /// blocked_[i]: whether tensor i fits the cache budget; blocked_list_ / streamed_ the indices.
  void split(const tensor_batch& batch) {
    const std::size_t n = batch.segments.size();
    blocked_.assign(n, false);
    blocked_list_.clear();
    streamed_.clear();
    for (std::size_t i = 0; i < n; ++i) {
      const stats::segment& seg = batch.segments[i];
      const auto bytes = static_cast<std::size_t>(seg.num_elements) * dtype_size_bytes(seg.type);
      blocked_[i] = detail::fits_cpu_block(bytes, block_bytes_);
      (blocked_[i] ? blocked_list_ : streamed_).push_back(i);
    }
  }

  /// Whether no two blocked records share a history window.
  bool windows_distinct() {
    sorted_windows_.clear();
    for (std::size_t i : blocked_list_) {
      if (windows_[i] != nullptr) sorted_windows_.push_back(windows_[i]);
    }
    std::sort(sorted_windows_.begin(), sorted_windows_.end());
    return std::adjacent_find(sorted_windows_.begin(), sorted_windows_.end()) == sorted_windows_.end();
  }

  /// Every statistic of each blocked tensor back to back, the tensors spread over the pool.
  status compute_blocked(const tensor_batch& batch, bool with_pairwise) {
    if (blocked_list_.empty()) return status::success();
    task_status_.assign(blocked_list_.size(), status::success());
    int64_t work = 0;
    for (std::size_t i : blocked_list_) work += batch.segments[i].num_elements;
    kernels::cpu_parallel_for(static_cast<int64_t>(blocked_list_.size()), work, [&](int64_t k) {
      const std::size_t i = blocked_list_[static_cast<std::size_t>(k)];
      task_status_[static_cast<std::size_t>(k)] = detail::compute_tensor_statistics(
          batch.base, batch.segments[i], *batch.requests[i], *batch.records[i],
          with_pairwise ? windows_[i] : nullptr);
    });
    for (const status& s : task_status_) TRIALSTAT_RETURN_IF_ERROR(s);
    return status::success();
  }

  /// The streamed tensors: one pass per statistic over all of them.
  status compute_streamed(const tensor_batch& batch) {
    if (streamed_.empty()) return status::success();
    segments_.clear();
    for (std::size_t i : streamed_) segments_.push_back(batch.segments[i]);
    moments_.resize(streamed_.size());
    TRIALSTAT_RETURN_IF_ERROR(
        stats::compute_moments(batch.base, segments_, moments_, stats::backend::cpu));
    for (std::size_t k = 0; k < streamed_.size(); ++k) {
      stats::statistics_record& record = *batch.records[streamed_[k]];
      record.moments = moments_[k];
      if (record.num_elements == 1) record.scalar = scalar_from_moments(moments_[k]);
    }
    TRIALSTAT_RETURN_IF_ERROR(compute_histograms(batch));
    return compute_log_histograms(batch);
  }

  /// Fixed-bin histograms of the streamed tensors, one call per bin count (normally one: every
  /// request uses the same bins).
  status compute_histograms(const tensor_batch& batch) {
    done_bins_.clear();
    for (std::size_t first = 0; first < streamed_.size(); ++first) {
      const int bins = batch.requests[streamed_[first]]->histogram_bins;
      if (bins <= 0 || std::find(done_bins_.begin(), done_bins_.end(), bins) != done_bins_.end()) {
        continue;
      }
      done_bins_.push_back(bins);
      hist_segments_.clear();
      hist_moments_.clear();
      hist_records_.clear();
      for (std::size_t k = first; k < streamed_.size(); ++k) {
        const std::size_t i = streamed_[k];
        if (batch.requests[i]->histogram_bins != bins) continue;
        hist_segments_.push_back(batch.segments[i]);
        hist_moments_.push_back(moments_[k]);
        hist_records_.push_back(batch.records[i]);
      }
      histograms_.resize(hist_segments_.size());
      TRIALSTAT_RETURN_IF_ERROR(stats::compute_histograms(batch.base, hist_segments_, hist_moments_,
                                                          bins, histograms_, stats::backend::cpu));
      for (std::size_t k = 0; k < hist_records_.size(); ++k) {
        hist_records_[k]->histogram = std::move(histograms_[k]);
      }
    }
    return status::success();
  }

  /// The fixed log-scale histograms of the streamed tensors whose request asks for them.
  status compute_log_histograms(const tensor_batch& batch) {
    hist_segments_.clear();
    hist_records_.clear();
    for (std::size_t i : streamed_) {
      if (!batch.requests[i]->log_histogram) continue;
      hist_segments_.push_back(batch.segments[i]);
      hist_records_.push_back(batch.records[i]);
    }
    if (hist_segments_.empty()) return status::success();
    log_histograms_.resize(hist_segments_.size());
    TRIALSTAT_RETURN_IF_ERROR(stats::compute_log_histograms(batch.base, hist_segments_,
                                                            log_histograms_, stats::backend::cpu));
    for (std::size_t k = 0; k < hist_records_.size(); ++k) {
      hist_records_[k]->log_histogram = std::move(log_histograms_[k]);
    }
    return status::success();
  }

  std::size_t block_bytes_;
  // Per batch (kept to reuse their capacity).
  std::vector<bool> blocked_;
  std::vector<std::size_t> blocked_list_;
  std::vector<std::size_t> streamed_;
  std::vector<detail::snapshot_window*> windows_;
  std::vector<detail::snapshot_window*> sorted_windows_;
  std::vector<status> task_status_;
  std::vector<stats::segment> segments_;
  std::vector<stats::moments> moments_;
  std::vector<stats::segment> hist_segments_;
  std::vector<stats::moments> hist_moments_;
  std::vector<stats::statistics_record*> hist_records_;
  std::vector<stats::histogram> histograms_;
  std::vector<stats::log_histogram> log_histograms_;
  std::vector<int> done_bins_;
  // Across batches.
  detail::pairwise_history history_;
};

}  // namespace

double scalar_from_moments(const stats::moments& m) noexcept {
  if (m.finite_count() == 1) return m.min;
  if (m.nan_count > 0) return std::numeric_limits<double>::quiet_NaN();
  return m.pos_inf_count > 0 ? std::numeric_limits<double>::infinity()
                             : -std::numeric_limits<double>::infinity();
}

std::unique_ptr<statistics_executor> make_cpu_statistics_executor(const executor_options& options) {
  return std::make_unique<cpu_executor>(options.cpu_block_bytes);
}

}  // namespace trialstat::stats
