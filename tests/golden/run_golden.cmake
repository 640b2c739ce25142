# Runs one golden case: kernlens ARGS in ROOT; stdout (and stderr, when any) must equal
# EXPECTED byte for byte, and the exit code must be EXPECT_RC. With -DUPDATE=1 it rewrites
# EXPECTED instead.
separate_arguments(argv UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${KERNLENS} ${argv}
  WORKING_DIRECTORY ${ROOT}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(actual "${out}")
if(NOT err STREQUAL "")
  string(APPEND actual "--- stderr ---\n${err}")
endif()
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "kernlens ${ARGS}: exit code ${rc}, expected ${EXPECT_RC}\n${err}")
endif()
if(UPDATE)
  file(WRITE ${EXPECTED} "${actual}")
  message(STATUS "updated ${EXPECTED}")
  return()
endif()
if(NOT EXISTS ${EXPECTED})
  message(FATAL_ERROR "missing ${EXPECTED}: create it with `cmake --build BUILD --target golden-update`")
endif()
file(READ ${EXPECTED} expected)
if(NOT actual STREQUAL expected)
  file(WRITE ${ACTUAL} "${actual}")
  message(FATAL_ERROR "kernlens ${ARGS}: output differs from the golden file\n"
                      "  diff -u ${EXPECTED} ${ACTUAL}")
endif()
