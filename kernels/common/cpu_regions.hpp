// SPDX-License-Identifier: Apache-2.0
/// @file cpu_regions.hpp
/// @brief Compile one kernel body once per ISA (no include guard: include it once per kernel
/// file, after every header the body needs). Before including, define
/// TRIALSTAT_CPU_KERNEL_BODY as the body file's quoted path. Each copy lives in its own
/// namespace inside an anonymous namespace (internal linkage), with every function of it
/// compiled for that ISA (`#pragma GCC target` / `#pragma clang attribute`):
///   trialstat::kernels::(anon)::cpu_avx512   — 8 lanes in one 512-bit register,
///   trialstat::kernels::(anon)::cpu_avx2     — two 256-bit registers,
///   trialstat::kernels::(anon)::cpu_baseline — four 128-bit registers (every x86-64; other
///                                              architectures get only this one, NEON-width).
/// Each copy first includes cpu_lanes.hpp (the lane types for that width), then the body. The
/// body may only use what was included before this file, and must not include anything itself.
/// Pick the copy at run time with TRIALSTAT_CPU_SELECT (cpu_simd.hpp) on active_cpu_isa().

#if !defined(TRIALSTAT_CPU_KERNEL_BODY)
#error "define TRIALSTAT_CPU_KERNEL_BODY before including kernels/common/cpu_regions.hpp"
#endif

#if TRIALSTAT_CPU_HAS_ISA_VARIANTS

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,bmi,bmi2,popcnt,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,avx2,bmi,bmi2,popcnt,f16c")
#endif
namespace trialstat::kernels {
namespace {
namespace cpu_avx512 {
#define TRIALSTAT_CPU_NATIVE_BYTES 64
#include "kernels/common/cpu_lanes.hpp"
#include TRIALSTAT_CPU_KERNEL_BODY
#undef TRIALSTAT_CPU_NATIVE_BYTES
}  // namespace cpu_avx512
}  // namespace
}  // namespace trialstat::kernels
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,bmi,bmi2,popcnt,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,bmi,bmi2,popcnt,f16c")
#endif
namespace trialstat::kernels {
namespace {
namespace cpu_avx2 {
#define TRIALSTAT_CPU_NATIVE_BYTES 32
#include "kernels/common/cpu_lanes.hpp"
#include TRIALSTAT_CPU_KERNEL_BODY
#undef TRIALSTAT_CPU_NATIVE_BYTES
}  // namespace cpu_avx2
}  // namespace
}  // namespace trialstat::kernels
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#endif  // TRIALSTAT_CPU_HAS_ISA_VARIANTS

namespace trialstat::kernels {
namespace {
namespace cpu_baseline {
#define TRIALSTAT_CPU_NATIVE_BYTES 16
#include "kernels/common/cpu_lanes.hpp"
#include TRIALSTAT_CPU_KERNEL_BODY
#undef TRIALSTAT_CPU_NATIVE_BYTES
}  // namespace cpu_baseline
}  // namespace
}  // namespace trialstat::kernels

#undef TRIALSTAT_CPU_KERNEL_BODY
