# The API reference of the public headers (Doxygen): cmake --build build --target docs gives
# build/docs/html/index.html. Undocumented public API is a warning, and any warning fails the target.
find_package(Doxygen)
if(NOT DOXYGEN_FOUND)
    message(STATUS "API reference (target docs) disabled: doxygen not found (Debian: doxygen)")
    return()
endif()
set(DIALOG_DOCS_OUTPUT ${CMAKE_BINARY_DIR}/docs)
configure_file(${PROJECT_SOURCE_DIR}/docs/Doxyfile.in ${CMAKE_BINARY_DIR}/Doxyfile @ONLY)
add_custom_target(docs
    COMMAND Doxygen::doxygen ${CMAKE_BINARY_DIR}/Doxyfile
    WORKING_DIRECTORY ${CMAKE_BINARY_DIR}
    COMMENT "API reference of the public headers in ${DIALOG_DOCS_OUTPUT}/html"
    VERBATIM)
