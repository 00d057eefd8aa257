// SPDX-License-Identifier: Apache-2.0
// Confusion — spec/RULES.md §3.10.
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

constexpr std::string_view rule_name = "Confusion";

using record_list = detail::label_prediction_pairs::record_list;

class confusion final : public rule {
 public:
  explicit confusion(const confusion_params& p)
      : params_(p), pairing_({.argmax = false, .threshold = p.prediction_threshold}) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    auto labels = side_tensors(trial, params_.labels_collection, params_.labels);
    if (!labels) return labels.error_status();
    auto predictions = side_tensors(trial, params_.predictions_collection, params_.predictions);
    if (!predictions) return predictions.error_status();
    pairs_.request(std::move(*labels), std::move(*predictions), plan);
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    const auto& sides = pairs_.pair(trial, step, params_.evaluate_all_workers, /*labels_win=*/false);
    for (const auto& [worker, pair] : sides) evaluate(trial, pair.first, pair.second, findings);
  }

  status evaluation_status() const override { return pairing_.error(); }
  std::vector<std::string> take_warnings() override { return pairing_.take_warnings(); }

 private:
  /// The collection's tensors if it exists and has any, else the named tensor (if present).
  result<std::vector<trial::tensor_id>> side_tensors(const trial::catalog& trial,
                                                     const std::string& collection,
                                                     const std::string& tensor) const {
    if (trial.find_collection(collection) != nullptr) {
      const std::string names[] = {collection};
      auto ids = detail::select_tensors(rule_name, trial, names, {}, false);
      if (!ids) return ids;
      if (!ids->empty()) return ids;
    }
    std::vector<trial::tensor_id> ids;
    if (const auto t = trial.find_tensor(tensor)) ids.push_back(*t);
    return ids;
  }

  void evaluate(const trial::catalog& trial, const record_list& labels,
                const record_list& predictions, std::vector<finding>& findings) {
    const detail::class_pairs* pairs = pairing_.pair(trial, labels, predictions);
    if (pairs == nullptr) return;
    int64_t k = 0;
    if (params_.category_no) {
      k = *params_.category_no;
    } else {
      if (std::isnan(pairs->largest_class)) return;
      k = std::max<int64_t>(2, static_cast<int64_t>(std::min(
                                   std::trunc(pairs->largest_class) + 1.0,
                                   static_cast<double>(stats::max_confusion_classes))));
    }
    const auto matrix = pairs->count(k);
    if (!matrix) return;
    const std::size_t samples = pairs->labels.size();
    for (int64_t i = 0; i < k; ++i) {
      int64_t column = 0;
      for (int64_t j = 0; j < k; ++j) column += matrix->at(j, i);
      if (column == 0) continue;
      const auto total = static_cast<double>(column);
      const double diagonal = static_cast<double>(matrix->at(i, i)) / total;
      if (diagonal < params_.min_diag) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *labels.front(), diagonal,
            fmt::format("prediction {}: C[{}][{}] / column sum = {} / {} = {} < min_diag {} "
                        "({} classes, {} samples)",
                        i, i, i, matrix->at(i, i), column, detail::format_number(diagonal),
                        detail::format_number(params_.min_diag), k, samples)));
        return;
      }
      for (int64_t j = 0; j < k; ++j) {
        if (j == i) continue;
        const double off = static_cast<double>(matrix->at(j, i)) / total;
        if (off > params_.max_off_diag) {
          findings.push_back(detail::make_finding(
              rule_name, trial, *labels.front(), off,
              fmt::format("prediction {}: label {} in C[{}][{}] / column sum = {} / {} = {} > "
                          "max_off_diag {} ({} classes, {} samples)",
                          i, j, j, i, matrix->at(j, i), column, detail::format_number(off),
                          detail::format_number(params_.max_off_diag), k, samples)));
          return;
        }
      }
    }
  }

  confusion_params params_;
  detail::label_prediction_pairs pairs_;
  detail::class_pairing pairing_;
};

}  // namespace

std::unique_ptr<rule> make_confusion(const confusion_params& p) {
  return std::make_unique<confusion>(p);
}

result<confusion_params> parse_confusion_params(const rule_parameters& params) {
  confusion_params p;
  parameter_reader reader(rule_name, params);
  reader.read("category_no", p.category_no);
  reader.read("labels", p.labels);
  reader.read("predictions", p.predictions);
  reader.read("labels_collection", p.labels_collection);
  reader.read("predictions_collection", p.predictions_collection);
  reader.read("min_diag", p.min_diag);
  reader.read("max_off_diag", p.max_off_diag);
  reader.read("prediction_threshold", p.prediction_threshold);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  if (p.category_no) {
    reader.require(*p.category_no >= 2 && *p.category_no <= stats::max_confusion_classes,
                   "category_no",
                   fmt::format("must be in [2, {}], got {}", stats::max_confusion_classes,
                               *p.category_no));
  }
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
