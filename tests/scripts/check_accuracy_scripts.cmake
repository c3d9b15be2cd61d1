# CTest script (cmake -P): the accuracy study's Python scripts reproduce the committed study's
# outputs byte for byte from its committed CSV, and reject a malformed CSV.
#   -DPY=python3 -DSRC=<source dir> -DOUT=<scratch dir>
# (accuracy_plot.py needs matplotlib and is not run here.)
set(study "${SRC}/bench/results/2026-11-22-h100-accuracy-ladder-v2")
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")

function(run_ok)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${ARGN}: exit ${rc}\n${err}")
  endif()
endfunction()

function(same produced committed)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${produced}" "${committed}" RESULT_VARIABLE d)
  if(NOT d EQUAL 0)
    message(FATAL_ERROR "${produced} differs from the committed ${committed}")
  endif()
endfunction()

run_ok(${PY} "${SRC}/bench/accuracy_summary.py" "${study}/accuracy_runs.csv" --summary "${OUT}/accuracy_summary.csv")
same("${OUT}/accuracy_summary.csv" "${study}/accuracy_summary.csv")
run_ok(${PY} "${SRC}/bench/accuracy_depth.py" "${study}/accuracy_runs.csv" --out "${OUT}/depth.md")
same("${OUT}/depth.md" "${study}/depth.md")

# A CSV without the expected columns: exit status 1 and a message, not a traceback or a table.
file(WRITE "${OUT}/bad.csv" "integrand,foo\nf2,1\n")
execute_process(COMMAND ${PY} "${SRC}/bench/accuracy_summary.py" "${OUT}/bad.csv" RESULT_VARIABLE rc
                OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "accuracy_summary.py on a malformed CSV: exit ${rc} (expected 1)\n${err}")
endif()
if(err MATCHES "Traceback")
  message(FATAL_ERROR "accuracy_summary.py on a malformed CSV printed a traceback:\n${err}")
endif()
message(STATUS "accuracy scripts: summary and depth reproduce the committed study; malformed CSV rejected")
