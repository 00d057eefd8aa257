# SPDX-License-Identifier: Apache-2.0
# Dependencies of the installed libraries, declared once: found now and found again for users.
#
# trialstat_dependency(<Package> [<find_package arguments>...] [DEBIAN <dev package>])
#   find_package(<Package> <arguments> REQUIRED) now; writes the same
#   find_dependency(<Package> <arguments>) into the installed trialstat-config.cmake (so a user's
#   find_package(trialstat) also finds what the exported targets link), and adds <dev package>
#   to the Depends of the Debian package (install_rules.cmake).
# trialstat_pkg_config_dependency(<PREFIX> <module> [DEBIAN <dev package>])
#   the same for a pkg-config module: pkg_check_modules(<PREFIX> REQUIRED IMPORTED_TARGET <module>),
#   target PkgConfig::<PREFIX>.
#
# Use these for every library a trialstat_<area> library links (PUBLIC or PRIVATE: the static
# libraries carry their private dependencies too); call them inside if() for optional ones, so
# that the package config carries them exactly when the build has them. Build-only dependencies
# (CLI11, GTest, benchmark) keep a plain find_package().
macro(trialstat_dependency _trialstat_dep_package)
  cmake_parse_arguments(_trialstat_dep "" "DEBIAN" "" ${ARGN})
  find_package(${_trialstat_dep_package} ${_trialstat_dep_UNPARSED_ARGUMENTS} REQUIRED)
  list(JOIN _trialstat_dep_UNPARSED_ARGUMENTS " " _trialstat_dep_args)
  string(STRIP "find_dependency(${_trialstat_dep_package} ${_trialstat_dep_args}" _trialstat_dep_line)
  set_property(GLOBAL APPEND_STRING PROPERTY TRIALSTAT_CONFIG_DEPENDENCIES "${_trialstat_dep_line})\n")
  if(_trialstat_dep_DEBIAN)
    set_property(GLOBAL APPEND PROPERTY TRIALSTAT_DEBIAN_DEPENDS ${_trialstat_dep_DEBIAN})
  endif()
endmacro()

macro(trialstat_pkg_config_dependency _trialstat_dep_prefix _trialstat_dep_module)
  cmake_parse_arguments(_trialstat_dep "" "DEBIAN" "" ${ARGN})
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(${_trialstat_dep_prefix} REQUIRED IMPORTED_TARGET ${_trialstat_dep_module})
  string(CONCAT _trialstat_dep_line
    "find_dependency(PkgConfig)\n"
    "if(NOT TARGET PkgConfig::${_trialstat_dep_prefix})\n"
    "  pkg_check_modules(${_trialstat_dep_prefix} REQUIRED IMPORTED_TARGET ${_trialstat_dep_module})\n"
    "endif()\n")
  set_property(GLOBAL APPEND_STRING PROPERTY TRIALSTAT_CONFIG_DEPENDENCIES "${_trialstat_dep_line}")
  set_property(GLOBAL APPEND PROPERTY TRIALSTAT_DEBIAN_DEPENDS pkg-config ${_trialstat_dep_DEBIAN})
endmacro()
