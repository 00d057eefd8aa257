// SPDX-License-Identifier: Apache-2.0
#include "host/stats/rule_statistics.hpp"

#include "host/stats/tensor_statistics.hpp"

#include <cstdint>
#include <span>

#include "trialstat/stats/channel_sums.hpp"
#include "trialstat/stats/order_statistics.hpp"
#include "trialstat/stats/value_counts.hpp"

namespace trialstat::stats::detail {

status compute_rule_statistics(const stats::statistics_request& request, const tensor_view& tensor,
                               stats::statistics_record& record, stats::backend which, cuda_context* cuda) {
  if (!request.percentiles.empty()) {
    auto values = compute_percentiles(tensor, request.percentiles, which, cuda);
    if (!values) return values.error_status();
    for (std::size_t i = 0; i < values->size(); ++i) {
      record.percentiles.push_back({request.percentiles[i], (*values)[i]});
    }
  }
  // The request's list is bounded by nothing but the rules' own limits: count in chunks.
  const std::span<const double> wanted(request.equal_values);
  for (std::size_t first = 0; first < wanted.size(); first += stats::max_counted_values) {
    const auto part = wanted.subspan(first, std::min(stats::max_counted_values, wanted.size() - first));
    auto counts = count_equal(tensor, part, which, cuda);
    if (!counts) return counts.error_status();
    for (std::size_t i = 0; i < part.size(); ++i) record.equal_counts.push_back({part[i], (*counts)[i]});
  }
  const auto rank = static_cast<int64_t>(tensor.shape.size());
  for (const int64_t axis : request.channel_axes) {
    if (rank == 0 || axis < -rank || axis >= rank) continue;  // not an axis of this tensor
    if (record.channel_sums_along(axis) != nullptr) continue;  // −1 and rank − 1 both asked
    auto sums = compute_channel_sums(tensor, axis, which, cuda);
    if (!sums) return sums.error_status();
    record.channel_sums.push_back(std::move(*sums));
  }
  if (request.keep_values) record.values_data = tensor.data;
  return status::success();
}

}  // namespace trialstat::stats::detail
