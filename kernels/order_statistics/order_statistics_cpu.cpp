// SPDX-License-Identifier: Apache-2.0
// CPU twin of the order statistics: a float64 copy, then selection (std::nth_element) of only the
// order statistics needed — O(n) per distinct index instead of a full sort.
#include "kernels/order_statistics/order_statistics_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <new>
#include <string>

#include "kernels/common/cpu_convert.hpp"
#include "kernels/common/cpu_validate.hpp"
#include "kernels/order_statistics/order_statistics_op.hpp"

namespace trialstat::kernels {
namespace {

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

/// Pairwise (ordered tree) sum of v[0..n): blocks of 1024 summed sequentially, blocks merged
/// pairwise in order, so the rounding error grows with log2(n / 1024).
double pairwise_sum(const double* v, int64_t n) {
  const auto add = [](double a, double b) { return a + b; };
  ordered_tree_merger<double, decltype(add)> merger(add);
  for (int64_t begin = 0; begin < n; begin += cpu_block_elements) {
    const int64_t end = std::min(n, begin + cpu_block_elements);
    double s = 0.0;
    for (int64_t i = begin; i < end; ++i) s += v[i];
    merger.push(s);
  }
  return merger.finish(0.0);
}

status check_tensor(const tensor_view& tensor, const char* what) {
  const stats::segment seg{0, tensor.num_elements, tensor.type};
  return validate_segments(tensor.data, {&seg, 1}, what);
}

}  // namespace

result<std::vector<double>> compute_percentiles_cpu(const tensor_view& tensor,
                                                    std::span<const double> q_percent) noexcept {
  TRIALSTAT_RETURN_IF_ERROR(check_tensor(tensor, "compute_percentiles"));
  for (std::size_t i = 0; i < q_percent.size(); ++i) {
    if (!valid_percentile(q_percent[i])) {
      return status(error_code::invalid_argument,
                    "compute_percentiles: q[" + std::to_string(i) + "] = " +
                        std::to_string(q_percent[i]) + " is not in [0, 100]");
    }
  }
  try {
    std::vector<double> out(q_percent.size(), nan_value);
    const int64_t n = tensor.num_elements;
    if (n == 0 || q_percent.empty()) return out;
    std::vector<double> v(static_cast<std::size_t>(n));
    convert_to_float64_cpu(tensor.data, tensor.type, n, v.data());
    if (std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); })) return out;
    std::vector<percentile_position> positions;
    std::vector<int64_t> needed;
    for (const double q : q_percent) {
      const percentile_position p = linear_percentile_position(n, q);
      positions.push_back(p);
      needed.push_back(p.lower);
      needed.push_back(p.upper);
    }
    std::sort(needed.begin(), needed.end());
    needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
    // After placing index i, everything right of it is ≥ v[i]: the next (larger) index is
    // selected within that part only.
    int64_t first = 0;
    for (const int64_t index : needed) {
      std::nth_element(v.begin() + first, v.begin() + index, v.end());
      first = index + 1;
    }
    for (std::size_t i = 0; i < positions.size(); ++i) {
      const percentile_position& p = positions[i];
      out[i] = numpy_lerp(v[static_cast<std::size_t>(p.lower)], v[static_cast<std::size_t>(p.upper)],
                          p.gamma);
    }
    return out;
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  "compute_percentiles: cannot allocate a float64 copy of " +
                      std::to_string(tensor.num_elements) + " elements");
  }
}

result<stats::top_k_sum> compute_top_k_sum_cpu(const tensor_view& tensor, int64_t k) noexcept {
  TRIALSTAT_RETURN_IF_ERROR(check_tensor(tensor, "compute_top_k_sum"));
  if (k < 0) {
    return status(error_code::invalid_argument,
                  "compute_top_k_sum: k = " + std::to_string(k) + " is negative");
  }
  try {
    stats::top_k_sum out;
    const int64_t n = tensor.num_elements;
    out.k = std::min(k, n);
    if (n == 0) {
      out.max = nan_value;
      return out;
    }
    std::vector<double> v(static_cast<std::size_t>(n));
    convert_to_float64_cpu(tensor.data, tensor.type, n, v.data());
    if (std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); })) {
      out.top_sum = out.total_sum = out.max = nan_value;
      return out;
    }
    out.total_sum = pairwise_sum(v.data(), n);
    out.max = *std::max_element(v.begin(), v.end());
    if (out.k > 0) {
      const auto top = v.begin() + (n - out.k);
      std::nth_element(v.begin(), top, v.end());
      std::sort(top, v.end(), std::greater<>());
      out.top_sum = pairwise_sum(&*top, out.k);
    }
    return out;
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  "compute_top_k_sum: cannot allocate a float64 copy of " +
                      std::to_string(tensor.num_elements) + " elements");
  }
}

}  // namespace trialstat::kernels
