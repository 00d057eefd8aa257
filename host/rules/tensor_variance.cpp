// SPDX-License-Identifier: Apache-2.0
// TensorVariance — spec/RULES.md §3.14.
#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "TensorVariance";

class tensor_variance final : public rule {
 public:
  explicit tensor_variance(const tensor_variance_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    if (params_.collection_names.empty() && params_.tensor_regex.empty()) {
      return detail::insufficient_information(
          rule_name, "collection_names or tensor_regex is required");
    }
    if (!params_.max_threshold && !params_.min_threshold) {
      return detail::insufficient_information(
          rule_name, "max_threshold or min_threshold is required");
    }
    auto ids = detail::select_tensors(rule_name, trial, params_.collection_names,
                                      params_.tensor_regex, false);
    if (!ids) return ids.error_status();
    stats::statistics_request request;
    request.moments = true;
    request.saved_reductions = true;  // variance / std when the raw tensor is not saved
    selected_.request(std::move(*ids), request, plan);
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      double variance = 0.0;
      std::string_view source = "";
      if (record->moments) {
        if (!record->moments->has_finite()) continue;
        variance = record->moments->variance();  // finite elements only (documented)
      } else if (auto v = detail::saved_reduction(*record, trial::reduction_op::variance, false)) {
        variance = *v;
        source = " (saved variance)";
      } else if (auto s = detail::saved_reduction(*record, trial::reduction_op::std, false)) {
        variance = *s * *s;
        source = " (saved std squared)";
      } else {
        continue;
      }
      if (params_.max_threshold && variance > *params_.max_threshold) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *record, variance,
            fmt::format("variance = {}{} > max_threshold {}", detail::format_number(variance),
                        source, detail::format_number(*params_.max_threshold))));
      } else if (params_.min_threshold && variance < *params_.min_threshold) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *record, variance,
            fmt::format("variance = {}{} < min_threshold {}", detail::format_number(variance),
                        source, detail::format_number(*params_.min_threshold))));
      }
    }
  }

 private:
  tensor_variance_params params_;
  detail::tensor_set selected_;
  std::vector<const stats::statistics_record*> picked_;
};

}  // namespace

std::unique_ptr<rule> make_tensor_variance(const tensor_variance_params& p) {
  return std::make_unique<tensor_variance>(p);
}

result<tensor_variance_params> parse_tensor_variance_params(const rule_parameters& params) {
  tensor_variance_params p;
  parameter_reader reader(rule_name, params);
  reader.read("collection_names", p.collection_names);
  reader.read("tensor_regex", p.tensor_regex);
  reader.read("max_threshold", p.max_threshold);
  reader.read("min_threshold", p.min_threshold);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
