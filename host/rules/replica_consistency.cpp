// SPDX-License-Identifier: Apache-2.0
// ReplicaConsistency — trialstat's own rule (issue 27; builtin_rules.hpp): every worker's copy
// of a selected tensor at a step against the reference worker's copy. The values come from the
// run's single read (keep_values); the element comparison is stats::compute_pairwise.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"
#include "trialstat/stats/pairwise.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "ReplicaConsistency";

class replica_consistency final : public rule {
 public:
  explicit replica_consistency(const replica_consistency_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    std::vector<std::string> collections = params_.collection_names;
    if (collections.empty() && params_.tensor_regex.empty()) collections = {"weights", "biases"};
    auto ids = detail::select_tensors(rule_name, trial, collections, params_.tensor_regex, false);
    if (!ids) return ids.error_status();
    const auto workers = trial.workers();
    reference_.reset();
    if (!params_.reference_worker.empty()) {
      reference_ = trial.find_worker(params_.reference_worker);
      if (!reference_ && !workers.empty()) {
        return status(error_code::invalid_argument,
                      fmt::format("{}: parameter 'reference_worker' names '{}', which is not a "
                                  "worker of this trial (workers: {})",
                                  rule_name, params_.reference_worker, fmt::join(workers, ", ")));
      }
    }
    if (trial.num_workers() <= 1 && trial.training_ended()) {
      note_prepare_warning(fmt::format("{}: the trial has one worker: nothing to compare", rule_name));
    }
    stats::statistics_request request;
    request.keep_values = true;  // moments stay on (cheap), as in the other keep_values rules
    selected_.request(std::move(*ids), request, plan);
    // Which workers save each selected tensor anywhere in the trial (raw values), and which
    // save any: a worker is "missing" a step only for tensors it saves elsewhere.
    num_workers_ = workers.size();
    saves_.assign(selected_.size() * num_workers_, 0);
    participant_.assign(num_workers_, 0);
    for (const trial::tensor_entry& e : trial.entries()) {
      if (!e.raw || !selected_.contains(e.tensor) || e.worker >= num_workers_) continue;
      saves_[selected_.rank(e.tensor) * num_workers_ + e.worker] = 1;
      participant_[e.worker] = 1;
    }
    sorted_workers_ = trial.sorted_worker_ids();
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    if (params_.mode && step.mode != *params_.mode) return;
    if (trial.workers().size() != num_workers_) return;  // not prepared for these workers yet
    // Who saved what at this step (raw values), from the catalog.
    saved_.assign(selected_.size() * num_workers_, 0);
    step_workers_.assign(num_workers_, 0);
    for (const trial::tensor_entry& e : trial.entries_at(step.step)) {
      if (!e.raw || !selected_.contains(e.tensor) || e.worker >= num_workers_) continue;
      saved_[selected_.rank(e.tensor) * num_workers_ + e.worker] = 1;
      step_workers_[e.worker] = 1;
    }
    const auto names = trial.workers();
    const bool any = std::find(step_workers_.begin(), step_workers_.end(), 1) != step_workers_.end();
    if (!any) return;
    for (const trial::worker_id w : sorted_workers_) {
      if (participant_[w] == 0 || step_workers_[w] != 0) continue;
      finding f;
      f.rule = std::string(rule_name);
      f.step = step.step;
      f.mode = step.mode;
      f.mode_step = step.mode_step;
      f.worker = names[w];
      f.value = std::numeric_limits<double>::quiet_NaN();
      f.message = fmt::format("missing step: worker {} saved none of the selected tensors at this "
                              "step, which {} saved",
                              names[w], list_workers(names, step_workers_.data()));
      if (!add(std::move(f), step.step, findings)) return;
    }
    detail::pick_records(trial, step, selected_, /*all_workers=*/true, picked_);
    std::size_t i = 0;
    for (std::size_t rank = 0; rank < selected_.size(); ++rank) {
      // This tensor's records, in worker name order.
      const std::size_t first = i;
      while (i < picked_.size() && selected_.rank(picked_[i]->tensor) == rank) ++i;
      if (!compare_tensor(trial, step, rank, {picked_.data() + first, i - first}, findings)) return;
    }
  }

  std::vector<std::string> take_warnings() override {
    std::vector<std::string> out;
    out.swap(warnings_);
    return out;
  }

 private:
  using record_span = std::span<const stats::statistics_record* const>;

  /// Findings for one tensor at one step; false once max_findings is reached.
  bool compare_tensor(const trial::catalog& trial, const stats::step_statistics& step,
                      std::size_t rank, record_span records, std::vector<finding>& findings) {
    const auto names = trial.workers();
    const trial::tensor_id tensor = selected_.ids()[rank];
    const std::string& tensor_name = trial.tensor_names()[tensor];
    const uint8_t* saved = saved_.data() + rank * num_workers_;
    const uint8_t* saves = saves_.data() + rank * num_workers_;
    const bool any = std::find(saved, saved + num_workers_, 1) != saved + num_workers_;
    if (!any) return true;
    for (const trial::worker_id w : sorted_workers_) {
      if (saves[w] == 0 || saved[w] != 0 || step_workers_[w] == 0) continue;  // whole step: above
      finding f;
      f.rule = std::string(rule_name);
      f.step = step.step;
      f.mode = step.mode;
      f.mode_step = step.mode_step;
      f.tensor = tensor_name;
      f.worker = names[w];
      f.value = std::numeric_limits<double>::quiet_NaN();
      f.message = fmt::format("missing tensor: worker {} saved this step but not {}, which {} saved",
                              names[w], tensor_name, list_workers(names, saved));
      if (!add(std::move(f), step.step, findings)) return false;
    }
    // The reference: the chosen worker's record, else the lowest-named worker's.
    const stats::statistics_record* ref = nullptr;
    for (const auto* r : records) {
      if (reference_ && r->worker == *reference_) ref = r;
    }
    const bool stand_in = ref == nullptr;
    if (stand_in && !records.empty()) ref = records.front();
    if (ref == nullptr || ref->values_data == nullptr) return true;  // unreadable: skipped
    const std::string& ref_name = names[ref->worker];
    const std::string ref_label =
        stand_in && reference_
            ? fmt::format("{} (standing in for reference {}, which did not save it)", ref_name,
                          names[*reference_])
            : ref_name + " (reference)";
    for (const auto* r : records) {
      if (r == ref || r->values_data == nullptr) continue;
      const std::string& name = names[r->worker];
      std::string message;
      double value = std::numeric_limits<double>::quiet_NaN();
      if (r->type != ref->type) {
        message = fmt::format("dtype {} on worker {} differs from {} on {}", dtype_name(r->type),
                              name, dtype_name(ref->type), ref_label);
      } else if (r->shape != ref->shape) {
        message = fmt::format("shape [{}] on worker {} differs from [{}] on {}",
                              fmt::join(r->shape, ", "), name, fmt::join(ref->shape, ", "),
                              ref_label);
      } else {
        const auto compared = stats::compute_pairwise(r->values(), ref->values(),
                                                      {params_.rtol, params_.atol, true});
        if (!compared) {
          note(fmt::format("{}: {} at step {} not compared: {}", rule_name, tensor_name,
                           step.step, compared.error_status().message()));
          continue;
        }
        if (compared->allclose_violations == 0) continue;
        value = static_cast<double>(compared->allclose_violations);
        message = fmt::format(
            "{} of {} elements differ between worker {} and {} (rtol {}, atol {}): max |a - b| = "
            "{}{}",
            compared->allclose_violations, compared->count, name, ref_label,
            detail::format_number(params_.rtol), detail::format_number(params_.atol),
            detail::format_number(compared->diff_max_abs),
            compared->nan_mismatches == 0
                ? std::string()
                : fmt::format("; {} of them NaN against a number", compared->nan_mismatches));
      }
      if (!add(detail::make_finding(rule_name, trial, *r, value, std::move(message)), step.step,
               findings)) {
        return false;
      }
    }
    return true;
  }

  /// Append `f` unless max_findings is reached (then warn once); false when no more may follow.
  bool add(finding f, int64_t step, std::vector<finding>& findings) {
    if (params_.max_findings > 0 && emitted_ >= params_.max_findings) {
      if (!capped_) {
        capped_ = true;
        note(fmt::format("{}: max_findings ({}) reached at step {}: later differences are not "
                         "reported",
                         rule_name, params_.max_findings, step));
      }
      return false;
    }
    findings.push_back(std::move(f));
    ++emitted_;
    return true;
  }

  void note(std::string warning) { warnings_.push_back(std::move(warning)); }

  /// Names of the workers flagged in `flags` (indexed by worker id), in name order.
  std::string list_workers(std::span<const std::string> names, const uint8_t* flags) const {
    std::vector<std::string_view> out;
    for (const trial::worker_id w : sorted_workers_) {
      if (flags[w] != 0) out.push_back(names[w]);
    }
    return fmt::format("{}", fmt::join(out, ", "));
  }

  replica_consistency_params params_;
  detail::tensor_set selected_;
  std::optional<trial::worker_id> reference_;
  std::size_t num_workers_ = 0;
  std::vector<trial::worker_id> sorted_workers_;
  std::vector<uint8_t> saves_;        // [rank × worker]: saves the tensor somewhere in the trial
  std::vector<uint8_t> participant_;  // [worker]: saves any selected tensor
  std::vector<uint8_t> saved_;        // [rank × worker]: saved it at this step
  std::vector<uint8_t> step_workers_; // [worker]: saved any selected tensor at this step
  std::vector<const stats::statistics_record*> picked_;
  std::vector<std::string> warnings_;
  int64_t emitted_ = 0;
  bool capped_ = false;
};

}  // namespace

std::unique_ptr<rule> make_replica_consistency(const replica_consistency_params& p) {
  return std::make_unique<replica_consistency>(p);
}

result<replica_consistency_params> parse_replica_consistency_params(const rule_parameters& params) {
  replica_consistency_params p;
  parameter_reader reader(rule_name, params);
  reader.read("collection_names", p.collection_names);
  reader.read("tensor_regex", p.tensor_regex);
  reader.read("rtol", p.rtol);
  reader.read("atol", p.atol);
  reader.read("reference_worker", p.reference_worker);
  reader.read("mode", p.mode);
  reader.read("max_findings", p.max_findings);
  reader.require(std::isfinite(p.rtol) && p.rtol >= 0, "rtol",
                 fmt::format("must be a finite number >= 0, got {}", p.rtol));
  reader.require(std::isfinite(p.atol) && p.atol >= 0, "atol",
                 fmt::format("must be a finite number >= 0, got {}", p.atol));
  reader.require(p.max_findings >= 0, "max_findings",
                 fmt::format("must be >= 0 (0: no limit), got {}", p.max_findings));
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
