# switchyard_prepatch(<target> [OUTPUT <file>])
#
# After <target> (an executable or shared library) is linked, run
# `switchyard prepatch` on it: every static key site whose key the file
# defines gets its initial form in the file, so that the program writes
# no code for them at start-up (switchyard(1)). In place, or into OUTPUT
# (its directory is created), leaving the linked file as it was.
#
# The tool: the in-tree target switchyard_cli when there is one (in a
# cross build run through the build's emulator, CMAKE_CROSSCOMPILING_
# EMULATOR, which CMake puts before a target named as a command), else
# SWITCHYARD_TOOL if set (a path), else `switchyard` in the package's bin/
# (in a cross build through the emulator; without one, the build
# machine's on PATH) or on PATH. The tool prepatches a file of either machine it reads (x86-64,
# AArch64), whatever its own: a build machine's tool serves a cross build.
function(switchyard_prepatch target)
  cmake_parse_arguments(P "" "OUTPUT" "" ${ARGN})
  if(TARGET switchyard_cli AND CMAKE_CROSSCOMPILING AND
     NOT CMAKE_CROSSCOMPILING_EMULATOR AND NOT SWITCHYARD_TOOL)
    message(STATUS "switchyard_prepatch(${target}): a cross build without "
      "an emulator cannot run the tool it builds, and SWITCHYARD_TOOL is "
      "not set: ${target} is not prepatched")
    return()
  endif()
  if(TARGET switchyard_cli AND NOT (CMAKE_CROSSCOMPILING AND
     NOT CMAKE_CROSSCOMPILING_EMULATOR))
    set(tool switchyard_cli)
    add_dependencies(${target} switchyard_cli)
  elseif(SWITCHYARD_TOOL)
    set(tool ${SWITCHYARD_TOOL})
  elseif(CMAKE_CROSSCOMPILING)
    # the package's tool is built for the target machine: through the
    # build's emulator, else the build machine's tool (PATH), which reads
    # the target's files as well
    find_program(SWITCHYARD_TARGET_TOOL switchyard HINTS ${SWITCHYARD_BINDIR}
      NO_DEFAULT_PATH)
    if(SWITCHYARD_TARGET_TOOL AND CMAKE_CROSSCOMPILING_EMULATOR)
      set(tool ${CMAKE_CROSSCOMPILING_EMULATOR} ${SWITCHYARD_TARGET_TOOL})
    else()
      find_program(SWITCHYARD_TOOL switchyard NO_CMAKE_PATH
        NO_CMAKE_ENVIRONMENT_PATH NO_PACKAGE_ROOT_PATH)
      if(NOT SWITCHYARD_TOOL)
        message(FATAL_ERROR "switchyard_prepatch(${target}): a cross "
          "build without an emulator needs the build machine's switchyard "
          "tool on PATH, or SWITCHYARD_TOOL set to it")
      endif()
      set(tool ${SWITCHYARD_TOOL})
    endif()
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
