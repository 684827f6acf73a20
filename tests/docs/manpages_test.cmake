# Every installed program has its manual page, and man renders each without a warning:
# cmake -DBUILD_DIR=… -DWORK_DIR=… -DMANDIR=… -P manpages_test.cmake
set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
    OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc)
    message(FATAL_ERROR "cmake --install failed: ${err}")
endif()
file(GLOB programs RELATIVE ${prefix}/bin ${prefix}/bin/*)
if(NOT programs)
    message(FATAL_ERROR "no program installed in ${prefix}/bin")
endif()
set(failures "")
foreach(p IN LISTS programs)
    set(page ${prefix}/${MANDIR}/man1/${p}.1.gz)
    if(NOT EXISTS ${page})
        string(APPEND failures "${p}: no manual page ${MANDIR}/man1/${p}.1.gz\n")
        continue()
    endif()
    # --warnings: groff's warnings (bad requests, unknown macros) are printed on stderr. col -b
    # takes out the overstrikes of bold and underlined text.
    execute_process(COMMAND ${CMAKE_COMMAND} -E env MANWIDTH=80 MANPAGER=cat man --warnings -l ${page}
        COMMAND col -b
        OUTPUT_VARIABLE text ERROR_VARIABLE err RESULTS_VARIABLE rcs)
    string(REPLACE ";0" "" rc "${rcs}")
    string(REGEX REPLACE "^0$" "" rc "${rc}")
    if(rc OR NOT err STREQUAL "")
        string(APPEND failures "${p}: man -l ${page} failed (${rc}): ${err}\n")
    elseif(text MATCHES "QStandardPaths|qt\\.qpa\\.")
        # A program's --help run by help2man must not print Qt's own start-up warnings into its page.
        string(APPEND failures "${p}: the page holds a Qt warning:\n${text}\n")
    elseif(NOT text MATCHES "NAME\n +${p} +- " OR NOT text MATCHES "DESCRIPTION" OR NOT text MATCHES "OPTIONS|--help")
        string(APPEND failures "${p}: the page lacks its NAME, DESCRIPTION or options:\n${text}\n")
    else()
        message(STATUS "${p}: ${MANDIR}/man1/${p}.1.gz renders")
    endif()
endforeach()
if(failures)
    message(FATAL_ERROR "${failures}")
endif()
