// SPDX-License-Identifier: Apache-2.0
// LossNotDecreasing — spec/RULES.md §3.7.
#include <cmath>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "LossNotDecreasing";

/// Per loss tensor (and worker, with evaluate_all_workers): its mode and recent values.
struct loss_state {
  trialstat::mode mode = trialstat::mode::global;
  /// (step in the mode, value), ascending; the front is the latest step ≤ (last seen − num_steps)
  /// once such a step exists, so it is the next baseline candidate.
  std::deque<std::pair<int64_t, double>> values;
  std::optional<int64_t> last_evaluation;
};

class loss_not_decreasing final : public rule {
 public:
  explicit loss_not_decreasing(const loss_not_decreasing_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    std::vector<std::string> collections = params_.collection_names;
    if (params_.use_losses_collection && trial.find_collection("losses") != nullptr) {
      collections.emplace_back("losses");
    }
    auto ids = detail::select_tensors(rule_name, trial, collections, params_.tensor_regex, false);
    if (!ids) return ids.error_status();
    // Nothing selected: every tensor (only the one-element ones are evaluated) [test-consistent].
    if (ids->empty()) ids = trial.sorted_tensor_ids();
    stats::statistics_request request;
    request.moments = true;  // the record's `scalar` comes with the moments
    selected_.request(std::move(*ids), request, plan);
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      if (!record->scalar) continue;  // only one-element tensors
      const uint64_t key = (static_cast<uint64_t>(record->tensor) << 32) |
                           (params_.evaluate_all_workers ? record->worker : 0u);
      auto [it, inserted] = states_.try_emplace(key);
      loss_state& state = it->second;
      if (inserted) state.mode = choose_mode(trial, record->tensor);
      if (state.mode != trialstat::mode::global && record->mode != state.mode) continue;
      const int64_t s = state.mode == trialstat::mode::global ? record->step : record->mode_step;
      const double current = *record->scalar;
      evaluate(trial, *record, state, s, current, findings);
      state.values.emplace_back(s, current);
    }
  }

 private:
  trialstat::mode choose_mode(const trial::catalog& trial, trial::tensor_id tensor) const {
    if (params_.mode) return *params_.mode;
    bool has_eval = false;
    bool has_train = false;
    for (const int64_t g : trial.tensor_steps(tensor)) {
      if (const trial::step_info* info = trial.find_step(g)) {
        has_eval = has_eval || info->mode == trialstat::mode::eval;
        has_train = has_train || info->mode == trialstat::mode::train;
      }
    }
    return has_eval ? trialstat::mode::eval
                    : (has_train ? trialstat::mode::train : trialstat::mode::global);
  }

  void evaluate(const trial::catalog& trial, const stats::statistics_record& record,
                loss_state& state, int64_t s, double current,
                std::vector<finding>& findings) const {
    // Steps come from index files (any int64): s − num_steps and last + num_steps saturate.
    int64_t limit = 0;
    if (__builtin_sub_overflow(s, params_.num_steps, &limit)) return;  // no step lies below
    // Baseline candidate: the largest saved step ≤ s − num_steps.
    while (state.values.size() >= 2 && state.values[1].first <= limit) state.values.pop_front();
    if (state.values.empty() || state.values.front().first > limit) return;
    int64_t next_evaluation = 0;
    if (state.last_evaluation &&
        (__builtin_add_overflow(*state.last_evaluation, params_.num_steps, &next_evaluation) ||
         s < next_evaluation)) {
      return;
    }
    state.last_evaluation = s;

    const auto [baseline_step, baseline] = state.values.front();
    const double scale = std::fabs(baseline);
    const std::string_view mode = trialstat::mode_name(state.mode);
    const auto where = fmt::format("from {} at {} step {} to {} at step {}",
                                   detail::format_number(baseline), mode, baseline_step,
                                   detail::format_number(current), s);
    if (params_.use_legacy_semantics) {
      const double change = 100.0 * (current - baseline) / scale;
      if (change >= params_.diff_percent) {
        findings.push_back(detail::make_finding(
            rule_name, trial, record, change,
            fmt::format("loss changed by {}% >= diff_percent {}% (legacy semantics) {}",
                        detail::format_number(change), detail::format_number(params_.diff_percent),
                        where)));
      }
      return;
    }
    if (current <= baseline) {
      const double decrease = 100.0 * (baseline - current) / scale;
      if (decrease < params_.diff_percent) {
        findings.push_back(detail::make_finding(
            rule_name, trial, record, decrease,
            fmt::format("loss decreased by {}% < diff_percent {}% {}",
                        detail::format_number(decrease),
                        detail::format_number(params_.diff_percent), where)));
      }
    } else if (current > baseline) {
      const double increase = 100.0 * (current - baseline) / scale;
      if (increase > params_.increase_threshold_percent) {
        findings.push_back(detail::make_finding(
            rule_name, trial, record, increase,
            fmt::format("loss increased by {}% > increase_threshold_percent {}% {}",
                        detail::format_number(increase),
                        detail::format_number(params_.increase_threshold_percent), where)));
      }
    }
  }

  loss_not_decreasing_params params_;
  detail::tensor_set selected_;
  std::map<uint64_t, loss_state> states_;
  std::vector<const stats::statistics_record*> picked_;
};

}  // namespace

std::unique_ptr<rule> make_loss_not_decreasing(const loss_not_decreasing_params& p) {
  return std::make_unique<loss_not_decreasing>(p);
}

result<loss_not_decreasing_params> parse_loss_not_decreasing_params(const rule_parameters& params) {
  loss_not_decreasing_params p;
  parameter_reader reader(rule_name, params);
  reader.read("collection_names", p.collection_names);
  reader.read("tensor_regex", p.tensor_regex);
  reader.read("use_losses_collection", p.use_losses_collection);
  reader.read("num_steps", p.num_steps);
  reader.read("diff_percent", p.diff_percent);
  reader.read("increase_threshold_percent", p.increase_threshold_percent);
  reader.read("mode", p.mode);
  reader.read("use_legacy_semantics", p.use_legacy_semantics);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  reader.require(p.num_steps >= 1, "num_steps", fmt::format("must be at least 1, got {}", p.num_steps));
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
