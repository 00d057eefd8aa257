// SPDX-License-Identifier: Apache-2.0
// CPU twin of count_equal: fixed chunks in parallel, each with its own row of counters; rows are
// added in chunk order (integers: exact).
#include "kernels/value_counts/value_counts_cpu.hpp"

#include <new>
#include <string>

#include "kernels/common/cpu_parallel.hpp"
#include "kernels/value_counts/value_counts_op.hpp"

namespace trialstat::kernels {

result<std::vector<int64_t>> count_equal_cpu(const tensor_view& tensor,
                                             std::span<const double> values) noexcept {
  try {
    const auto m = static_cast<int64_t>(values.size());
    std::vector<int64_t> out(values.size(), 0);
    const int64_t n = tensor.num_elements;
    if (m == 0 || n == 0) return out;
    const int64_t chunks = (n + cpu_chunk_elements - 1) / cpu_chunk_elements;
    std::vector<int64_t> partial(static_cast<std::size_t>(chunks * m), 0);
    const auto* bytes = reinterpret_cast<const unsigned char*>(tensor.data);
    visit_real_dtype(tensor.type, [&](auto tag) {
      constexpr dtype D = decltype(tag)::value;
      cpu_parallel_for(chunks, [&](int64_t c) {
        const int64_t begin = c * cpu_chunk_elements;
        const int64_t end = begin + cpu_chunk_elements < n ? begin + cpu_chunk_elements : n;
        int64_t* row = partial.data() + c * m;
        for (int64_t i = begin; i < end; ++i) {
          const double x = load_as_double<D, false>(bytes, i);
          for (int64_t k = 0; k < m; ++k) row[k] += equal_hit(x, values[static_cast<std::size_t>(k)]) ? 1 : 0;
        }
      });
    });
    for (int64_t c = 0; c < chunks; ++c) {
      for (int64_t k = 0; k < m; ++k) out[static_cast<std::size_t>(k)] += partial[static_cast<std::size_t>(c * m + k)];
    }
    return out;
  } catch (const std::bad_alloc&) {
    return status(error_code::out_of_memory,
                  "count_equal: cannot allocate counters for " +
                      std::to_string(tensor.num_elements) + " elements");
  }
}

}  // namespace trialstat::kernels
