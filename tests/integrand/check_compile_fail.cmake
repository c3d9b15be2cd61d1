# Compiles SOURCE with COMPILER and FLAGS (a ;-list) and passes only if the compilation fails, its
# output contains EXPECT, and it has at most MAX_ERRORS lines with "error" (the rule broken is named
# first and alone, not buried in errors from inside the library).
execute_process(COMMAND ${COMPILER} ${FLAGS} ${SOURCE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it breaks the integrand contract")
endif()
string(FIND "${all}" "${EXPECT}" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "the compiler's output does not name the rule \"${EXPECT}\":\n${all}")
endif()
string(REGEX MATCHALL "[^\n]*error[^\n]*" error_lines "${all}")
list(LENGTH error_lines n)
if(n GREATER ${MAX_ERRORS})
  message(FATAL_ERROR "${n} error lines (at most ${MAX_ERRORS} expected):\n${all}")
endif()
message(STATUS "failed as expected with ${n} error line(s)")
