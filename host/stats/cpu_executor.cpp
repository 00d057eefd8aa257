// SPDX-License-Identifier: Apache-2.0
// The CPU statistics executor: the CPU twins over a batch's segments, plus host-memory history
// for pairwise statistics. Each tensor's request is looked up once per batch; the history copy of
// a (tensor, worker) is refreshed inside the pairwise pass that reads it (no separate copy of
// the current tensor).
#include <algorithm>
#include <deque>
#include <limits>
#include <unordered_map>

#include "host/stats/rule_statistics.hpp"
#include "kernels/pairwise/pairwise_cpu.hpp"
#include "trialstat/config.hpp"
#include "trialstat/stats/statistics_executor.hpp"
#include "trialstat/stats/axis_counts.hpp"
#include "trialstat/stats/histogram.hpp"
#include "trialstat/stats/log_histogram.hpp"
#include "trialstat/stats/moments.hpp"
#include "trialstat/stats/pairwise.hpp"

namespace trialstat::stats {
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

class cpu_executor final : public statistics_executor {
 public:
  stats::backend backend() const noexcept override { return stats::backend::cpu; }

  status compute(const tensor_batch& batch) override {
    const std::size_t n = batch.segments.size();
    if (n == 0) return status::success();
    TRIALSTAT_RETURN_IF_ERROR(batch.check("cpu executor"));
    moments_.resize(n);
    TRIALSTAT_RETURN_IF_ERROR(
        stats::compute_moments(batch.base, batch.segments, moments_, stats::backend::cpu));
    for (std::size_t i = 0; i < n; ++i) {
      stats::statistics_record& record = *batch.records[i];
      record.moments = moments_[i];
      if (record.num_elements == 1) record.scalar = scalar_from_moments(moments_[i]);
    }
    TRIALSTAT_RETURN_IF_ERROR(compute_histograms(batch));
    TRIALSTAT_RETURN_IF_ERROR(compute_log_histograms(batch));
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
      if (request.history_depth > 0) TRIALSTAT_RETURN_IF_ERROR(compare_with_history(request, view, record));
    }
    return status::success();
  }

 private:
  status compute_histograms(const tensor_batch& batch) {
    // Group segments by bin count (normally one group: every request uses the same bins).
    const std::size_t n = batch.segments.size();
    done_bins_.clear();
    for (std::size_t first = 0; first < n; ++first) {
      const int bins = batch.requests[first]->histogram_bins;
      if (bins <= 0 || std::find(done_bins_.begin(), done_bins_.end(), bins) != done_bins_.end()) {
        continue;
      }
      done_bins_.push_back(bins);
      hist_segments_.clear();
      hist_moments_.clear();
      hist_records_.clear();
      for (std::size_t i = first; i < n; ++i) {
        if (batch.requests[i]->histogram_bins != bins) continue;
        hist_segments_.push_back(batch.segments[i]);
        hist_moments_.push_back(moments_[i]);
        hist_records_.push_back(batch.records[i]);
      }
      histograms_.resize(hist_segments_.size());
      TRIALSTAT_RETURN_IF_ERROR(stats::compute_histograms(batch.base, hist_segments_, hist_moments_,
                                                          bins, histograms_, stats::backend::cpu));
      for (std::size_t i = 0; i < hist_records_.size(); ++i) {
        hist_records_[i]->histogram = std::move(histograms_[i]);
      }
    }
    return status::success();
  }

  /// The fixed log-scale histograms of every segment whose request asks for them, in one call.
  status compute_log_histograms(const tensor_batch& batch) {
    const std::size_t n = batch.segments.size();
    hist_segments_.clear();
    hist_records_.clear();
    for (std::size_t i = 0; i < n; ++i) {
      if (!batch.requests[i]->log_histogram) continue;
      hist_segments_.push_back(batch.segments[i]);
      hist_records_.push_back(batch.records[i]);
    }
    if (hist_segments_.empty()) return status::success();
    log_histograms_.resize(hist_segments_.size());
    TRIALSTAT_RETURN_IF_ERROR(stats::compute_log_histograms(batch.base, hist_segments_,
                                                            log_histograms_, stats::backend::cpu));
    for (std::size_t i = 0; i < hist_records_.size(); ++i) {
      hist_records_[i]->log_histogram = std::move(log_histograms_[i]);
    }
    return status::success();
  }

  /// Pairwise statistics against the kept copies, newest first; then keep this step's copy.
  /// When the window is full, the oldest copy's buffer becomes this step's copy: if it is
  /// compared (same shape and dtype), its last pass copies the current bytes over it block by
  /// block as it reads them (compute_pairwise_cpu's overwrite), else it is copied afterwards.
  status compare_with_history(const stats::statistics_request& request, const tensor_view& view,
                              stats::statistics_record& record) {
    auto& kept = history_[history_key(record.tensor, record.worker)];
    const stats::allclose_params default_params{};
    const bool recycle = !kept.empty() && static_cast<int>(kept.size()) >= request.history_depth;
    bool refreshed = false;
    for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
      stats::previous_comparison comparison;
      comparison.previous_step = it->step;
      comparison.shape_matches = it->shape == record.shape && it->type == record.type;
      if (comparison.shape_matches) {
        const tensor_view previous{it->bytes.data(), it->type, it->shape, record.num_elements,
                                   memory_kind::host};
        // Extra parameter sets first: the pass with the first set may overwrite `previous`.
        comparison.allclose_violations.resize(std::max<std::size_t>(1, request.allclose.size()));
        for (std::size_t p = 1; p < request.allclose.size(); ++p) {
          auto extra = kernels::compute_pairwise_cpu(previous, view, request.allclose[p]);
          if (!extra) return extra.error_status();
          comparison.allclose_violations[p] = extra->allclose_violations;
        }
        const bool overwrite = recycle && &*it == &kept.front();
        const auto& first_params = request.allclose.empty() ? default_params : request.allclose[0];
        auto result = kernels::compute_pairwise_cpu(previous, view, first_params,
                                                    overwrite ? it->bytes.data() : nullptr);
        if (!result) return result.error_status();
        refreshed = refreshed || overwrite;
        comparison.result = *result;
        comparison.allclose_violations[0] = result->allclose_violations;
      }
      record.previous.push_back(std::move(comparison));
    }
    // Keep this step's copy, recycling the oldest buffer once the window is full.
    snapshot next;
    if (recycle) {
      next = std::move(kept.front());
      kept.pop_front();
    }
    next.step = record.step;
    next.type = record.type;
    next.shape = record.shape;
    if (!refreshed) next.bytes.assign(view.data, view.data + view.size_bytes());
    kept.push_back(std::move(next));
    return status::success();
  }

  std::vector<stats::moments> moments_;
  std::vector<stats::segment> hist_segments_;
  std::vector<stats::moments> hist_moments_;
  std::vector<stats::statistics_record*> hist_records_;
  std::vector<stats::histogram> histograms_;
  std::vector<stats::log_histogram> log_histograms_;
  std::vector<int> done_bins_;
  std::unordered_map<uint64_t, std::deque<snapshot>> history_;
};

}  // namespace

double scalar_from_moments(const stats::moments& m) noexcept {
  if (m.finite_count() == 1) return m.min;
  if (m.nan_count > 0) return std::numeric_limits<double>::quiet_NaN();
  return m.pos_inf_count > 0 ? std::numeric_limits<double>::infinity()
                             : -std::numeric_limits<double>::infinity();
}

std::unique_ptr<statistics_executor> make_cpu_statistics_executor() {
  return std::make_unique<cpu_executor>();
}

}  // namespace trialstat::stats
