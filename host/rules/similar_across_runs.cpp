// SPDX-License-Identifier: Apache-2.0
// SimilarAcrossRuns — spec/RULES.md §3.2. The base trial's values arrive through the pipeline
// (keep_values); the other trial is opened here and its record for the same (tensor, step) is
// read with one pread when the base record is evaluated.
#include <cmath>
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

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    if (!other_) {
      // A folder or s3://bucket/prefix; S3 settings from the environment (TRIALSTAT_S3_*, AWS_*).
      trial::catalog_options options;
      if (auto s3 = io::s3_options_from_environment()) options.source.s3 = *s3;
      auto opened = trial::catalog::open(params_.other_trials, options);
      if (!opened) {
        const status& s = opened.error_status();
        return status(s.code(), fmt::format("{}: cannot open other_trials '{}': {}", rule_name,
                                            params_.other_trials, s.message()));
      }
      other_.emplace(std::move(*opened));
    } else {
      // Prepared again (a live base trial changed): let a live other trial catch up too. A
      // failed refresh keeps what was loaded.
      static_cast<void>(other_->refresh());
    }
    other_workers_ = other_->sorted_worker_ids();
    auto ids = detail::select_tensors(rule_name, trial, params_.collection_names,
                                      params_.tensor_regex, true);
    if (!ids) return ids.error_status();
    std::vector<trial::tensor_id> shared;
    other_ids_.clear();
    for (const auto t : *ids) {
      const auto other = other_->find_tensor(trial.tensor_names()[t]);
      if (!other) continue;  // only in the base trial: skipped
      shared.push_back(t);
    }
    stats::statistics_request request;
    // moments stay on (cheap): a statistics reader that predates statistics_request::needs_raw()
    // decodes a tensor only for moments, histograms, history or axis-0 counts.
    request.keep_values = true;
    for (const auto t : shared) plan.request(t, request);
    selected_.assign(std::move(shared));
    for (const auto t : selected_.ids()) other_ids_.push_back(*other_->find_tensor(trial.tensor_names()[t]));
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    if (!other_) return;
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      if (record->values_data == nullptr) continue;
      const trial::tensor_id other_tensor = other_ids_[selected_.rank(record->tensor)];
      const trial::tensor_entry* entry = other_entry(trial, *record, other_tensor);
      if (entry == nullptr || !entry->raw) continue;
      const io::event_record* other = nullptr;
      if (!fetcher_.fetch(*other_, *entry->raw, other).ok()) continue;
      const std::string& name = trial.tensor_names()[record->tensor];
      if (other->tag != name || !dtype_is_real_numeric(other->type)) continue;
      if (other->shape != record->shape) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *record, std::numeric_limits<double>::quiet_NaN(),
            fmt::format("shape [{}] differs from [{}] in {}", fmt::join(record->shape, ", "),
                        fmt::join(other->shape, ", "), params_.other_trials)));
        continue;
      }
      const auto compared = stats::compute_pairwise(
          other->view(), record->values(), {params_.rtol, params_.atol, params_.equal_nan});
      if (!compared || compared->all_close()) continue;
      findings.push_back(detail::make_finding(
          rule_name, trial, *record, static_cast<double>(compared->allclose_violations),
          fmt::format("{} of {} elements not allclose (rtol {}, atol {}) to {}; max |diff| = {}",
                      compared->allclose_violations, compared->count,
                      detail::format_number(params_.rtol), detail::format_number(params_.atol),
                      params_.other_trials, detail::format_number(compared->diff_max_abs))));
    }
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

  similar_across_runs_params params_;
  std::optional<trial::catalog> other_;
  std::vector<trial::worker_id> other_workers_;
  detail::tensor_set selected_;
  std::vector<trial::tensor_id> other_ids_;  // by rank in selected_
  detail::record_fetcher fetcher_;
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
