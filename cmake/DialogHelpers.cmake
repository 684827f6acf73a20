# dialog_add_app(NAME SOURCES... [LIBS ...]) — an executable linked to libdialog. The programs of
# the toolkit (named dialog*: daemons, GUIs, the tool) are installed into bin/; helpers with other
# names (test load generators) are not. Programs under gui/ go to the package component "gui",
# the others to "daemons" (cmake/DialogPackaging.cmake: a server host takes no GUI stack).
function(dialog_add_app name)
    cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE dialog::dialog ${ARG_LIBS})
    target_compile_options(${name} PRIVATE -Wall -Wextra)
    if(name MATCHES "^dialog")
        set(component daemons)
        if(CMAKE_CURRENT_SOURCE_DIR MATCHES "/gui/")
            set(component gui)
        endif()
        install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ${component})
        dialog_add_manpage(${name} ${component})
    endif()
endfunction()

# dialog_add_manpage(NAME COMPONENT) — share/man/man1/NAME.1.gz for an installed program: its --help (run
# when it is built, by help2man) as SYNOPSIS and OPTIONS, and the hand-written sections of
# docs/man/NAME.h2m (NAME, DESCRIPTION, ENVIRONMENT, EXAMPLES, SEE ALSO). Not in sanitizer and fuzz
# builds, which are never installed.
find_program(DIALOG_HELP2MAN help2man)
find_program(DIALOG_GZIP gzip)
if(DIALOG_HELP2MAN AND DIALOG_GZIP AND NOT DIALOG_SANITIZE AND NOT DIALOG_FUZZ)
    set(DIALOG_MANPAGES ON)
    add_custom_target(manpages ALL)
    # The programs' --help runs with a runtime directory of its own (0700, as Qt wants it), so that
    # a build as root, which has no XDG_RUNTIME_DIR, puts no QStandardPaths warning into the pages.
    set(DIALOG_MAN_RUNTIME_DIR ${CMAKE_BINARY_DIR}/man/xdg-runtime)
    file(MAKE_DIRECTORY ${DIALOG_MAN_RUNTIME_DIR})
    file(CHMOD ${DIALOG_MAN_RUNTIME_DIR} DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
elseif(NOT DIALOG_SANITIZE AND NOT DIALOG_FUZZ)
    message(STATUS "Manual pages disabled: help2man or gzip not found (Debian: help2man)")
endif()
function(dialog_add_manpage name component)
    if(NOT DIALOG_MANPAGES)
        return()
    endif()
    set(include ${PROJECT_SOURCE_DIR}/docs/man/${name}.h2m)
    if(NOT EXISTS ${include})
        message(FATAL_ERROR "${name} is installed but has no manual page text: write docs/man/${name}.h2m")
    endif()
    set(page ${CMAKE_BINARY_DIR}/man/man1/${name}.1)
    add_custom_command(OUTPUT ${page}.gz
        COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man/man1
        COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen DIALOG_CONTROL_SERVER=127.0.0.1:1
                XDG_RUNTIME_DIR=${DIALOG_MAN_RUNTIME_DIR}
                ${DIALOG_HELP2MAN} --no-info --no-discard-stderr --section 1
                --version-string ${PROJECT_VERSION} --source "DIALOG toolkit ${PROJECT_VERSION}"
                --manual "DIALOG toolkit" --include ${include} --output ${page} $<TARGET_FILE:${name}>
        COMMAND ${DIALOG_GZIP} -9nf ${page}
        DEPENDS ${name} ${include}
        COMMENT "Manual page of ${name}"
        VERBATIM)
    add_custom_target(manpage_${name} DEPENDS ${page}.gz)
    add_dependencies(manpages manpage_${name})
    install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT ${component})
endfunction()

# dialog_add_test(NAME SOURCES... [LIBS ...] [TIMEOUT s] [LABELS ...]) — a QtTest run by CTest.
function(dialog_add_test name)
    cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE dialog::dialog Qt6::Test ${ARG_LIBS})
    target_compile_definitions(${name} PRIVATE
        DIALOG_BIN_DIR="${CMAKE_RUNTIME_OUTPUT_DIRECTORY}"
        DIALOG_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
        DIALOG_SCREENSHOT_DIR="${CMAKE_BINARY_DIR}/screenshots")
    # The fixtures every integration and GUI test shares (tests/shared).
    target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/shared)
    add_test(NAME ${name} COMMAND ${name})
    if(NOT ARG_TIMEOUT)
        set(ARG_TIMEOUT 120)
    endif()
    if(DIALOG_SANITIZE)
        # Instrumented code runs several times slower (TSan: 5-15x): the test's whole time and
        # QtTest's per-function watchdog (5 min by default) are scaled, not the tests' own waits.
        math(EXPR ARG_TIMEOUT "${ARG_TIMEOUT} * 4")
    endif()
    set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT}
        ENVIRONMENT "QT_QPA_PLATFORM=offscreen;DIALOG_CONTROL_SERVER=127.0.0.1:1")
    if(ARG_LABELS)
        set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}")
    endif()
    if(DIALOG_SANITIZE)
        set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT "QTEST_FUNCTION_TIMEOUT=1200000")
    endif()
    if(DIALOG_SANITIZE STREQUAL "address" AND "gui" IN_LIST ARG_LABELS)
        # The GUI tests run under ASan+UBSan without LeakSanitizer: at exit LSan reports thousands
        # of indirect leaks and not one direct leak (cycles with no root) allocated inside Qt Charts
        # and Widgets under our chart views' constructors (series, axes, presenter items, text
        # layouts), although the windows and their views are deleted. Not traced further: Qt's
        # frames are not symbolised. The one with an owner of ours to blame was ours and is fixed
        # (histogramview.cpp: an area series does not own its line series).
        # The daemons these tests start are checked for leaks by the integration tests.
        set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT "LSAN_OPTIONS=detect_leaks=0")
    endif()
endfunction()
