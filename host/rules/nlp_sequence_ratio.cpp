// SPDX-License-Identifier: Apache-2.0
// NLPSequenceRatio — spec/RULES.md §3.18.
#include <string>

#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"
#include "trialstat/stats/value_counts.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "NLPSequenceRatio";

class nlp_sequence_ratio final : public rule {
 public:
  explicit nlp_sequence_ratio(const nlp_sequence_ratio_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    auto ids = detail::select_tensors(rule_name, trial, {}, params_.tensor_regex, false);
    if (!ids) return ids.error_status();
    stats::statistics_request request;
    // moments stay on (cheap): a statistics reader that predates statistics_request::needs_raw()
    // decodes a tensor only for moments, histograms, history or axis-0 counts.
    request.equal_values = params_.token_values;
    selected_.request(std::move(*ids), request, plan);
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      if (record->num_elements <= 0 || record->equal_counts.empty()) continue;
      const auto size = static_cast<double>(record->num_elements);
      std::string over;
      double first_percent = 0.0;
      for (std::size_t i = 0; i < params_.token_values.size(); ++i) {
        const auto count = record->equal_count_of(params_.token_values[i]);
        if (!count) continue;
        const double percent = 100.0 * static_cast<double>(*count) / size;
        const double threshold = threshold_for(i);
        if (!(percent > threshold)) continue;
        if (over.empty()) first_percent = percent;
        over += fmt::format("{}token {}: {}% ({} of {}) > {}%", over.empty() ? "" : "; ",
                            detail::format_number(params_.token_values[i]),
                            detail::format_number(percent), *count, record->num_elements,
                            detail::format_number(threshold));
      }
      if (!over.empty()) {
        findings.push_back(detail::make_finding(rule_name, trial, *record, first_percent,
                                                std::move(over)));
      }
    }
  }

 private:
  /// Thresholds pair with tokens by position; a shorter list repeats its last value.
  double threshold_for(std::size_t i) const {
    const auto& t = params_.token_thresholds_percent;
    return i < t.size() ? t[i] : t.back();
  }

  nlp_sequence_ratio_params params_;
  detail::tensor_set selected_;
  std::vector<const stats::statistics_record*> picked_;
};

/// Parse a comma list of floats read as strings; reports through `reader`.
void read_float_list(parameter_reader& reader, std::string_view key, std::vector<double>& out) {
  std::vector<std::string> texts;
  reader.read(key, texts);
  if (texts.empty()) return;  // unset: keep the default
  std::vector<double> values;
  for (const auto& text : texts) {
    const auto v = parse_float_parameter(text);
    reader.require(v.has_value(), key, fmt::format("expects a comma list of floats, got '{}'", text));
    if (v) values.push_back(*v);
  }
  out = std::move(values);
}

}  // namespace

std::unique_ptr<rule> make_nlp_sequence_ratio(const nlp_sequence_ratio_params& p) {
  return std::make_unique<nlp_sequence_ratio>(p);
}

result<nlp_sequence_ratio_params> parse_nlp_sequence_ratio_params(const rule_parameters& params) {
  nlp_sequence_ratio_params p;
  parameter_reader reader(rule_name, params);
  reader.read("tensor_regex", p.tensor_regex);
  read_float_list(reader, "token_values", p.token_values);
  read_float_list(reader, "token_thresholds_percent", p.token_thresholds_percent);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  reader.require(!p.token_values.empty() && p.token_values.size() <= stats::max_counted_values,
                 "token_values",
                 fmt::format("needs 1 to {} values, got {}", stats::max_counted_values,
                             p.token_values.size()));
  reader.require(!p.token_thresholds_percent.empty(), "token_thresholds_percent",
                 "needs at least one value");
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
