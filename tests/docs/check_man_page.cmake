# CTest script (cmake -P): the generated manual page names the version, has the static sections
# of docs/mcubes.h2m and one subsection per subcommand with its options.
#   -DMAN=<mcubes.1> -DVERSION=<project version>
if(NOT EXISTS "${MAN}")
  message(FATAL_ERROR "no manual page at ${MAN} (the mcubes_man_page target builds it)")
endif()
file(READ "${MAN}" man)
foreach(want ".TH MCUBES \"1\"" "${VERSION}" ".SH DESCRIPTION" ".SH EXAMPLES" ".SH \"EXIT STATUS\"" ".SH COMMANDS"
             ".SS integrate" ".SS list" ".SS pi" ".SS plot" ".SS sample" ".SS scan" "\\-\\-rel\\-tol" "\\-\\-stratification" "\\-\\-param")
  string(FIND "${man}" "${want}" at)
  if(at LESS 0)
    message(FATAL_ERROR "the manual page lacks '${want}'")
  endif()
endforeach()
message(STATUS "manual page ${MAN}: complete")
