# CTest script (cmake -P): the version has one value everywhere. `mcubes --version` prints it, the
# JSON report of `mcubes integrate` carries it, and the CMake package version file (the one that
# `cmake --install` installs) declares it; all equal the project version, which CMakeLists.txt
# reads from include/mcubes/config.hpp; so does CITATION.cff's `version:` (the one copy written by
# hand, checked here).
#   -DMCUBES=<mcubes program> -DEXPECTED=<PROJECT_VERSION> -DVERSION_FILE=<mcubesConfigVersion.cmake>
#   -DOUT=<scratch dir> -DCITATION=<CITATION.cff>
foreach(v MCUBES EXPECTED VERSION_FILE OUT CITATION)
  if(NOT DEFINED ${v} OR "${${v}}" STREQUAL "")
    message(FATAL_ERROR "check_version.cmake: -D${v}=... is required")
  endif()
endforeach()

execute_process(COMMAND "${MCUBES}" --version RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(STRIP "${out}" out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mcubes --version: exit ${rc}\n${err}")
endif()
if(NOT out STREQUAL EXPECTED)
  message(FATAL_ERROR "mcubes --version printed '${out}', the project version is '${EXPECTED}'")
endif()

file(STRINGS "${CITATION}" cited REGEX "^version: ")
if(NOT cited STREQUAL "version: ${EXPECTED}")
  message(FATAL_ERROR "${CITATION} says '${cited}', the project version is '${EXPECTED}'")
endif()

# The package version file sets PACKAGE_VERSION (and, asked for the same version, exact match).
set(PACKAGE_FIND_VERSION "${EXPECTED}")
set(PACKAGE_FIND_VERSION_MAJOR "")
string(REGEX MATCH "^[0-9]+" PACKAGE_FIND_VERSION_MAJOR "${EXPECTED}")
string(REGEX REPLACE "^[0-9]+\\.([0-9]+).*" "\\1" PACKAGE_FIND_VERSION_MINOR "${EXPECTED}")
set(PACKAGE_FIND_VERSION_RANGE FALSE)
include("${VERSION_FILE}")
if(NOT PACKAGE_VERSION STREQUAL EXPECTED)
  message(FATAL_ERROR "${VERSION_FILE} declares version '${PACKAGE_VERSION}', the project version is '${EXPECTED}'")
endif()
if(NOT PACKAGE_VERSION_EXACT OR PACKAGE_VERSION_UNSUITABLE)
  message(FATAL_ERROR "${VERSION_FILE} does not accept find_package(mcubes ${EXPECTED} EXACT)")
endif()

# The JSON report of a small run.
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
execute_process(COMMAND "${MCUBES}" integrate f3 --dim 2 --rel-tol 1e-2 --calls-per-iter 10000 --threads 1 --quiet
                        --json "${OUT}/run.json"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT EXISTS "${OUT}/run.json")
  message(FATAL_ERROR "mcubes integrate --json wrote no file (exit ${rc})\n${out}\n${err}")
endif()
file(READ "${OUT}/run.json" json)
string(JSON reported ERROR_VARIABLE json_err GET "${json}" version)
if(json_err OR NOT reported STREQUAL EXPECTED)
  message(FATAL_ERROR "the JSON report carries version '${reported}' ${json_err}, the project version is '${EXPECTED}'")
endif()
message(STATUS "version ${EXPECTED}: mcubes --version, the JSON report and ${VERSION_FILE} agree")
