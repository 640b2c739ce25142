# The cross-model report on the example runs (llama at batch 4 twice and at 8, qwen at 4: the
# H100 prefill runs of examples/data/runs): ingested into DB, then run_golden.cmake on
# `kernlens report --db DB --format md` (the page names the database by its file name).
file(REMOVE ${DB} ${DB}-wal ${DB}-shm)
get_filename_component(db_dir ${DB} DIRECTORY)
file(MAKE_DIRECTORY ${db_dir})
set(runs)
foreach(run llama_prefill llama_prefill_b4 llama_prefill_b8 qwen_prefill)
  list(APPEND runs ${ROOT}/examples/data/runs/${run})
endforeach()
execute_process(COMMAND ${KERNLENS} db ingest --db ${DB} ${runs} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kernlens db ingest: exit code ${rc}\n${err}")
endif()
set(ARGS "report --db ${DB} --format md")
include(${CMAKE_CURRENT_LIST_DIR}/run_golden.cmake)
