# SPDX-License-Identifier: Apache-2.0
# trialstat_add_area(<name> SOURCES_DIR <dir> [CUDA_SOURCES_DIR <dir>] DEPS <targets...>)
#
# One static library per pipeline stage (DESIGN.md), named trialstat_<name>, from every .cpp in
# its folder (and, with CUDA, every .cu under CUDA_SOURCES_DIR). The folder layout is the build
# description: a new source file in a stage's folder joins that stage's library on the next
# configure. Stages link only what they use, so a stage's tests build without the others.
set(TRIALSTAT_AREA_TARGETS "" CACHE INTERNAL "")

function(trialstat_add_area name)
  cmake_parse_arguments(AREA "" "" "SOURCES;CUDA_SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  set(target trialstat_${name})
  set(sources)
  foreach(pattern IN LISTS AREA_SOURCES)
    file(GLOB_RECURSE found CONFIGURE_DEPENDS ${pattern})
    list(APPEND sources ${found})
  endforeach()
  if(TRIALSTAT_HAS_CUDA)
    foreach(pattern IN LISTS AREA_CUDA_SOURCES)
      file(GLOB_RECURSE found CONFIGURE_DEPENDS ${pattern})
      list(APPEND sources ${found})
    endforeach()
  endif()
  if(sources)
    add_library(${target} STATIC ${sources})
    target_include_directories(${target} PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
      $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
      PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} PUBLIC ${AREA_DEPS} PRIVATE ${AREA_PRIVATE_DEPS})
    trialstat_set_warnings(${target})
    if(TRIALSTAT_HAS_CUDA)
      set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF
                                                 CUDA_RESOLVE_DEVICE_SYMBOLS ON)
    endif()
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
      $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(${target} INTERFACE ${AREA_DEPS})
  endif()
  # Installed as trialstat::<name> (trialstat-targets.cmake), the same name as this alias, so a
  # consumer links the same names after find_package(trialstat) as after add_subdirectory.
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  add_library(trialstat::${name} ALIAS ${target})
  set(TRIALSTAT_AREA_TARGETS ${TRIALSTAT_AREA_TARGETS} ${target} CACHE INTERNAL "")
endfunction()
