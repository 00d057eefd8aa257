// SPDX-License-Identifier: Apache-2.0
/// @file for_each_isa.hpp
/// @brief Test helper: run a body once per CPU twin ISA level this machine supports (baseline
/// first, kernels/common/cpu_simd.hpp), with the level in the gtest trace; the limit is removed
/// afterwards.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "kernels/common/cpu_simd.hpp"

namespace trialstat::test_isa {

/// @brief body() or body(cpu_isa) once per supported level.
template <class Body>
void for_each_isa(Body&& body) {
  for (int level = 0; level <= static_cast<int>(kernels::detected_cpu_isa()); ++level) {
    kernels::set_cpu_isa_limit(level);
    SCOPED_TRACE(std::string("isa ") + kernels::cpu_isa_name(kernels::active_cpu_isa()));
    if constexpr (std::is_invocable_v<Body&, kernels::cpu_isa>) {
      body(static_cast<kernels::cpu_isa>(level));
    } else {
      body();
    }
  }
  kernels::set_cpu_isa_limit(-1);
}

}  // namespace trialstat::test_isa
