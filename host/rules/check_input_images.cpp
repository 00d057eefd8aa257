// SPDX-License-Identifier: Apache-2.0
// CheckInputImages — spec/RULES.md §3.8.
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "host/rules/rule_support.hpp"
#include "trialstat/rules/builtin_rules.hpp"
#include "trialstat/rules/parameters.hpp"

namespace trialstat::rules {
namespace {

constexpr std::string_view rule_name = "CheckInputImages";

/// Running totals of one input tensor (and worker).
struct image_totals {
  int64_t samples = 0;
  std::optional<stats::channel_sums> sums;
};

class check_input_images final : public rule {
 public:
  explicit check_input_images(const check_input_images_params& p) : params_(p) {}

  std::string_view name() const override { return rule_name; }

  status prepare(const trial::catalog& trial, plan::read_plan& plan) override {
    const std::string regexes[] = {params_.regex};
    auto ids = detail::select_tensors(rule_name, trial, {}, regexes, false);
    if (!ids) return ids.error_status();
    stats::statistics_request request;
    // moments stay on (cheap): a statistics reader that predates statistics_request::needs_raw()
    // decodes a tensor only for moments, histograms, history or axis-0 counts.
    request.channel_axes = {params_.channel};
    selected_.request(std::move(*ids), request, plan);
    return status::success();
  }

  void evaluate_step(const trial::catalog& trial, const stats::step_statistics& step,
                     std::vector<finding>& findings) override {
    detail::pick_records(trial, step, selected_, params_.evaluate_all_workers, picked_);
    for (const stats::statistics_record* record : picked_) {
      if (record->shape.empty()) continue;
      const stats::channel_sums* sums = record->channel_sums_along(params_.channel);
      if (sums == nullptr) continue;
      image_totals& totals = totals_[detail::state_key(record->tensor, record->worker,
                                                       params_.evaluate_all_workers)];
      if (!totals.sums || !totals.sums->add(*sums)) {
        totals.samples = 0;  // first step, or the channel count changed: start over
        totals.sums = *sums;
      }
      totals.samples += record->shape[0];
      if (totals.samples < params_.threshold_samples) continue;
      double worst = 0.0;
      std::size_t worst_channel = 0;
      bool fires = false;
      for (std::size_t c = 0; c < totals.sums->channels(); ++c) {
        const double magnitude = std::fabs(totals.sums->mean(c));
        if (magnitude > params_.threshold_mean && (!fires || magnitude > worst)) {
          worst = magnitude;
          worst_channel = c;
          fires = true;
        }
      }
      if (fires) {
        findings.push_back(detail::make_finding(
            rule_name, trial, *record, worst,
            fmt::format("|mean| of channel {} (axis {}) over {} samples = {} > threshold_mean {} "
                        "(inputs not normalized)",
                        worst_channel, totals.sums->axis, totals.samples,
                        detail::format_number(worst),
                        detail::format_number(params_.threshold_mean))));
      }
    }
  }

 private:
  check_input_images_params params_;
  detail::tensor_set selected_;
  std::map<uint64_t, image_totals> totals_;
  std::vector<const stats::statistics_record*> picked_;
};

}  // namespace

std::unique_ptr<rule> make_check_input_images(const check_input_images_params& p) {
  return std::make_unique<check_input_images>(p);
}

result<check_input_images_params> parse_check_input_images_params(const rule_parameters& params) {
  check_input_images_params p;
  parameter_reader reader(rule_name, params);
  reader.read("threshold_mean", p.threshold_mean);
  reader.read("threshold_samples", p.threshold_samples);
  reader.read("regex", p.regex);
  reader.read("channel", p.channel);
  reader.read("evaluate_all_workers", p.evaluate_all_workers);
  reader.require(p.threshold_samples >= 0, "threshold_samples",
                 fmt::format("must not be negative, got {}", p.threshold_samples));
  TRIALSTAT_RETURN_IF_ERROR(reader.finish());
  return p;
}

}  // namespace trialstat::rules
