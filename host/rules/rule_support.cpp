// SPDX-License-Identifier: Apache-2.0
#include "host/rules/rule_support.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "trialstat/stats/float64_values.hpp"

namespace trialstat::rules::detail {

status insufficient_information(std::string_view rule, std::string_view message) {
  return status(error_code::invalid_argument,
                fmt::format("Insufficient information to invoke rule {}: {}", rule, message));
}

void tensor_set::assign(std::vector<trial::tensor_id> ids) {
  ids_ = std::move(ids);
  trial::tensor_id largest = 0;
  for (const auto t : ids_) largest = std::max(largest, t);
  rank_.assign(ids_.empty() ? 0 : static_cast<std::size_t>(largest) + 1, -1);
  for (std::size_t i = 0; i < ids_.size(); ++i) rank_[ids_[i]] = static_cast<int64_t>(i);
}

void tensor_set::request(std::vector<trial::tensor_id> ids, const stats::statistics_request& request,
                         plan::read_plan& plan) {
  for (const auto t : ids) plan.request(t, request);
  assign(std::move(ids));
}

result<std::vector<trial::tensor_id>> select_tensors(std::string_view rule,
                                                     const trial::catalog& trial,
                                                     std::span<const std::string> collections,
                                                     std::span<const std::string> regexes,
                                                     bool all_when_empty) {
  if (collections.empty() && regexes.empty()) {
    if (all_when_empty) return trial.sorted_tensor_ids();
    return std::vector<trial::tensor_id>{};
  }
  for (const std::string& c : collections) {
    if (trial.find_collection(c) != nullptr) continue;
    // smdebug accepts an unknown collection name (it selects nothing): a warning, not an error.
    std::vector<std::string> known;
    for (const auto& k : trial.collections()) known.push_back(k.name);
    note_prepare_warning(fmt::format("{}: collection '{}' is not among the trial's collections ({}); "
                                     "it selects no tensor",
                                     rule, c, known.empty() ? "none loaded" : fmt::format("{}", fmt::join(known, ", "))));
  }
  auto selected = trial.select(collections, regexes);
  if (!selected) {
    const status& s = selected.error_status();
    return status(s.code(), fmt::format("{}: tensor selection: {}", rule, s.message()));
  }
  return std::move(*selected);
}

void pick_records(const trial::catalog& trial, const stats::step_statistics& step,
                  const tensor_set& selected, bool all_workers,
                  std::vector<const stats::statistics_record*>& out) {
  out.clear();
  const auto workers = trial.workers();
  const auto worker_name = [&](trial::worker_id w) -> std::string_view {
    return w < workers.size() ? std::string_view(workers[w]) : std::string_view();
  };
  for (const stats::statistics_record& record : step.records) {
    if (selected.contains(record.tensor)) out.push_back(&record);
  }
  const auto before = [&](const stats::statistics_record* a, const stats::statistics_record* b) {
    const auto ra = selected.rank(a->tensor);
    const auto rb = selected.rank(b->tensor);
    if (ra != rb) return ra < rb;
    return worker_name(a->worker) < worker_name(b->worker);
  };
  std::stable_sort(out.begin(), out.end(), before);
  if (all_workers) return;
  // Keep the first (smallest worker name) record of each tensor.
  out.erase(std::unique(out.begin(), out.end(),
                        [](const auto* a, const auto* b) { return a->tensor == b->tensor; }),
            out.end());
}

void group_by_worker(std::span<const stats::statistics_record* const> picked, bool all_workers,
                     std::vector<std::vector<const stats::statistics_record*>>& groups) {
  groups.clear();
  if (!all_workers) {
    if (!picked.empty()) groups.emplace_back(picked.begin(), picked.end());
    return;
  }
  std::vector<trial::worker_id> order;
  for (const stats::statistics_record* r : picked) {
    const auto it = std::find(order.begin(), order.end(), r->worker);
    std::size_t g = static_cast<std::size_t>(it - order.begin());
    if (it == order.end()) {
      order.push_back(r->worker);
      groups.emplace_back();
    }
    groups[g].push_back(r);
  }
}

void label_prediction_pairs::request(std::vector<trial::tensor_id> labels,
                                     std::vector<trial::tensor_id> predictions,
                                     plan::read_plan& plan) {
  stats::statistics_request request;
  request.moments = true;  // the largest class seen
  request.keep_values = true;
  labels_.request(std::move(labels), request, plan);
  predictions_.request(std::move(predictions), request, plan);
}

const label_prediction_pairs::sides& label_prediction_pairs::pair(const trial::catalog& trial,
                                                                  const stats::step_statistics& step,
                                                                  bool all_workers, bool labels_win) {
  pick_records(trial, step, labels_, all_workers, label_records_);
  pick_records(trial, step, predictions_, all_workers, prediction_records_);
  sides_.clear();
  const auto key = [&](const stats::statistics_record* r) {
    return all_workers ? r->worker : trial::worker_id{0};
  };
  for (const auto* r : label_records_) sides_[key(r)].first.push_back(r);
  for (const auto* r : prediction_records_) {
    if (!labels_win || !labels_.contains(r->tensor)) sides_[key(r)].second.push_back(r);
  }
  return sides_;
}

result<std::vector<trial::tensor_id>> select_loss_tensors(std::string_view rule,
                                                          const trial::catalog& trial,
                                                          std::span<const std::string> regexes) {
  if (!regexes.empty()) return select_tensors(rule, trial, {}, regexes, false);
  if (trial.find_collection("losses") != nullptr) {
    const std::string losses[] = {"losses"};
    auto ids = select_tensors(rule, trial, losses, {}, false);
    if (!ids) return ids;
    if (!ids->empty()) return ids;
  }
  return trial.sorted_tensor_ids();
}

bool append_values(const stats::statistics_record& record, std::vector<double>& out) {
  if (record.values_data == nullptr || !record.raw_status.ok()) return false;
  return stats::append_as_float64(record.values(), out).ok();
}

bool concat_values(std::span<const stats::statistics_record* const> records,
                   std::vector<double>& out) {
  out.clear();
  for (const stats::statistics_record* r : records) {
    if (!append_values(*r, out)) return false;
  }
  return true;
}

std::optional<double> finite_max(std::span<const stats::statistics_record* const> records) noexcept {
  std::optional<double> best;
  for (const stats::statistics_record* r : records) {
    if (!r->moments || !r->moments->has_finite()) continue;
    if (!best || r->moments->max > *best) best = r->moments->max;
  }
  return best;
}

std::optional<double> saved_reduction(const stats::statistics_record& record,
                                      trial::reduction_op op, bool abs) noexcept {
  for (const auto& r : record.saved_reductions) {
    if (r.op == op && r.abs == abs) return r.value;
  }
  return std::nullopt;
}

double numpy_mean_abs(const stats::moments& m) noexcept {
  if (m.count == 0 || m.nan_count > 0) return std::numeric_limits<double>::quiet_NaN();
  if (m.pos_inf_count + m.neg_inf_count > 0) return std::numeric_limits<double>::infinity();
  return m.sum_abs / static_cast<double>(m.count);
}

std::string format_number(double value) { return fmt::format("{:.6g}", value); }

finding make_finding(std::string_view rule, const trial::catalog& trial,
                     const stats::statistics_record& record, double value, std::string message) {
  finding f;
  f.rule = std::string(rule);
  f.step = record.step;
  f.mode = record.mode;
  f.mode_step = record.mode_step;
  const auto names = trial.tensor_names();
  if (record.tensor < names.size()) f.tensor = names[record.tensor];
  const auto workers = trial.workers();
  if (record.worker < workers.size()) f.worker = workers[record.worker];
  f.value = value;
  f.message = std::move(message);
  return f;
}

int find_allclose_index(const plan::read_plan& merged, trial::tensor_id tensor,
                        const stats::allclose_params& params) {
  const stats::statistics_request* request = merged.find(tensor);
  if (request == nullptr) return -1;
  const auto it = std::find(request->allclose.begin(), request->allclose.end(), params);
  return it == request->allclose.end() ? -1
                                       : static_cast<int>(it - request->allclose.begin());
}

int find_axis0_index(const plan::read_plan& merged, trial::tensor_id tensor,
                     const stats::axis0_predicate& predicate) {
  const stats::statistics_request* request = merged.find(tensor);
  if (request == nullptr) return -1;
  for (std::size_t i = 0; i < request->axis0.size(); ++i) {
    const auto& p = request->axis0[i];
    if (p.what != predicate.what) continue;
    if (p.what == stats::axis0_predicate::kind::positive ||
        (p.lo == predicate.lo && p.hi == predicate.hi)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace trialstat::rules::detail
