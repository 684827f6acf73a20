# The installed package: CMake config (find_package(Dialog) → Dialog::dialog), pkg-config file
# (dialog.pc) and the Debian package (CPack, dialog-toolkit).
include(CMakePackageConfigHelpers)

set(DIALOG_QT_MIN_VERSION 6.4)

configure_package_config_file(cmake/DialogConfig.cmake.in ${CMAKE_BINARY_DIR}/DialogConfig.cmake
    INSTALL_DESTINATION ${DIALOG_INSTALL_CMAKEDIR}
    PATH_VARS DIALOG_INSTALL_DATADIR)
# A 0.x API changes with every minor version: only the same major.minor satisfies a request.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/DialogConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/DialogConfig.cmake ${CMAKE_BINARY_DIR}/DialogConfigVersion.cmake
    DESTINATION ${DIALOG_INSTALL_CMAKEDIR})

# dialog.pc names the prefix it is installed under, which `cmake --install --prefix P` (and CPack)
# choose only at install time: configure everything else now and the prefix when installing.
set(DIALOG_PC_PREFIX "@DIALOG_PC_PREFIX@")
configure_file(cmake/dialog.pc.in ${CMAKE_BINARY_DIR}/dialog.pc.in @ONLY)
install(CODE "
    get_filename_component(DIALOG_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\" ABSOLUTE)
    configure_file(\"${CMAKE_BINARY_DIR}/dialog.pc.in\" \"${CMAKE_BINARY_DIR}/dialog.pc\" @ONLY)
    file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\"
        TYPE FILE FILES \"${CMAKE_BINARY_DIR}/dialog.pc\")
")

# Debian package (cpack -G DEB in the build directory, or ./run.sh package): everything
# `cmake --install` gives, under /usr; its dependencies come from dpkg-shlibdeps.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME dialog-toolkit)
set(CPACK_PACKAGE_VENDOR "DIALOG toolkit")
set(CPACK_PACKAGE_CONTACT "DIALOG toolkit maintainers <dialog-toolkit@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION "libdialog (services, commands, Control Server directory, heartbeats and
recovery), the dialog-* daemons (Control Server, IS server, run-control master and slaves), the
Qt Widgets applications, the dialogctl tool, headers, CMake package and pkg-config file.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_LIBRARY_OUTPUT_DIRECTORY})
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_CHECKSUM SHA256)
include(CPack)
