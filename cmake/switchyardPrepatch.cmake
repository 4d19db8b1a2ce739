# switchyard_prepatch(<target> [OUTPUT <file>])
#
# After <target> (an executable or shared library) is linked, run
# `switchyard prepatch` on it: every static key site whose key the file
# defines gets its initial form in the file, so that the program writes
# no code for them at start-up (switchyard(1)). In place, or into OUTPUT
# (its directory is created), leaving the linked file as it was.
#
# The tool: the in-tree target switchyard_cli when there is one, else
# SWITCHYARD_TOOL if set, else `switchyard` in the package's bin/ or on
# PATH.
function(switchyard_prepatch target)
  cmake_parse_arguments(P "" "OUTPUT" "" ${ARGN})
  if(TARGET switchyard_cli)
    set(tool $<TARGET_FILE:switchyard_cli>)
    add_dependencies(${target} switchyard_cli)
  elseif(SWITCHYARD_TOOL)
    set(tool ${SWITCHYARD_TOOL})
  else()
    find_program(SWITCHYARD_TOOL switchyard HINTS ${SWITCHYARD_BINDIR})
    if(NOT SWITCHYARD_TOOL)
      message(FATAL_ERROR "switchyard_prepatch(${target}): the switchyard "
        "tool was not found (set SWITCHYARD_TOOL)")
    endif()
    set(tool ${SWITCHYARD_TOOL})
  endif()
  if(P_OUTPUT)
    get_filename_component(dir ${P_OUTPUT} DIRECTORY)
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
      COMMAND ${tool} prepatch $<TARGET_FILE:${target}> -o ${P_OUTPUT}
      COMMENT "switchyard prepatch ${target} -> ${P_OUTPUT}" VERBATIM)
  else()
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${tool} prepatch $<TARGET_FILE:${target}>
      COMMENT "switchyard prepatch ${target}" VERBATIM)
  endif()
endfunction()
