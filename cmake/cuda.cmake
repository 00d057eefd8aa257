# SPDX-License-Identifier: Apache-2.0
# Detect nvcc and enable CUDA when present. The CUDA backend is built for Hopper (sm_90 SASS
# plus compute_90 PTX, which newer GPUs JIT) unless CMAKE_CUDA_ARCHITECTURES says otherwise.
set(TRIALSTAT_HAS_CUDA OFF)
if(TRIALSTAT_ENABLE_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)  # "90" = sm_90 SASS + compute_90 PTX
    endif()
    enable_language(CUDA)
    # CMake 3.25 predates nvcc 13 and does not know its C++20 flag; tell it (the headers use
    # C++20: std::span, designated initialisers).
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    trialstat_dependency(CUDAToolkit)  # the package config needs it only in CUDA builds
    set(TRIALSTAT_HAS_CUDA ON)
    message(STATUS "trialstat: CUDA backend ON (${CMAKE_CUDA_COMPILER}, archs ${CMAKE_CUDA_ARCHITECTURES})")
  else()
    message(STATUS "trialstat: nvcc not found, CUDA backend OFF (CPU backend only)")
  endif()
endif()
