# tst_package (cmake -P): installs the build into WORK_DIR/prefix, checks the layout, runs the
# installed programs, then builds and runs tests/package/consumer against the installed tree with
# find_package(Dialog) and with pkg-config. Everything it writes stays under WORK_DIR (build tree).
cmake_minimum_required(VERSION 3.21)

foreach(var BUILD_DIR WORK_DIR SOURCE_DIR CONSUMER_DIR GENERATOR CXX VERSION LIBRARY SONAME LIBDIR)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
        message(FATAL_ERROR "package_test.cmake: -D${var}=... is required")
    endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
set(failures "")
# check(WHAT CONDITION...): records WHAT as failed unless if(CONDITION) holds.
function(check what)
    if(${ARGN})
        return()
    endif()
    message(STATUS "FAIL: ${what}")
    list(APPEND failures "${what}")
    set(failures "${failures}" PARENT_SCOPE)
endfunction()

# Runs a command with a time bound; fails the test at once if it does not exit with 0.
function(run what)
    cmake_parse_arguments(ARG "" "OUTPUT;DIR" "COMMAND" ${ARGN})
    if(NOT ARG_DIR)
        set(ARG_DIR ${WORK_DIR})
    endif()
    execute_process(COMMAND ${ARG_COMMAND} WORKING_DIRECTORY ${ARG_DIR} TIMEOUT 120
        RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${what} failed (${rc}):\n${ARG_COMMAND}\n${out}\n${err}")
    endif()
    if(ARG_OUTPUT)
        set(${ARG_OUTPUT} "${out}" PARENT_SCOPE)
    endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# --- cmake --install --------------------------------------------------------------------------
run("cmake --install" COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} DIR ${WORK_DIR})

# Programs: every dialog* program of the build, and nothing else (no tests, no test helpers).
# The build tree's `dialog` link to dialogctl is not one of them: Debian's dialog package owns
# /usr/bin/dialog.
file(GLOB built RELATIVE ${BUILD_DIR}/bin ${BUILD_DIR}/bin/dialog*)
list(REMOVE_ITEM built dialog)
file(GLOB installed RELATIVE ${prefix}/bin ${prefix}/bin/*)
list(SORT built)
list(SORT installed)
check("bin/ holds the dialog* programs of the build (${built}), found (${installed})" built STREQUAL installed)
foreach(p dialogctl dialog-controlserver dialog-isserver dialog-master dialog-slave)
    check("bin/${p} installed" EXISTS ${prefix}/bin/${p})
endforeach()
check("no bin/dialog installed (it is Debian's dialog package's)" NOT EXISTS ${prefix}/bin/dialog)

# The shared library, its SONAME link and the development link.
set(libdir ${prefix}/${LIBDIR})
check("${LIBDIR}/${LIBRARY} installed" EXISTS ${libdir}/${LIBRARY})
check("${LIBDIR}/${SONAME} is a link to the library" IS_SYMLINK ${libdir}/${SONAME})
check("${LIBDIR}/libdialog.so is a link to the library" IS_SYMLINK ${libdir}/libdialog.so)
check("the library file is libdialog.so.${VERSION}" LIBRARY STREQUAL "libdialog.so.${VERSION}")
file(GLOB static_libs ${libdir}/*.a)
check("no static library installed (${static_libs})" NOT static_libs)
find_program(READELF readelf)
if(READELF)
    run("readelf" COMMAND ${READELF} -d ${libdir}/${LIBRARY} OUTPUT dyn)
    check("SONAME of the library is ${SONAME}" dyn MATCHES "SONAME[^\n]*\\[${SONAME}\\]")
    run("readelf" COMMAND ${READELF} -d ${prefix}/bin/dialogctl OUTPUT dyn)
    check("installed programs find the library relative to themselves (RUNPATH $ORIGIN/../${LIBDIR})" dyn MATCHES "RUNPATH[^\n]*\\[\\$ORIGIN/\\.\\./${LIBDIR}\\]")
endif()
# The protobuf code generated for the wire format lives in the library only: a program holding a
# second copy would have two sets of default instances in one process.
find_program(NM nm)
if(NM)
    foreach(p dialog-controlserver dialog-isserver)
        run("nm" COMMAND ${NM} --defined-only -C ${prefix}/bin/${p} OUTPUT syms)
        check("${p} defines no generated protobuf code of its own (it is libdialog's)" NOT syms MATCHES " [TtDdBbRr] dialog::(wire|isproto)::")
    endforeach()
endif()

# Headers: the whole public tree (with its folders) and the generated version header.
file(GLOB_RECURSE headers RELATIVE ${SOURCE_DIR}/libdialog/include ${SOURCE_DIR}/libdialog/include/*.h)
check("public headers found in the source tree" headers)
foreach(h ${headers} dialog/version.h)
    check("include/${h} installed" EXISTS ${prefix}/include/${h})
endforeach()
file(GLOB_RECURSE private_headers ${prefix}/include/*_p.h ${prefix}/include/*.pb.h)
check("no internal header installed (${private_headers})" NOT private_headers)

# CMake package, pkg-config file, data files.
foreach(f cmake/Dialog/DialogConfig.cmake cmake/Dialog/DialogConfigVersion.cmake
          cmake/Dialog/DialogTargets.cmake pkgconfig/dialog.pc)
    check("${LIBDIR}/${f} installed" EXISTS ${libdir}/${f})
endforeach()
file(GLOB types ${prefix}/share/dialog/is-types/*.xml)
check("share/dialog/is-types/*.xml installed" types)
foreach(f partitions/demo.json web/index.html web/app.js)
    check("share/dialog/${f} installed" EXISTS ${prefix}/share/dialog/${f})
endforeach()
# systemd units, with this prefix's paths.
foreach(unit dialog-controlserver.service dialog-isserver@.service dialog-configdb.service dialog-agent.service)
    check("lib/systemd/system/${unit} installed" EXISTS ${prefix}/lib/systemd/system/${unit})
    file(READ ${prefix}/lib/systemd/system/${unit} text)
    string(FIND "${text}" "ExecStart=${prefix}/bin/dialog-" at)
    check("${unit} starts the installed program" at GREATER -1)
endforeach()

# --- the installed programs run from the installed tree ---------------------------------------
foreach(p ${installed})
    execute_process(COMMAND ${prefix}/bin/${p} --help TIMEOUT 30
        RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    check("installed ${p} --help exits with 0 (${rc}: ${err})" rc EQUAL 0)
endforeach()

# --- find_package(Dialog) ---------------------------------------------------------------------
run("configuring the consumer" DIR ${WORK_DIR} COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_DIR}
    -B ${WORK_DIR}/consumer-build -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} -DDIALOG_EXPECTED_VERSION=${VERSION})
run("building the consumer" DIR ${WORK_DIR} COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build)
run("running the consumer" DIR ${WORK_DIR} COMMAND ${WORK_DIR}/consumer-build/consumer OUTPUT out)
message(STATUS "find_package(Dialog) consumer: ${out}")
check("the find_package consumer prints the version" out MATCHES "dialog::Client PackageCheck: libdialog ${VERSION}, headers ${VERSION}")
string(FIND "${out}" "data ${prefix}/share/dialog" at)
check("Dialog_DATA_DIR is the installed share/dialog" at GREATER -1)
# An incompatible version request is refused.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer-badversion
    -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix}
    -DDIALOG_EXPECTED_VERSION=999.0 TIMEOUT 120 RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
check("find_package(Dialog 999.0) fails" NOT rc EQUAL 0)

# --- pkg-config ---------------------------------------------------------------------------------
if(NOT PKG_CONFIG)
    message(FATAL_ERROR "pkg-config not found")
endif()
set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)
run("pkg-config" COMMAND ${PKG_CONFIG} --modversion dialog OUTPUT pcversion)
string(STRIP "${pcversion}" pcversion)
check("pkg-config --modversion dialog is ${VERSION} (${pcversion})" pcversion STREQUAL VERSION)
run("pkg-config" COMMAND ${PKG_CONFIG} --cflags --libs dialog OUTPUT flags)
string(STRIP "${flags}" flags)
message(STATUS "pkg-config --cflags --libs dialog: ${flags}")
string(FIND "${flags}" "-I${prefix}/include" at)
check("pkg-config names the installed include directory" at GREATER -1)
separate_arguments(flags UNIX_COMMAND "${flags}")
run("compiling the consumer with pkg-config" DIR ${WORK_DIR}
    COMMAND ${CXX} -std=c++17 ${CONSUMER_DIR}/main.cpp ${flags} -o ${WORK_DIR}/consumer-pc)
run("running the pkg-config consumer" DIR ${WORK_DIR}
    COMMAND ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${libdir} ${WORK_DIR}/consumer-pc OUTPUT out)
message(STATUS "pkg-config consumer: ${out}")
check("the pkg-config consumer prints the version" out MATCHES "libdialog ${VERSION}, headers ${VERSION}")

if(failures)
    list(LENGTH failures n)
    list(JOIN failures "\n  " text)
    message(FATAL_ERROR "${n} check(s) failed:\n  ${text}")
endif()
message(STATUS "installed tree ${prefix}: all checks passed")
