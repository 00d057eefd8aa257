// SPDX-License-Identifier: Apache-2.0
/// @file cpu_convert.hpp
/// @brief Host conversion of a whole tensor to float64 with the shared per-element definition
/// (element_op.hpp), in parallel chunks (the result does not depend on the thread count).
/// Internal to the CPU twins and host/stats.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/cpu_parallel.hpp"
#include "kernels/common/element_op.hpp"

namespace trialstat::kernels {

/// @brief out[i] = element i of the `type` tensor at `data` as float64, for i < n.
/// Returns false (nothing written) for an unsupported dtype. `data` may be unaligned.
inline bool convert_to_float64_cpu(const std::byte* data, dtype type, int64_t n, double* out) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  return visit_real_dtype(type, [&](auto tag) {
    constexpr dtype D = decltype(tag)::value;
    const int64_t chunks = (n + cpu_chunk_elements - 1) / cpu_chunk_elements;
    cpu_parallel_for(chunks, [&](int64_t k) {
      const int64_t begin = k * cpu_chunk_elements;
      const int64_t end = begin + cpu_chunk_elements < n ? begin + cpu_chunk_elements : n;
      for (int64_t i = begin; i < end; ++i) out[i] = load_as_double<D, false>(bytes, i);
    });
  });
}

}  // namespace trialstat::kernels
