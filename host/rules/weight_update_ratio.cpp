// SPDX-License-Identifier: Apache-2.0
// WeightUpdateRatio — spec/RULES.md §3.3.
#include <algorithm>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "WeightUpdateRatio";

/// One saved step of a tensor in the rule's mode: its step number in that mode and global step.
struct save {
  int64_t key = 0;
  int64_t global_step = 0;
};

class weight_update_ratio final : public rule {
 public:
  explicit weight_update_ratio(const weight_update_ratio_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    const std::vector<std::string> collections{"weights"};
    auto ids = detail::select_tensors(rule_name, trial, collections, {}, false);
    if (!ids) return ids.error_status();
    if (!trial.step_infos().empty()) mode_ = choose_mode(trial);
    for (const auto t : *ids) {
      stats::statistics_request request;
      request.moments = false;
      request.history_depth = history_depth(trial, t);
      plan.request(t, request);
    }
    selected_.assign(std::move(*ids));
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    if (!mode_) mode_ = choose_mode(trial);
    if (*mode_ != trialstat::mode::global && step.mode != *mode_) return;
    const int64_t key = *mode_ == trialstat::mode::global ? step.step : step.mode_step;

    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      if (!record->raw_status.ok()) continue;
      const auto it = saves_.find(history_key(*record));
      if (it == saves_.end() || it->second.empty()) continue;
      const std::optional<save> previous = pair_for(it->second, key);
      if (!previous) continue;
      const auto comparison =
          std::find_if(record->previous.begin(), record->previous.end(), [&](const auto& c) {
            return c.previous_step == previous->global_step;
          });
      if (comparison == record->previous.end() || !comparison->shape_matches) continue;
      const double ratio = comparison->result.diff_l2() /
                           (comparison->result.previous_l2() + params_.epsilon);
      const char* which = nullptr;
      double threshold = 0.0;
      if (ratio > params_.large_threshold) {
        which = "> large_threshold";
        threshold = params_.large_threshold;
      } else if (ratio < params_.small_threshold) {
        which = "< small_threshold";
        threshold = params_.small_threshold;
      } else {
        continue;
      }
      findings.push_back(detail::make_finding(
          rule_name, trial, *record, ratio,
          fmt::format("update ratio |W_s - W_p| / (|W_p| + epsilon) = {} {} {} ({} step {} -> {})",
                      detail::format_number(ratio), which, detail::format_number(threshold),
                      trialstat::mode_name(*mode_), previous->key, key)));
    }

    // Remember this step's saves (every worker) for later pairs.
    for (const stats::statistics_record& record : step.records) {
      if (!selected_.contains(record.tensor) || !record.raw_status.ok()) continue;
      auto& list = saves_[history_key(record)];
      list.push_back({key, record.step});
      if (params_.num_steps) {
        // A later step s' > key pairs with saves ≥ s' − num_steps > key − num_steps only.
        while (!list.empty() && list.front().key < key - *params_.num_steps) list.pop_front();
      } else {
        while (list.size() > 1) list.pop_front();
      }
    }
  }

 private:
  static uint64_t history_key(const stats::statistics_record& r) {
    return (static_cast<uint64_t>(r.tensor) << 32) | r.worker;
  }

  /// TRAIN when the trial has TRAIN steps, else GLOBAL [doc].
  static trialstat::mode choose_mode(const trial::catalog& trial) {
    const auto modes = trial.modes();
    return std::find(modes.begin(), modes.end(), trialstat::mode::train) != modes.end()
               ? trialstat::mode::train
               : trialstat::mode::global;
  }

  /// p for saved step `key`, among the earlier saves in `list` (ascending keys).
  std::optional<save> pair_for(const std::deque<save>& list, int64_t key) const {
    if (!params_.num_steps) {
      if (list.back().key < key) return list.back();
      return std::nullopt;
    }
    for (const save& s : list) {
      if (s.key >= key) break;
      if (s.key >= key - *params_.num_steps) return s;
    }
    return std::nullopt;
  }

  /// How many previous raw saves of `tensor` the pipeline must keep so that every pair of the
  /// loaded trial is reachable (other modes' saves sit in the same history), capped.
  int history_depth(const trial::catalog& trial, trial::tensor_id tensor) const {
    int depth = params_.num_steps
                    ? static_cast<int>(std::clamp<int64_t>(*params_.num_steps, 1,
                                                           max_rule_history_depth))
                    : 1;
    if (!mode_) return depth;
    struct saved {
      int64_t key;
      bool in_mode;
    };
    std::vector<saved> saves;
    for (const int64_t g : trial.tensor_steps(tensor)) {
      const trial::step_info* info = trial.find_step(g);
      if (info == nullptr) continue;
      bool has_raw = false;
      for (const trial::worker_id w : info->workers) {
        const trial::tensor_entry* entry = trial.find_entry(tensor, g, w);
        if (entry != nullptr && entry->raw) {
          has_raw = true;
          break;
        }
      }
      if (!has_raw) continue;
      const bool global = *mode_ == trialstat::mode::global;
      saves.push_back({global ? g : info->mode_step, global || info->mode == *mode_});
    }
    std::size_t last_in_mode = saves.size();  // index of the latest in-mode save so far
    std::size_t window_begin = 0;             // first candidate for the num_steps window
    for (std::size_t i = 0; i < saves.size(); ++i) {
      if (!saves[i].in_mode) continue;
      std::size_t j = saves.size();
      if (!params_.num_steps) {
        j = last_in_mode;
      } else {
        const int64_t lo = saves[i].key - *params_.num_steps;
        while (window_begin < i && (!saves[window_begin].in_mode || saves[window_begin].key < lo)) {
          ++window_begin;
        }
        if (window_begin < i) j = window_begin;
      }
      if (j < i) {
        depth = std::max(depth, static_cast<int>(std::min<std::size_t>(
                                    i - j, static_cast<std::size_t>(max_rule_history_depth))));
      }
      last_in_mode = i;
    }
    return depth;
  }

  weight_update_ratio_params params_;
  std::optional<trialstat::mode> mode_;
  detail::tensor_set selected_;
  std::map<uint64_t, std::deque<save>> saves_;  // (tensor, worker) → recent in-mode saves
  std::vector<const stats::statistics_record*> picked_;
};

}  // namespace

std::unique_ptr<rule> make_weight_update_ratio(const weight_update_ratio_params& p) {
  return std::make_unique<weight_update_ratio>(p);
}

result<weight_update_ratio_params> parse_weight_update_ratio_params(const rule_parameters& params) {
  weight_update_ratio_params p;
  parameter_reader reader(rule_name, params);
  reader.read("num_steps", p.num_steps);
  reader.read("large_threshold", p.large_threshold);
  reader.read("small_threshold", p.small_threshold);
  reader.read("epsilon", p.epsilon);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  reader.require(!p.num_steps || *p.num_steps >= 1, "num_steps",
                 fmt::format("must be at least 1, got {}", p.num_steps.value_or(0)));
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
