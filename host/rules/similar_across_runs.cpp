// SPDX-License-Identifier: Apache-2.0
// SimilarAcrossRuns — spec/RULES.md §3.2. The base trial's values arrive through the pipeline
// (keep_values); the other trial's values for the same tensors arrive through the rule session,
// which reads the other trial with its own catalog, read plan and statistics stream
// (rule::other_trial_location, prepare_other_trial, evaluate_other_step).
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"
#include "trialstat/stats/pairwise.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "SimilarAcrossRuns";

class similar_across_runs final : public rule {
 public:
  explicit similar_across_runs(const similar_across_runs_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  std::string other_trial_location() const override { return params_.other_trials; }

  status prepare_other_trial(const trial::catalog& trial, const trial::catalog& other,
                             plan::read_plan& other_plan) override {
    other_ = &other;
    other_workers_ = other.sorted_worker_ids();
    auto ids = detail::select_tensors(rule_name, trial, params_.collection_names,
                                      params_.tensor_regex, true);
    if (!ids) return ids.error_status();
    std::vector<trial::tensor_id> shared;
    other_ids_.clear();
    for (const auto t : *ids) {
      const auto in_other = other.find_tensor(trial.tensor_names()[t]);
      if (!in_other) continue;  // only in the base trial: skipped
      shared.push_back(t);
      other_ids_.push_back(*in_other);
    }
    selected_.assign(std::move(shared));
    stats::statistics_request request;
    request.keep_values = true;
    for (const auto t : other_ids_) other_plan.request(t, request);
    return status::success();
  }

  status prepare(const trial::catalog& /*trial*/, plan::read_plan& plan) override {
    // selected_ was resolved by prepare_other_trial (a rule session calls it first); without
    // it (no session) nothing is compared.
    stats::statistics_request request;
    // moments stay on (cheap): a statistics reader that predates statistics_request::needs_raw()
    // decodes a tensor only for moments, histograms, history or axis-0 counts.
    request.keep_values = true;
    for (const auto t : selected_.ids()) plan.request(t, request);
    return status::success();
  }

  void evaluate_other_step(const trial::catalog& /*other*/,
                           const stats::step_statistics& step) override {
    others_.clear();
    for (const stats::statistics_record& r : step.records) {
      // An unreadable or non-numeric record of the other trial is skipped, as smdebug's
      // comparison would fail on it.
      if (r.values_data == nullptr || !r.raw_status.ok() || !dtype_is_real_numeric(r.type)) continue;
      other_value& v = others_[{r.tensor, r.worker}];
      v.type = r.type;
      v.shape = r.shape;
      v.bytes.assign(r.values_data,
                     r.values_data + static_cast<std::size_t>(r.num_elements) * dtype_size_bytes(r.type));
      v.num_elements = r.num_elements;
    }
    others_step_ = step.step;
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    if (other_ == nullptr) return;
    if (others_step_ != step.step) others_.clear();  // the other trial did not save this step
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      if (record->values_data == nullptr) continue;
      const trial::tensor_id other_tensor = other_ids_[selected_.rank(record->tensor)];
      const trial::tensor_entry* entry = other_entry(trial, *record, other_tensor);
      if (entry == nullptr || !entry->raw) continue;
      const auto found = others_.find({other_tensor, entry->worker});
      if (found == others_.end()) continue;
      const other_value& other = found->second;
      if (other.shape != record->shape) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *record, std::numeric_limits<double>::quiet_NaN(),
            fmt::format("shape [{}] differs from [{}] in {}", fmt::join(record->shape, ", "),
                        fmt::join(other.shape, ", "), params_.other_trials)));
        continue;
      }
      const tensor_view other_view{other.bytes.data(), other.type, other.shape, other.num_elements,
                                   memory_kind::host};
      const auto compared = stats::compute_pairwise(
          other_view, record->values(), {params_.rtol, params_.atol, params_.equal_nan});
      if (!compared || compared->all_close()) continue;
      findings.push_back(detail::make_finding(
          rule_name, trial, *record, static_cast<double>(compared->allclose_violations),
          fmt::format("{} of {} elements not allclose (rtol {}, atol {}) to {}; max |diff| = {}",
                      compared->allclose_violations, compared->count,
                      detail::format_number(params_.rtol), detail::format_number(params_.atol),
                      params_.other_trials, detail::format_number(compared->diff_max_abs))));
    }
    others_.clear();
  }

 private:
  /// The other trial's entry for the same tensor and global step: the same worker name with
  /// evaluate_all_workers, else the other trial's default worker (smallest name with a raw
  /// record at the step).
  const trial::tensor_entry* other_entry(const trial::catalog& trial,
                                         const stats::statistics_record& record,
                                         trial::tensor_id other_tensor) const {
    if (params_.evaluate_all_workers) {
      const auto worker = other_->find_worker(trial.workers()[record.worker]);
      return worker ? other_->find_entry(other_tensor, record.step, *worker) : nullptr;
    }
    for (const auto w : other_workers_) {
      const trial::tensor_entry* e = other_->find_entry(other_tensor, record.step, w);
      if (e != nullptr && e->raw) return e;
    }
    return nullptr;
  }

  /// One record of the other trial at the current step: its values, copied out of the
  /// statistics stream's buffers (valid only during evaluate_other_step).
  struct other_value {
    dtype type = dtype::invalid;
    std::vector<int64_t> shape;
    int64_t num_elements = 0;
    std::vector<std::byte> bytes;
  };

  similar_across_runs_params params_;
  const trial::catalog* other_ = nullptr;  // owned by the rule session
  std::vector<trial::worker_id> other_workers_;
  detail::tensor_set selected_;
  std::vector<trial::tensor_id> other_ids_;  // by rank in selected_
  std::map<std::pair<trial::tensor_id, trial::worker_id>, other_value> others_;
  std::optional<int64_t> others_step_;
  std::vector<const stats::statistics_record*> picked_;
};

}  // namespace

std::unique_ptr<rule> make_similar_across_runs(const similar_across_runs_params& p) {
  return std::make_unique<similar_across_runs>(p);
}

result<similar_across_runs_params> parse_similar_across_runs_params(
    const rule_parameters& params) {
  similar_across_runs_params p;
  parameter_reader reader(rule_name, params);
  std::string older;
  reader.read("other_trial", older);  // the 2019–2020 docs' name
  reader.read("other_trials", p.other_trials);
  if (p.other_trials.empty()) p.other_trials = older;
  reader.read("collection_names", p.collection_names);
  reader.read("tensor_regex", p.tensor_regex);
  reader.read("rtol", p.rtol);
  reader.read("atol", p.atol);
  reader.read("equal_nan", p.equal_nan);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  reader.require(!p.other_trials.empty(), "other_trials",
                 "is required: the path of the trial to compare with");
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
