// SPDX-License-Identifier: Apache-2.0
// ExplodingTensor — spec/RULES.md §3.5.
#include <cmath>

#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "ExplodingTensor";

class exploding_tensor final : public rule {
 public:
  explicit exploding_tensor(const exploding_tensor_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    auto ids = detail::select_tensors(rule_name, trial, params_.collection_names,
                                      params_.tensor_regex, /*all_when_empty=*/true);
    if (!ids) return ids.error_status();
    stats::statistics_request request;
    request.moments = true;
    request.saved_reductions = true;  // [prop] judged from reductions when the raw is absent
    selected_.request(std::move(*ids), request, plan);
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      if (record->moments) {
        evaluate_raw(trial, *record, findings);
      } else {
        evaluate_reductions(trial, *record, findings);
      }
    }
  }

 private:
  void evaluate_raw(const trial::catalog& trial, const stats::statistics_record& record,
                    std::vector<finding>& findings) const {
    const stats::moments& m = *record.moments;
    const int64_t infinite = m.pos_inf_count + m.neg_inf_count;
    const int64_t bad = params_.only_nan ? m.nan_count : m.nan_count + infinite;
    if (bad <= 0) return;
    std::string message =
        params_.only_nan
            ? fmt::format("{} NaN of {} elements", m.nan_count, m.count)
            : fmt::format("{} non-finite of {} elements ({} NaN, {} +Inf, {} -Inf)", bad,
                          m.count, m.nan_count, m.pos_inf_count, m.neg_inf_count);
    findings.push_back(detail::make_finding(rule_name, trial, record, static_cast<double>(bad),
                                            std::move(message)));
  }

  void evaluate_reductions(const trial::catalog& trial, const stats::statistics_record& record,
                           std::vector<finding>& findings) const {
    for (const auto& r : record.saved_reductions) {
      const bool bad = params_.only_nan ? std::isnan(r.value) : !std::isfinite(r.value);
      if (!bad) continue;
      findings.push_back(detail::make_finding(
          rule_name, trial, record, r.value,
          fmt::format("saved reduction {}{} = {} (raw tensor not available)", r.abs ? "abs_" : "",
                      trial::reduction_name(r.op), detail::format_number(r.value))));
      return;  // one finding per (step, tensor, worker)
    }
  }

  exploding_tensor_params params_;
  detail::tensor_set selected_;
  std::vector<const stats::statistics_record*> picked_;
};

}  // namespace

std::unique_ptr<rule> make_exploding_tensor(const exploding_tensor_params& p) {
  return std::make_unique<exploding_tensor>(p);
}

result<exploding_tensor_params> parse_exploding_tensor_params(const rule_parameters& params) {
  exploding_tensor_params p;
  parameter_reader reader(rule_name, params);
  reader.read("collection_names", p.collection_names);
  reader.read("tensor_regex", p.tensor_regex);
  reader.read("only_nan", p.only_nan);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
