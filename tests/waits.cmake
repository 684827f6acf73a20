# Tests wait through tests/shared/waits.h only: for an effect (waitUntil, pollUntil, QTRY_*), for
# proof that something does not happen (expectNothingFor), or for time whose passing is the step
# (letTimePass, pauseThread, each saying what the time is for). A bare QTest::qWait, msleep or
# sleep_for in a test is a fixed wait that a loaded machine makes too short. Run as
# cmake -DSOURCE_DIR=… -P.
cmake_minimum_required(VERSION 3.21)
file(GLOB_RECURSE sources ${SOURCE_DIR}/tests/*.cpp ${SOURCE_DIR}/tests/*.h)
set(offences)
foreach(source ${sources})
    if(source MATCHES "/tests/shared/waits\\.h$")
        continue()
    endif()
    file(STRINGS ${source} lines REGEX "QTest::qWait\\(|QThread::u?m?sleep\\(|sleep_for\\(|[^a-z_]u?sleep\\(")
    foreach(line ${lines})
        file(RELATIVE_PATH where ${SOURCE_DIR} ${source})
        string(STRIP "${line}" line)
        list(APPEND offences "${where}: ${line}")
    endforeach()
endforeach()
if(offences)
    list(JOIN offences "\n  " text)
    message(FATAL_ERROR "fixed waits outside tests/shared/waits.h:\n  ${text}")
endif()
message(STATUS "tests wait through tests/shared/waits.h only")
