// SPDX-License-Identifier: Apache-2.0
// UnchangedTensor — spec/RULES.md §3.6.
#include <algorithm>

#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "UnchangedTensor";

class unchanged_tensor final : public rule {
 public:
  explicit unchanged_tensor(const unchanged_tensor_params& p)
      : params_(p), allclose_{p.rtol, p.atol, p.equal_nan} {}

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
    request.moments = false;
    request.history_depth = static_cast<int>(params_.num_steps - 1);
    request.allclose = {allclose_};
    selected_.request(std::move(*ids), request, plan);
    allclose_index_.assign(selected_.size(), -1);
    return status::success();
  }

  void plan_ready(const plan::read_plan& merged) override {
    for (std::size_t i = 0; i < selected_.size(); ++i) {
      allclose_index_[i] = detail::find_allclose_index(merged, selected_.ids()[i], allclose_);
    }
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    const auto window = static_cast<std::size_t>(params_.num_steps - 1);
    for (const stats::statistics_record* record : picked_) {
      if (!record->raw_status.ok() || record->previous.size() < window) continue;
      const int bound = allclose_index_[selected_.rank(record->tensor)];
      bool unchanged = true;
      double max_diff = 0.0;
      for (std::size_t i = 0; i < window && unchanged; ++i) {
        const stats::previous_comparison& c = record->previous[i];
        if (!c.shape_matches) {
          unchanged = false;
          break;
        }
        // Our parameter set's index: told by plan_ready, or the only set when there is one.
        std::size_t index = 0;
        if (bound >= 0) {
          index = static_cast<std::size_t>(bound);
        } else if (c.allclose_violations.size() != 1) {
          unchanged = false;  // ambiguous without the merged plan: never fire on a guess
          break;
        }
        if (index >= c.allclose_violations.size() || c.allclose_violations[index] != 0) {
          unchanged = false;
          break;
        }
        max_diff = std::max(max_diff, c.result.diff_max_abs);
      }
      if (!unchanged) continue;
      const int64_t oldest = record->previous[window - 1].previous_step;
      findings.push_back(detail::make_finding(
          rule_name, trial, *record, max_diff,
          fmt::format("unchanged over the last {} saved steps (global steps {}..{}): max |diff| "
                      "= {} (allclose rtol {}, atol {}, equal_nan {})",
                      params_.num_steps, oldest, record->step, detail::format_number(max_diff),
                      detail::format_number(params_.rtol), detail::format_number(params_.atol),
                      params_.equal_nan ? "True" : "False")));
    }
  }

 private:
  unchanged_tensor_params params_;
  stats::allclose_params allclose_;
  detail::tensor_set selected_;
  std::vector<int> allclose_index_;  // by rank in selected_
  std::vector<const stats::statistics_record*> picked_;
};

}  // namespace

std::unique_ptr<rule> make_unchanged_tensor(const unchanged_tensor_params& p) {
  return std::make_unique<unchanged_tensor>(p);
}

result<unchanged_tensor_params> parse_unchanged_tensor_params(const rule_parameters& params) {
  unchanged_tensor_params p;
  parameter_reader reader(rule_name, params);
  reader.read("collection_names", p.collection_names);
  reader.read("tensor_regex", p.tensor_regex);
  reader.read("num_steps", p.num_steps);
  reader.read("rtol", p.rtol);
  reader.read("atol", p.atol);
  reader.read("equal_nan", p.equal_nan);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  reader.require(p.num_steps >= 2 && p.num_steps <= max_rule_history_depth + 1, "num_steps",
                 fmt::format("must be between 2 and {}, got {}", max_rule_history_depth + 1,
                             p.num_steps));
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
