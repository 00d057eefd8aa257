// SPDX-License-Identifier: Apache-2.0
// TreeDepth — spec/RULES.md §3.11.
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "host/rules/tree_links.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "TreeDepth";
constexpr std::string_view node_tensor = "trees/Node";
constexpr std::string_view link_tensors[] = {"trees/ID", "trees/Yes", "trees/No"};

class tree_depth final : public rule {
 public:
  explicit tree_depth(const tree_depth_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    std::vector<trial::tensor_id> ids;
    if (const auto t = trial.find_tensor(node_tensor)) ids.push_back(*t);
    stats::statistics_request request;
    request.moments = true;  // max of the node ids (the fallback) and one record per save
    for (const auto t : ids) plan.request(t, request);
    selected_.assign(std::move(ids));
    // The link tensors are strings (no statistics): their values are delivered in the records.
    stats::statistics_request strings;
    strings.moments = false;
    strings.keep_strings = true;
    for (std::size_t i = 0; i < std::size(link_tensors); ++i) {
      links_[i] = trial.find_tensor(link_tensors[i]);
      if (links_[i]) plan.request(*links_[i], strings);
    }
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      std::string why_not_exact;
      const auto exact = exact_depth(step, *record, why_not_exact);
      if (exact) {
        const auto depth = static_cast<double>(*exact);
        if (depth > params_.depth) {
          findings.push_back(detail::make_finding(
              rule_name, trial, *record, depth,
              fmt::format("tree depth {} (from the trees/ID, trees/Yes and trees/No links) > "
                          "depth {}",
                          *exact, detail::format_number(params_.depth))));
        }
        continue;
      }
      if (!record->moments || !record->moments->has_finite()) continue;
      note_fallback(record->step, why_not_exact);
      const double max_id = record->moments->max;
      // floor(log2(max id + 1)): a full tree of depth d numbered breadth-first has ids 0..2^(d+1)−2.
      const double depth = std::floor(std::log2(max_id + 1.0));
      if (depth > params_.depth) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *record, depth,
            fmt::format("tree depth floor(log2(max node id {} + 1)) = {} > depth {} (node-id "
                        "formula, exact only for breadth-first numbered trees: {})",
                        detail::format_number(max_id), detail::format_number(depth),
                        detail::format_number(params_.depth), why_not_exact)));
      }
    }
  }

  std::vector<std::string> take_warnings() override {
    std::vector<std::string> out;
    out.swap(warnings_);
    return out;
  }

 private:
  /// The exact depth from the link tensors saved beside `record` (same step and worker, their
  /// strings delivered in `step`'s records), or nullopt with `why` set when they were not saved
  /// or cannot be read.
  std::optional<int64_t> exact_depth(const stats::step_statistics& step,
                                     const stats::statistics_record& record, std::string& why) {
    for (std::size_t i = 0; i < std::size(link_tensors); ++i) {
      const stats::statistics_record* link = nullptr;
      for (const stats::statistics_record& r : step.records) {
        if (links_[i] && r.tensor == *links_[i] && r.worker == record.worker) link = &r;
      }
      if (link == nullptr || link->raw_status.code() == error_code::not_found) {
        why = fmt::format("{} not saved", link_tensors[i]);
        return std::nullopt;
      }
      // A string tensor's raw_status is unsupported_dtype (no numeric statistics): not an error.
      if (!link->raw_status.ok() && link->raw_status.code() != error_code::unsupported_dtype) {
        why = fmt::format("{} unreadable: {}", link_tensors[i], link->raw_status.to_string());
        return std::nullopt;
      }
      if (link->type != dtype::string) {
        why = fmt::format("{} holds {}, not strings", link_tensors[i], dtype_name(link->type));
        return std::nullopt;
      }
      columns_[i] = link->strings;
    }
    auto depth = detail::tree_depth_from_links(columns_[0], columns_[1], columns_[2]);
    if (!depth) {
      why = fmt::format("links unusable: {}", depth.error_status().message());
      return std::nullopt;
    }
    return *depth;
  }

  void note_fallback(int64_t step, const std::string& why) {
    if (warned_fallback_) return;
    warned_fallback_ = true;
    warnings_.push_back(fmt::format(
        "depth from the node-id formula floor(log2(max trees/Node + 1)), which underestimates "
        "trees not numbered breadth-first, from step {}: {}",
        step, why));
  }

  tree_depth_params params_;
  detail::tensor_set selected_;
  std::vector<const stats::statistics_record*> picked_;
  std::optional<trial::tensor_id> links_[std::size(link_tensors)];
  std::vector<std::string> columns_[std::size(link_tensors)];
  std::vector<std::string> warnings_;
  bool warned_fallback_ = false;
};

}  // namespace

std::unique_ptr<rule> make_tree_depth(const tree_depth_params& p) {
  return std::make_unique<tree_depth>(p);
}

result<tree_depth_params> parse_tree_depth_params(const rule_parameters& params) {
  tree_depth_params p;
  parameter_reader reader(rule_name, params);
  reader.read("depth", p.depth);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
