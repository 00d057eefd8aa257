// SPDX-License-Identifier: Apache-2.0
// Every streaming statistic of one tensor back to back (cpu_tensor_statistics.hpp).
#include "host/stats/cpu_tensor_statistics.hpp"

#include <array>
#include <new>
#include <utility>
#include <vector>

#include "kernels/histogram/histogram_cpu.hpp"
#include "kernels/log_histogram/log_histogram_cpu.hpp"
#include "kernels/log_histogram/log_histogram_op.hpp"
#include "kernels/moments/moments_cpu.hpp"
#include "trialstat/stats/statistics_executor.hpp"

namespace trialstat::stats::detail {

status compute_tensor_statistics(const std::byte* base, const stats::segment& seg,
                                 const stats::statistics_request& request,
                                 stats::statistics_record& record, snapshot_window* kept) noexcept {
  try {
    const stats::moments m = kernels::segment_moments_cpu(base, seg);
    record.moments = m;
    if (record.num_elements == 1) record.scalar = scalar_from_moments(m);
    if (request.histogram_bins > 0) {
      stats::histogram h;
      TRIALSTAT_RETURN_IF_ERROR(
          kernels::segment_histogram_cpu(base, seg, m, request.histogram_bins, h));
      record.histogram = std::move(h);
    }
    if (request.log_histogram) {
      // The bins straight into the record's vector (a 12 KiB copy per tensor less).
      std::vector<int64_t> bins(kernels::log_histogram_num_bins, 0);
      std::array<int64_t, kernels::log_histogram_num_cells - kernels::log_histogram_num_bins> extra{};
      kernels::segment_log_histogram_cpu(base, seg, bins.data(), extra.data());
      record.log_histogram = log_histogram_from_cells(std::move(bins), extra.data());
    }
    if (kept != nullptr && request.history_depth > 0) {
      const tensor_view view{base + seg.offset_bytes, record.type, record.shape,
                             record.num_elements, memory_kind::host};
      return compare_with_history(request, view, record, *kept);
    }
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  "statistics of one tensor: cannot allocate its records or history copy");
  }
  return status::success();
}

}  // namespace trialstat::stats::detail
