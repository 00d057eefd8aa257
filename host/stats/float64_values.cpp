// SPDX-License-Identifier: Apache-2.0
#include "trialstat/stats/float64_values.hpp"

#include <new>
#include <string>

#include "kernels/common/cpu_convert.hpp"
#include "kernels/common/cpu_validate.hpp"

namespace trialstat::stats {

status append_as_float64(const tensor_view& tensor, std::vector<double>& out) {
  const segment seg{0, tensor.num_elements, tensor.type};
  TRIALSTAT_RETURN_IF_ERROR(kernels::validate_segments(tensor.data, {&seg, 1}, "append_as_float64"));
  try {
    const std::size_t first = out.size();
    out.resize(first + static_cast<std::size_t>(tensor.num_elements));
    kernels::convert_to_float64_cpu(tensor.data, tensor.type, tensor.num_elements,
                                    out.data() + first);
    return status::success();
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory, "append_as_float64: cannot grow the output to " +
                                                 std::to_string(out.size() + static_cast<std::size_t>(tensor.num_elements)) +
                                                 " values");
  }
}

}  // namespace trialstat::stats
