// SPDX-License-Identifier: Apache-2.0
// VanishingGradient — spec/RULES.md §3.1.
#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "VanishingGradient";

class vanishing_gradient final : public rule {
 public:
  explicit vanishing_gradient(const vanishing_gradient_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    const std::vector<std::string> collections{"gradients"};
    auto ids = detail::select_tensors(rule_name, trial, collections, {}, false);
    if (!ids) return ids.error_status();
    stats::statistics_request request;
    request.moments = true;
    request.saved_reductions = true;  // abs_mean when the raw gradient is not saved
    selected_.request(std::move(*ids), request, plan);
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      double mean_abs = 0.0;
      std::string_view source = "";
      if (record->moments) {
        mean_abs = detail::numpy_mean_abs(*record->moments);
      } else if (auto saved = detail::saved_reduction(*record, trial::reduction_op::mean, true)) {
        mean_abs = *saved;
        source = " (saved abs_mean)";
      } else {
        continue;
      }
      if (mean_abs < params_.threshold) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *record, mean_abs,
            fmt::format("mean |g| = {}{} < threshold {}", detail::format_number(mean_abs), source,
                        detail::format_number(params_.threshold))));
      }
    }
  }

 private:
  vanishing_gradient_params params_;
  detail::tensor_set selected_;
  std::vector<const stats::statistics_record*> picked_;
};

}  // namespace

std::unique_ptr<rule> make_vanishing_gradient(const vanishing_gradient_params& p) {
  return std::make_unique<vanishing_gradient>(p);
}

result<vanishing_gradient_params> parse_vanishing_gradient_params(const rule_parameters& params) {
  vanishing_gradient_params p;
  parameter_reader reader(rule_name, params);
  reader.read("threshold", p.threshold);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
