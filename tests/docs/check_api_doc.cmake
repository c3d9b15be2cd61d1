# CTest script (cmake -P): builds the API reference with Doxygen and checks it: no warning (the doc
# comments are well formed), and the pages of the main entry points exist.
#   -DDOXYGEN=<doxygen> -DDOXYFILE=<build/Doxyfile> -DDOC_DIR=<its OUTPUT_DIRECTORY>
file(REMOVE_RECURSE "${DOC_DIR}/html")
file(REMOVE "${DOC_DIR}/warnings.txt")
file(MAKE_DIRECTORY "${DOC_DIR}")
execute_process(COMMAND "${DOXYGEN}" "${DOXYFILE}" WORKING_DIRECTORY "${DOC_DIR}" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "doxygen: exit ${rc}\n${err}")
endif()
file(READ "${DOC_DIR}/warnings.txt" warnings)
if(NOT warnings STREQUAL "")
  message(FATAL_ERROR "Doxygen warned (fix the doc comments):\n${warnings}")
endif()
foreach(page index.html structmcubes_1_1result.html structmcubes_1_1vegas__options.html classmcubes_1_1region.html
             result__io_8hpp.html vegas__batch_8hpp.html)
  if(NOT EXISTS "${DOC_DIR}/html/${page}")
    message(FATAL_ERROR "the API reference lacks ${page}")
  endif()
endforeach()
message(STATUS "API reference in ${DOC_DIR}/html: complete, no warning")
