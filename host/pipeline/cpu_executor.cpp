// SPDX-License-Identifier: Apache-2.0
// The CPU statistics executor: the OpenMP twins over a batch's segments, plus host-memory
// history for pairwise statistics.
#include <algorithm>
#include <deque>
#include <limits>
#include <unordered_map>

#include "host/pipeline/rule_statistics.hpp"
#include "trialstat/config.hpp"
#include "trialstat/pipeline/statistics_executor.hpp"
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

class cpu_executor final : public statistics_executor {
 public:
  stats::backend backend() const noexcept override { return stats::backend::cpu; }

  status compute(const plan::read_plan& plan, const tensor_batch& batch) override {
    if (batch.segments.empty()) return status::success();
    moments_.assign(batch.segments.size(), stats::moments{});
    TRIALSTAT_RETURN_IF_ERROR(
        stats::compute_moments(batch.base, batch.segments, moments_, stats::backend::cpu));
    for (std::size_t i = 0; i < batch.segments.size(); ++i) {
      plan::statistics_record& record = *batch.records[i];
      record.moments = moments_[i];
      if (record.num_elements == 1) record.scalar = scalar_from_moments(moments_[i]);
    }
    TRIALSTAT_RETURN_IF_ERROR(compute_histograms(plan, batch));
    for (std::size_t i = 0; i < batch.segments.size(); ++i) {
      plan::statistics_record& record = *batch.records[i];
      const plan::tensor_request& request = *plan.find(record.tensor);
      const tensor_view view{batch.base + batch.segments[i].offset_bytes, record.type,
                             record.shape, record.num_elements, memory_kind::host};
      for (const auto& predicate : request.axis0) {
        auto counts = stats::count_along_axis0(view, predicate, stats::backend::cpu);
        if (!counts) return counts.error_status();
        record.axis0.push_back(std::move(*counts));
      }
      // Statistics added by later rules go here (one request field → one record field).
      TRIALSTAT_RETURN_IF_ERROR(
          detail::compute_rule_statistics(request, view, record, stats::backend::cpu));
      if (request.history_depth > 0) TRIALSTAT_RETURN_IF_ERROR(compare_with_history(request, view, record));
    }
    return status::success();
  }

 private:
  status compute_histograms(const plan::read_plan& plan, const tensor_batch& batch) {
    // Group segments by bin count (normally one group: every request uses the same bins).
    done_bins_.clear();
    for (std::size_t first = 0; first < batch.segments.size(); ++first) {
      const int bins = plan.find(batch.records[first]->tensor)->histogram_bins;
      if (bins <= 0 || std::find(done_bins_.begin(), done_bins_.end(), bins) != done_bins_.end()) {
        continue;
      }
      done_bins_.push_back(bins);
      hist_segments_.clear();
      hist_moments_.clear();
      hist_records_.clear();
      for (std::size_t i = first; i < batch.segments.size(); ++i) {
        if (plan.find(batch.records[i]->tensor)->histogram_bins != bins) continue;
        hist_segments_.push_back(batch.segments[i]);
        hist_moments_.push_back(moments_[i]);
        hist_records_.push_back(batch.records[i]);
      }
      histograms_.assign(hist_segments_.size(), stats::histogram{});
      TRIALSTAT_RETURN_IF_ERROR(stats::compute_histograms(batch.base, hist_segments_, hist_moments_,
                                                          bins, histograms_, stats::backend::cpu));
      for (std::size_t i = 0; i < hist_records_.size(); ++i) {
        hist_records_[i]->histogram = std::move(histograms_[i]);
      }
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
        const tensor_view previous{it->bytes.data(), it->type, it->shape, record.num_elements,
                                   memory_kind::host};
        const auto& first_params = request.allclose.empty() ? default_params : request.allclose[0];
        auto result = stats::compute_pairwise(previous, view, first_params, stats::backend::cpu);
        if (!result) return result.error_status();
        comparison.result = *result;
        comparison.allclose_violations.push_back(result->allclose_violations);
        for (std::size_t p = 1; p < request.allclose.size(); ++p) {
          auto extra = stats::compute_pairwise(previous, view, request.allclose[p], stats::backend::cpu);
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

  std::vector<stats::moments> moments_;
  std::vector<stats::segment> hist_segments_;
  std::vector<stats::moments> hist_moments_;
  std::vector<plan::statistics_record*> hist_records_;
  std::vector<stats::histogram> histograms_;
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

}  // namespace trialstat::pipeline
