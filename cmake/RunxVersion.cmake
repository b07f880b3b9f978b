# Run at BUILD time (cmake -P): writes version.cc with the current git sha and whether the tree had
# uncommitted changes, touching it only when they changed, so the binary always reports the
# commit it was built from. (The build identity that decides reuse is a hash of the binaries:
# worker/identity.h.)
set(sha "unknown")
set(dirty "-1")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE out OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0)
    set(sha ${out})
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no WORKING_DIRECTORY ${SRC}
                    OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(dirty)
      set(dirty 1)
    else()
      set(dirty 0)
    endif()
  endif()
endif()
set(RUNX_GIT_SHA ${sha})
set(RUNX_GIT_DIRTY ${dirty})
set(PROJECT_VERSION ${VERSION})
configure_file(${IN} ${OUT} @ONLY)
