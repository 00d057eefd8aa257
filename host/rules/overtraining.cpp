// SPDX-License-Identifier: Apache-2.0
// Overtraining — spec/RULES.md §3.15.
#include <map>

#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "Overtraining";

/// Early-stopping bookkeeping of one loss in one mode.
struct patience_state {
  bool started = false;
  double best = 0.0;
  int64_t counter = 0;
};

class overtraining final : public rule {
 public:
  explicit overtraining(const overtraining_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    auto ids = detail::select_loss_tensors(rule_name, trial, {});
    if (!ids) return ids.error_status();
    stats::statistics_request request;
    request.moments = true;  // the record's `scalar` comes with the moments
    selected_.request(std::move(*ids), request, plan);
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    if (step.mode != trialstat::mode::train && step.mode != trialstat::mode::eval) return;
    const bool train = step.mode == trialstat::mode::train;
    const int64_t patience = train ? params_.patience_train : params_.patience_validation;
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      if (!record->scalar) continue;
      const double x = *record->scalar;
      const uint64_t key = detail::state_key(record->tensor, record->worker,
                                             params_.evaluate_all_workers);
      patience_state& s = (train ? train_ : eval_)[key];
      if (!s.started) {
        s.started = true;
        s.best = x;
        s.counter = 0;
      } else if (s.best - x > params_.delta) {
        s.best = x;
        s.counter = 0;
      } else {
        ++s.counter;
      }
      if (s.counter >= patience && s.counter > 0) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *record, static_cast<double>(s.counter),
            fmt::format("{} loss has not improved by more than delta {} on its best {} for {} "
                        "saved steps (>= {} {})",
                        train ? "training" : "validation", detail::format_number(params_.delta),
                        detail::format_number(s.best), s.counter, train ? "patience_train" : "patience_validation",
                        patience)));
      }
    }
  }

 private:
  overtraining_params params_;
  detail::tensor_set selected_;
  std::map<uint64_t, patience_state> train_;
  std::map<uint64_t, patience_state> eval_;
  std::vector<const stats::statistics_record*> picked_;
};

}  // namespace

std::unique_ptr<rule> make_overtraining(const overtraining_params& p) {
  return std::make_unique<overtraining>(p);
}

result<overtraining_params> parse_overtraining_params(const rule_parameters& params) {
  overtraining_params p;
  parameter_reader reader(rule_name, params);
  reader.read("patience_train", p.patience_train);
  reader.read("patience_validation", p.patience_validation);
  reader.read("delta", p.delta);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  reader.require(p.patience_train >= 1, "patience_train",
                 fmt::format("must be at least 1, got {}", p.patience_train));
  reader.require(p.patience_validation >= 1, "patience_validation",
                 fmt::format("must be at least 1, got {}", p.patience_validation));
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
