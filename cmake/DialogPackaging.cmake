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
    DESTINATION ${DIALOG_INSTALL_CMAKEDIR} COMPONENT dev)

# dialog.pc names the prefix it is installed under, which `cmake --install --prefix P` (and CPack)
# choose only at install time: configure everything else now and the prefix when installing.
set(DIALOG_PC_PREFIX "@DIALOG_PC_PREFIX@")
configure_file(cmake/dialog.pc.in ${CMAKE_BINARY_DIR}/dialog.pc.in @ONLY)
install(CODE "
    get_filename_component(DIALOG_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\" ABSOLUTE)
    configure_file(\"${CMAKE_BINARY_DIR}/dialog.pc.in\" \"${CMAKE_BINARY_DIR}/dialog.pc\" @ONLY)
    file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig\"
        TYPE FILE FILES \"${CMAKE_BINARY_DIR}/dialog.pc\")
" COMPONENT dev)

# The Python package (pure Python): Debian's interpreter finds it in dist-packages.
install(DIRECTORY python/dialog DESTINATION lib/python3/dist-packages COMPONENT python
    PATTERN __pycache__ EXCLUDE)

# Debian packages (cpack -G DEB in the build directory, or ./run.sh package), one per role of a
# host, each with what `cmake --install` gives for its component, under /usr:
#   libdialog0.1           the shared library (component runtime)
#   dialog-toolkit-dev     headers, libdialog.so, CMake package, pkg-config file (dev)
#   dialog-toolkit         daemons, dialogctl, IS types, partitions, web assets, systemd units (daemons):
#                          Qt Core/Network/Sql/HttpServer/WebSockets only, no GUI stack
#   dialog-toolkit-gui     the Qt Widgets applications (gui)
#   python3-dialog-toolkit the Python package, architecture all (python)
# Names Debian already uses are avoided: Debian's dialog package owns /usr/bin/dialog and provides
# libdialog-dev, and python3-dialog (pythondialog) installs the Python module `dialog`, which ours
# shadows: the two conflict. Dependencies on Debian's libraries come from dpkg-shlibdeps.
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev daemons gui python)
set(CPACK_PACKAGE_NAME dialog-toolkit)
set(CPACK_PACKAGE_VENDOR "DIALOG toolkit")
# The synopsis of every package (CPack puts it first); each component's description follows it.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "DIALOG toolkit: communication and control for DAQ systems")
set(CPACK_PACKAGE_CONTACT "DIALOG toolkit maintainers <dialog-toolkit@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_LIBRARY_OUTPUT_DIRECTORY})
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_CHECKSUM SHA256)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libdialog${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON) # a shlibs file and the ldconfig trigger for libdialog0.1
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "The shared library libdialog.
Services (publish/subscribe), commands and requests over persistent TCP
connections, the Control Server directory, heartbeats and recovery, the
Information Service client and run control, for the DAQ of experiments.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME dialog-toolkit-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "qt6-base-dev (>= ${DIALOG_QT_MIN_VERSION}), libprotobuf-dev, libzstd-dev")
set(CPACK_DEBIAN_DEV_DESCRIPTION "Development files.
Headers of libdialog, the CMake package (find_package(Dialog), target
Dialog::dialog) and the pkg-config file (dialog.pc), to build one's own
slaves and clients.")

set(CPACK_DEBIAN_DAEMONS_PACKAGE_NAME dialog-toolkit)
set(CPACK_COMPONENT_DAEMONS_DEPENDS runtime)
# Qt's SQL drivers are plug-ins (dlopen), which dpkg-shlibdeps cannot see: the logger, the
# archiver, the configuration database and the alarm server need SQLite's; PostgreSQL's only for --db postgresql://.
set(CPACK_DEBIAN_DAEMONS_PACKAGE_DEPENDS "libqt6sql6-sqlite")
# The IS server's web pictures (GET /is/…png) are drawn by dialog-render, a Qt Widgets program of the
# GUI package: a server host that wants them installs it, one that does not gets 501 naming it.
set(CPACK_DEBIAN_DAEMONS_PACKAGE_SUGGESTS "libqt6sql6-psql, dialog-toolkit-gui")
set(CPACK_DEBIAN_DAEMONS_DESCRIPTION "Daemons and the dialogctl tool.
The Control Server, IS server, message logger, archiver, alarm server,
run-control master and slaves, the dialogctl command-line tool, IS types, example partitions,
the web IS page and systemd units. Headless: no GUI libraries.")

set(CPACK_DEBIAN_GUI_PACKAGE_NAME dialog-toolkit-gui)
set(CPACK_COMPONENT_GUI_DEPENDS runtime daemons)
# The platform plug-ins (xcb, offscreen) are Qt plug-ins too.
set(CPACK_DEBIAN_GUI_PACKAGE_DEPENDS "qt6-qpa-plugins")
set(CPACK_DEBIAN_GUI_DESCRIPTION "Control-room applications.
Run control, IS monitor, online monitoring display (OMD), histogram presenter
and its off-screen renderer for the web IS's pictures (dialog-render), message
browser and the DIALOG inspector (Qt Widgets).")

set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-dialog-toolkit)
set(CPACK_DEBIAN_PYTHON_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3 (>= 3.9), python3-protobuf, python3-zstandard")
set(CPACK_DEBIAN_PYTHON_PACKAGE_CONFLICTS "python3-dialog")
set(CPACK_DEBIAN_PYTHON_DESCRIPTION "The Python client.
A pure-Python (asyncio) client of DIALOG: services, commands, requests, the
Information Service and the message log, without Qt. Its module is named
dialog, as pythondialog's (python3-dialog), with which it conflicts.")
include(CPack)
