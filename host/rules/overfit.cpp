// SPDX-License-Identifier: Apache-2.0
// Overfit — spec/RULES.md §3.13.
#include <map>

#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "Overfit";

/// Running means of one loss: the last complete-or-current TRAIN phase and the current EVAL phase.
struct phase_state {
  trialstat::mode last_mode = trialstat::mode::global;  // mode of the previous save (GLOBAL: none)
  double train_sum = 0.0;
  int64_t train_count = 0;
  double eval_sum = 0.0;
  int64_t eval_count = 0;
  int64_t counter = 0;
};

class overfit final : public rule {
 public:
  explicit overfit(const overfit_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    auto ids = detail::select_loss_tensors(rule_name, trial, params_.tensor_regex);
    if (!ids) return ids.error_status();
    stats::statistics_request request;
    request.moments = true;  // the record's `scalar` comes with the moments
    selected_.request(std::move(*ids), request, plan);
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    if (step.mode != trialstat::mode::train && step.mode != trialstat::mode::eval) return;
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      if (!record->scalar) continue;
      const double x = *record->scalar;
      phase_state& s = states_[detail::state_key(record->tensor, record->worker,
                                                 params_.evaluate_all_workers)];
      const bool new_phase = s.last_mode != step.mode;
      s.last_mode = step.mode;
      if (step.mode == trialstat::mode::train) {
        if (new_phase) {
          s.train_sum = 0.0;
          s.train_count = 0;
        }
        s.train_sum += x;
        ++s.train_count;
        continue;
      }
      if (new_phase) {
        s.eval_sum = 0.0;
        s.eval_count = 0;
      }
      s.eval_sum += x;
      ++s.eval_count;
      if (s.train_count == 0 || step.step < params_.start_step) continue;
      const double v = s.eval_sum / static_cast<double>(s.eval_count);
      const double t = s.train_sum / static_cast<double>(s.train_count);
      const double ratio = (v - t) / t;
      s.counter = ratio > params_.ratio_threshold ? s.counter + 1 : 0;
      if (s.counter >= params_.patience) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *record, ratio,
            fmt::format("(validation mean {} - training mean {}) / training mean = {} > "
                        "ratio_threshold {} for {} evaluation steps (patience {})",
                        detail::format_number(v), detail::format_number(t),
                        detail::format_number(ratio),
                        detail::format_number(params_.ratio_threshold), s.counter,
                        params_.patience)));
      }
    }
  }

 private:
  overfit_params params_;
  detail::tensor_set selected_;
  std::map<uint64_t, phase_state> states_;
  std::vector<const stats::statistics_record*> picked_;
};

}  // namespace

std::unique_ptr<rule> make_overfit(const overfit_params& p) {
  return std::make_unique<overfit>(p);
}

result<overfit_params> parse_overfit_params(const rule_parameters& params) {
  overfit_params p;
  parameter_reader reader(rule_name, params);
  reader.read("tensor_regex", p.tensor_regex);
  reader.read("start_step", p.start_step);
  reader.read("patience", p.patience);
  reader.read("ratio_threshold", p.ratio_threshold);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  reader.require(p.patience >= 1, "patience", fmt::format("must be at least 1, got {}", p.patience));
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
