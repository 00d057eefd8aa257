// SPDX-License-Identifier: Apache-2.0
// ClassImbalance — spec/RULES.md §3.12.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "host/rules/class_pairing.hpp"
#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"
#include "trialstat/stats/class_counts.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "ClassImbalance";

using record_list = detail::label_prediction_pairs::record_list;

/// Per-class label counts n_c and correct predictions k_c, accumulated over steps.
struct class_totals {
  std::vector<int64_t> labels;
  std::vector<int64_t> hits;
};

class class_imbalance final : public rule {
 public:
  explicit class_imbalance(const class_imbalance_params& p)
      : params_(p), pairing_({.argmax = p.argmax, .threshold = p.prediction_threshold}) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    const std::string label_regex[] = {params_.labels_regex};
    auto labels = detail::select_tensors(rule_name, trial, {}, label_regex, false);
    if (!labels) return labels.error_status();
    const std::string prediction_regex[] = {params_.predictions_regex};
    auto predictions = detail::select_tensors(rule_name, trial, {}, prediction_regex, false);
    if (!predictions) return predictions.error_status();
    pairs_.request(std::move(*labels), std::move(*predictions), plan);
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    // A tensor matched by both regexes is a label tensor only.
    const auto& sides = pairs_.pair(trial, step, params_.evaluate_all_workers, /*labels_win=*/true);
    for (const auto& [worker, pair] : sides) {
      class_totals& totals = totals_[worker];
      if (!accumulate(trial, pair.first, pair.second, totals)) continue;
      judge(trial, *pair.first.front(), totals, findings);
    }
  }

  status evaluation_status() const override { return pairing_.error(); }
  std::vector<std::string> take_warnings() override { return pairing_.take_warnings(); }

 private:
  /// Add this step's pairs to the totals; false when the step is skipped or cannot be paired.
  bool accumulate(const trial::catalog& trial, const record_list& labels,
                  const record_list& predictions, class_totals& totals) {
    const detail::class_pairs* pairs = pairing_.pair(trial, labels, predictions);
    if (pairs == nullptr || std::isnan(pairs->largest_class)) return false;
    const int64_t k = std::max<int64_t>(
        1, static_cast<int64_t>(std::min(std::trunc(pairs->largest_class) + 1.0,
                                         static_cast<double>(stats::max_confusion_classes))));
    const auto matrix = pairs->count(k);
    if (!matrix) return false;
    const auto classes = static_cast<std::size_t>(k);
    if (totals.labels.size() < classes) {
      totals.labels.resize(classes, 0);
      totals.hits.resize(classes, 0);
    }
    for (int64_t c = 0; c < k; ++c) {
      int64_t row = 0;
      for (int64_t j = 0; j <= k; ++j) row += matrix->at(c, j);  // "other" predictions included
      totals.labels[static_cast<std::size_t>(c)] += row;
      totals.hits[static_cast<std::size_t>(c)] += matrix->at(c, c);
    }
    return true;
  }

  void judge(const trial::catalog& trial, const stats::statistics_record& record,
             const class_totals& totals, std::vector<finding>& findings) const {
    int64_t seen = 0;
    int64_t most = 0, fewest = 0;
    std::size_t most_class = 0, fewest_class = 0;
    double worst_miss = 0.0;
    std::size_t worst_class = 0;
    bool any = false;
    for (std::size_t c = 0; c < totals.labels.size(); ++c) {
      const int64_t n = totals.labels[c];
      if (n <= 0) continue;
      seen += n;
      if (!any || n > most) { most = n; most_class = c; }
      if (!any || n < fewest) { fewest = n; fewest_class = c; }
      const double miss = 1.0 - static_cast<double>(totals.hits[c]) / static_cast<double>(n);
      if (!any || miss > worst_miss) { worst_miss = miss; worst_class = c; }
      any = true;
    }
    if (!any || seen < params_.samples) return;
    const double imbalance = static_cast<double>(most) / static_cast<double>(fewest);
    const bool imbalanced = imbalance > params_.threshold_imbalance;
    const bool mispredicted = worst_miss > params_.threshold_misprediction;
    if (!imbalanced && !mispredicted) return;
    std::string message;
    if (imbalanced) {
      message = fmt::format("class {} has {} samples, class {} has {}: ratio {} > "
                            "threshold_imbalance {}",
                            most_class, most, fewest_class, fewest,
                            detail::format_number(imbalance),
                            detail::format_number(params_.threshold_imbalance));
    }
    if (mispredicted) {
      const int64_t n = totals.labels[worst_class];
      message += fmt::format("{}class {} mispredicted in {} of its {} samples (rate {}) > "
                             "threshold_misprediction {}",
                             message.empty() ? "" : "; ", worst_class, n - totals.hits[worst_class],
                             n, detail::format_number(worst_miss),
                             detail::format_number(params_.threshold_misprediction));
    }
    findings.push_back(detail::make_finding(rule_name, trial, record,
                                            imbalanced ? imbalance : worst_miss,
                                            message + fmt::format(" ({} samples so far)", seen)));
  }

  class_imbalance_params params_;
  detail::label_prediction_pairs pairs_;
  std::map<trial::worker_id, class_totals> totals_;
  detail::class_pairing pairing_;
};

}  // namespace

std::unique_ptr<rule> make_class_imbalance(const class_imbalance_params& p) {
  return std::make_unique<class_imbalance>(p);
}

result<class_imbalance_params> parse_class_imbalance_params(const rule_parameters& params) {
  class_imbalance_params p;
  parameter_reader reader(rule_name, params);
  reader.read("threshold_imbalance", p.threshold_imbalance);
  reader.read("threshold_misprediction", p.threshold_misprediction);
  reader.read("samples", p.samples);
  reader.read("argmax", p.argmax);
  reader.read("prediction_threshold", p.prediction_threshold);
  reader.read("labels_regex", p.labels_regex);
  reader.read("predictions_regex", p.predictions_regex);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  reader.require(!(p.argmax && p.prediction_threshold), "prediction_threshold",
                 "reads one probability per label and cannot be combined with argmax=True");
  reader.require(p.samples >= 0, "samples", fmt::format("must not be negative, got {}", p.samples));
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
