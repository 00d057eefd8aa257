# SPDX-License-Identifier: Apache-2.0
# Install headers, the stage libraries and a package config so that
# `find_package(trialstat)` + `target_link_libraries(app trialstat::trialstat)` works.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
install(DIRECTORY include/trialstat DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/trialstat/config.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/trialstat)
install(TARGETS ${TRIALSTAT_AREA_TARGETS} trialstat_proto trialstat
        EXPORT trialstat-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT trialstat-targets NAMESPACE trialstat::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/trialstat)
configure_package_config_file(cmake/trialstat-config.cmake.in
  ${PROJECT_BINARY_DIR}/trialstat-config.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/trialstat)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/trialstat-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/trialstat-config.cmake
              ${PROJECT_BINARY_DIR}/trialstat-config-version.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/trialstat)
