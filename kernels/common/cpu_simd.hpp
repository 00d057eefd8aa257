// SPDX-License-Identifier: Apache-2.0
/// @file cpu_simd.hpp
/// @brief Runtime SIMD dispatch of the CPU twins (no -march flags on library targets, STYLE.md).
///
/// Each hot loop is written once, over 8 logical float64 lanes (cpu_lanes.hpp), in a body file
/// that cpu_regions.hpp compiles three times: for AVX-512 (F/DQ/VL/BW), for AVX2 and for the
/// x86-64 baseline (SSE2). The copy to call is chosen from `__builtin_cpu_supports`, detected
/// once per process (TRIALSTAT_CPU_SELECT).
///
/// The lanes are logical, not registers: AVX-512 holds the 8 lanes in one register, AVX2 in
/// two and SSE2 in four, but every lane receives the same values in the same order and every
/// operation is one IEEE operation (floating-point contraction is off, so no FMA is formed).
/// Results are therefore bit-identical on every ISA (which NaN payload survives a sum aside),
/// which tests/kernels/cpu_lanes_test.cpp checks by forcing each level with `set_cpu_isa_limit`.
///
/// `TRIALSTAT_CPU_ISA=baseline|avx2|avx512` in the environment caps the level (benchmarks,
/// debugging); it is read once, at the first query.
///
/// Including this header turns floating-point contraction off for the rest of the translation
/// unit (`#pragma GCC optimize("fp-contract=off")`): no a·b + c below it becomes an FMA, so the
/// per-ISA copies of a loop round identically. Only the CPU kernel files include it.
#pragma once

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
#if defined(__GNUC__) && !defined(__clang__)
// The lane helpers (cpu_lanes.hpp) are always inlined inside their ISA region; GCC's note that
// passing a 32/64-byte vector by value changes the ABI does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#if (defined(__x86_64__) || defined(__i386__)) && defined(__clang__)
#include <cpuid.h>  // detected_cpu_isa: F16C
#endif

namespace trialstat::kernels {

/// @brief Instruction-set levels of the CPU twins, ascending.
enum class cpu_isa : int {
  baseline = 0,  ///< x86-64 SSE2 (or any non-x86 target: plain C++)
  avx2 = 1,      ///< AVX2 (+BMI2, F16C); FMA deliberately not enabled
  avx512 = 2,    ///< AVX-512 F, DQ, VL, BW
};

/// @brief "baseline", "avx2", "avx512".
[[nodiscard]] inline const char* cpu_isa_name(cpu_isa isa) noexcept {
  switch (isa) {
    case cpu_isa::avx512: return "avx512";
    case cpu_isa::avx2: return "avx2";
    default: return "baseline";
  }
}

/// @brief The best level this CPU and OS support (cached after the first call).
[[nodiscard]] inline cpu_isa detected_cpu_isa() noexcept {
  static const cpu_isa detected = [] {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw")) {
      return cpu_isa::avx512;
    }
#if defined(__clang__)
    // clang's __builtin_cpu_supports does not know "f16c": CPUID leaf 1, ECX bit 29.
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
#else
    const bool f16c = __builtin_cpu_supports("f16c");
#endif
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") && f16c) {
      return cpu_isa::avx2;
    }
#endif
    return cpu_isa::baseline;
  }();
  return detected;
}

namespace simd_detail {
/// -1: no limit set by set_cpu_isa_limit (then the environment's TRIALSTAT_CPU_ISA applies).
inline std::atomic<int> cpu_isa_limit{-1};

inline int environment_cpu_isa_limit() noexcept {
  static const int limit = [] {
    const char* text = std::getenv("TRIALSTAT_CPU_ISA");
    if (text == nullptr) return -1;
    const std::string_view v(text);
    if (v == "baseline" || v == "sse2") return static_cast<int>(cpu_isa::baseline);
    if (v == "avx2") return static_cast<int>(cpu_isa::avx2);
    if (v == "avx512") return static_cast<int>(cpu_isa::avx512);
    return -1;
  }();
  return limit;
}
}  // namespace simd_detail

/// @brief Cap the level the twins use (tests and benchmarks); `limit < 0` removes the cap.
/// A cap above the detected level has no effect. Not meant to change while kernels run.
inline void set_cpu_isa_limit(int limit) noexcept {
  simd_detail::cpu_isa_limit.store(limit, std::memory_order_relaxed);
}

/// @brief The level the twins run at now: the detected one, capped by set_cpu_isa_limit or,
/// when no cap is set, by $TRIALSTAT_CPU_ISA.
[[nodiscard]] inline cpu_isa active_cpu_isa() noexcept {
  int level = static_cast<int>(detected_cpu_isa());
  int limit = simd_detail::cpu_isa_limit.load(std::memory_order_relaxed);
  if (limit < 0) limit = simd_detail::environment_cpu_isa_limit();
  if (limit >= 0 && limit < level) level = limit;
  return static_cast<cpu_isa>(level);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>  // a few intrinsics in cpu_lanes.hpp where GCC's generic vectors are weak
/// The kernel bodies are compiled for AVX-512 and AVX2 as well as the baseline
/// (cpu_regions.hpp). FMA is left out of the AVX2 region on purpose, and every kernel file turns
/// contraction off (this header), so no region forms an FMA the others would not.
/// TRIALSTAT_CPU_BASELINE_ONLY (sanitizer builds, scripts/sanitize.sh) keeps the baseline copy
/// only: a third of the code to compile and instrument.
#if defined(TRIALSTAT_CPU_BASELINE_ONLY)
#define TRIALSTAT_CPU_HAS_ISA_VARIANTS 0
#else
#define TRIALSTAT_CPU_HAS_ISA_VARIANTS 1
#endif
#else
#define TRIALSTAT_CPU_HAS_ISA_VARIANTS 0
#endif

/// @brief Pointer to the copy of region function NAME (cpu_regions.hpp) for active_cpu_isa().
#if TRIALSTAT_CPU_HAS_ISA_VARIANTS
#define TRIALSTAT_CPU_SELECT(NAME)                                                       \
  (::trialstat::kernels::active_cpu_isa() == ::trialstat::kernels::cpu_isa::avx512       \
       ? &cpu_avx512::NAME                                                               \
       : ::trialstat::kernels::active_cpu_isa() == ::trialstat::kernels::cpu_isa::avx2   \
             ? &cpu_avx2::NAME                                                           \
             : &cpu_baseline::NAME)
#else
#define TRIALSTAT_CPU_SELECT(NAME) (&cpu_baseline::NAME)
#endif

}  // namespace trialstat::kernels
