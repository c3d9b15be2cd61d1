# Every .cuh header is included by mcubes/cuda.cuh (so that tests/headers/user_integrate.cu, which
# includes it and is compiled with -c, test Headers.nvcc:user_integrate, puts every header through
# the host compiler's warnings; each header alone is compiled to PTX only). Arguments: NVCC (the
# command, a list), TU (a unit that includes mcubes/cuda.cuh), INCLUDE (the include root), HEADERS
# (the .cuh headers, relative to INCLUDE).
execute_process(COMMAND ${NVCC} -M "${TU}" RESULT_VARIABLE rc OUTPUT_VARIABLE deps ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc -M failed (${rc}): ${err}")
endif()
set(missing "")
foreach(h IN LISTS HEADERS)
  string(FIND "${deps}" "${INCLUDE}/${h}" at)
  if(at EQUAL -1 AND NOT h STREQUAL "mcubes/cuda.cuh")
    list(APPEND missing "${h}")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "not included by mcubes/cuda.cuh (add them there, or compile them with -c in "
                      "tests/headers/CMakeLists.txt): ${missing}")
endif()
message(STATUS "every .cuh is included by mcubes/cuda.cuh")
