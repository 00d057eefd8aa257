# SPDX-License-Identifier: Apache-2.0
# Every third-party dependency, found from the system (Debian packages installed by
# scripts/setup.sh). One find call each; kept in one file because each is a single line.
# trialstat_dependency(): a dependency of the installed libraries, also written into the package
# config (find_dependency) and the .deb's Depends (cmake/trialstat_dependency.cmake).
include(trialstat_dependency)
trialstat_dependency(Threads)
trialstat_dependency(Protobuf DEBIAN libprotobuf-dev)              # + protobuf-compiler (build)
trialstat_dependency(nlohmann_json 3.10 DEBIAN nlohmann-json3-dev)
trialstat_dependency(fmt DEBIAN libfmt-dev)
trialstat_dependency(simdjson DEBIAN libsimdjson-dev)
trialstat_dependency(Eigen3 3.4 NO_MODULE DEBIAN libeigen3-dev)
trialstat_pkg_config_dependency(PCRE2 libpcre2-8 DEBIAN libpcre2-dev)  # Python re semantics
trialstat_dependency(CURL 7.75 DEBIAN libcurl4-openssl-dev)       # S3 source: SigV4, multi interface
trialstat_dependency(pugixml DEBIAN libpugixml-dev)                # S3 listing and error XML
trialstat_dependency(SQLite3 DEBIAN libsqlite3-dev)               # the statistics store (issue 26)
if(TRIALSTAT_ENABLE_OPENMP)
  trialstat_dependency(OpenMP COMPONENTS CXX)
endif()
set(TRIALSTAT_HAS_MPI OFF)
if(TRIALSTAT_ENABLE_MPI)
  find_package(MPI COMPONENTS CXX)              # libopenmpi-dev, openmpi-bin (optional)
  set(TRIALSTAT_HAS_MPI ${MPI_CXX_FOUND})
  if(TRIALSTAT_HAS_MPI)  # optional, so not trialstat_dependency(): the same two records by hand
    set_property(GLOBAL APPEND_STRING PROPERTY TRIALSTAT_CONFIG_DEPENDENCIES "find_dependency(MPI COMPONENTS CXX)\n")
    set_property(GLOBAL APPEND PROPERTY TRIALSTAT_DEBIAN_DEPENDS libopenmpi-dev)
  endif()
endif()
if(TRIALSTAT_BUILD_TOOLS)
  find_package(CLI11 REQUIRED)                  # libcli11-dev
endif()
if(TRIALSTAT_BUILD_TESTS)
  find_package(GTest REQUIRED)                  # libgtest-dev
  include(GoogleTest)
endif()
if(TRIALSTAT_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)              # libbenchmark-dev
endif()
