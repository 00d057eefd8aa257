# SPDX-License-Identifier: Apache-2.0
# Every third-party dependency, found from the system (Debian packages installed by
# scripts/setup.sh). One find call each; kept in one file because each is a single line.
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)                 # libprotobuf-dev, protobuf-compiler
find_package(nlohmann_json 3.10 REQUIRED)       # nlohmann-json3-dev
find_package(fmt REQUIRED)                      # libfmt-dev
find_package(simdjson REQUIRED)                 # libsimdjson-dev
find_package(Eigen3 3.4 REQUIRED NO_MODULE)     # libeigen3-dev
find_package(CURL 7.75 REQUIRED)               # libcurl4-openssl-dev: S3 source (SigV4, multi)
find_package(pugixml REQUIRED)                  # libpugixml-dev: S3 listing and error XML
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)  # libpcre2-dev: Python re semantics
if(TRIALSTAT_ENABLE_OPENMP)
  find_package(OpenMP REQUIRED COMPONENTS CXX)
endif()
set(TRIALSTAT_HAS_MPI OFF)
if(TRIALSTAT_ENABLE_MPI)
  find_package(MPI COMPONENTS CXX)              # libopenmpi-dev, openmpi-bin (optional)
  set(TRIALSTAT_HAS_MPI ${MPI_CXX_FOUND})
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
