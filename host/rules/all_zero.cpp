// SPDX-License-Identifier: Apache-2.0
// AllZero — spec/RULES.md §3.4.
#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "AllZero";

class all_zero final : public rule {
 public:
  explicit all_zero(const all_zero_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    if (params_.collection_names.empty() && params_.tensor_regex.empty()) {
      return detail::insufficient_information(
          rule_name, "collection_names or tensor_regex is required");
    }
    auto ids = detail::select_tensors(rule_name, trial, params_.collection_names,
                                      params_.tensor_regex, false);
    if (!ids) return ids.error_status();
    stats::statistics_request request;
    request.moments = true;
    selected_.request(std::move(*ids), request, plan);
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      if (!record->moments || record->moments->count <= 0) continue;
      const stats::moments& m = *record->moments;
      const double percent =
          100.0 * static_cast<double>(m.zero_count) / static_cast<double>(m.count);
      if (percent >= params_.threshold) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *record, percent,
            fmt::format("zeros = {}% of {} elements >= threshold {}%",
                        detail::format_number(percent), m.count,
                        detail::format_number(params_.threshold))));
      }
    }
  }

 private:
  all_zero_params params_;
  detail::tensor_set selected_;
  std::vector<const stats::statistics_record*> picked_;
};

}  // namespace

std::unique_ptr<rule> make_all_zero(const all_zero_params& p) {
  return std::make_unique<all_zero>(p);
}

result<all_zero_params> parse_all_zero_params(const rule_parameters& params) {
  all_zero_params p;
  parameter_reader reader(rule_name, params);
  reader.read("collection_names", p.collection_names);
  reader.read("tensor_regex", p.tensor_regex);
  reader.read("threshold", p.threshold);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
