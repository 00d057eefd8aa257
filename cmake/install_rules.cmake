# SPDX-License-Identifier: Apache-2.0
# Install headers, the stage libraries and a package config so that
# `find_package(trialstat)` + `target_link_libraries(app trialstat::trialstat)` works, and the
# Debian package (CPack: `cpack -G DEB` in the build folder -> trialstat_<version>_amd64.deb).
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
# find_dependency() lines: one per trialstat_dependency() call (cmake/dependencies.cmake).
get_property(TRIALSTAT_CONFIG_DEPENDENCIES GLOBAL PROPERTY TRIALSTAT_CONFIG_DEPENDENCIES)
configure_package_config_file(cmake/trialstat-config.cmake.in
  ${PROJECT_BINARY_DIR}/trialstat-config.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/trialstat)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/trialstat-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/trialstat-config.cmake
              ${PROJECT_BINARY_DIR}/trialstat-config-version.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/trialstat)

# One .deb with everything above plus the CLI: installed under /usr, run-time Depends from
# dpkg-shlibdeps, and the -dev packages the package config's find_dependency() lines need.
get_property(trialstat_debian_depends GLOBAL PROPERTY TRIALSTAT_DEBIAN_DEPENDS)
list(REMOVE_DUPLICATES trialstat_debian_depends)
list(JOIN trialstat_debian_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME trialstat)
set(CPACK_PACKAGE_VENDOR trialstat)
set(CPACK_PACKAGE_CONTACT "trialstat maintainers <trialstat@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # trialstat_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/dist)
include(CPack)
