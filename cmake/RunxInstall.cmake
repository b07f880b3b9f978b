# `cmake --install BUILD --prefix P`: runx, its technique plugins and what it reads at run time,
# laid out so that the installed binary finds them relative to itself (base/install_dirs.h):
#   P/bin/runx, P/bin/runx-worker                                           (runx hands the LibTorch commands to the worker)
#   P/lib/runx/plugins/lib<technique>.so + <technique>.schema.json
#   P/share/runx/tools/compile_step.py (+ gpt_model.py, which it imports)  what `runx compile` runs
#   P/share/runx/tools/aoti_package.py                                      what model: aoti's messages name
#   P/share/runx/experiments/*.yaml                                         the ready-to-run examples
#   P/share/bash-completion/completions/runx, P/share/man/man1/runx.1      from `runx completion bash`, `runx man`
# The Vega files of `runx report` come from Debian's libjs-vega (/usr/share/javascript), or from
# P/share/javascript.
include(GNUInstallDirs)
set(RUNX_INSTALL_PLUGIN_DIR ${CMAKE_INSTALL_LIBDIR}/runx/plugins)
set(RUNX_INSTALL_DATA_DIR ${CMAKE_INSTALL_DATADIR}/runx)
# The same folders seen from the binary's: compiled into runx (the prefix may change at install time,
# the layout under it does not).
file(RELATIVE_PATH RUNX_PLUGIN_DIR_FROM_BIN ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR}/runx/plugins)
file(RELATIVE_PATH RUNX_DATA_DIR_FROM_BIN ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_DATADIR}/runx)
file(RELATIVE_PATH RUNX_JAVASCRIPT_DIR_FROM_BIN ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_DATADIR}/javascript)

# runx_install_rules(): called once every plugin is defined (the test plugins are never installed).
function(runx_install_rules)
  get_property(plugins GLOBAL PROPERTY RUNX_PLUGINS)
  # A LibTorch outside the system's folders (pip's) stays found from the installed files.
  set_target_properties(runx runx-worker ${plugins} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS runx runx-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(TARGETS ${plugins} LIBRARY DESTINATION ${RUNX_INSTALL_PLUGIN_DIR})
  foreach(p IN LISTS plugins)
    get_target_property(schema ${p} RUNX_SCHEMA)
    if(schema)
      install(FILES ${schema} DESTINATION ${RUNX_INSTALL_PLUGIN_DIR} RENAME ${p}.schema.json)
    endif()
  endforeach()
  # tools/: the Python tools runx runs (runx compile: version.h DataDir()/tools) or names to users.
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/compile_step.py ${PROJECT_SOURCE_DIR}/tools/aoti_package.py
          DESTINATION ${RUNX_INSTALL_DATA_DIR}/tools)
  install(FILES ${PROJECT_SOURCE_DIR}/tools/gpt_model.py DESTINATION ${RUNX_INSTALL_DATA_DIR}/tools)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/experiments/ DESTINATION ${RUNX_INSTALL_DATA_DIR}/experiments
          FILES_MATCHING PATTERN "*.yaml")
  # Made by the runx just built, from its command table (cli/command_table.cc): the install fails
  # where runx cannot make them.
  set(dest "\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}")
  install(CODE "
    function(runx_generate file)
      execute_process(COMMAND \"$<TARGET_FILE:runx>\" \${ARGN} OUTPUT_VARIABLE text ERROR_VARIABLE err
                      RESULT_VARIABLE rc)
      if(rc EQUAL 0 AND text)
        message(STATUS \"Installing: ${dest}/\${file}\")
        file(WRITE \"${dest}/\${file}\" \"\${text}\")
      else()
        message(FATAL_ERROR \"runx \${ARGN} failed (\${rc}): \${err}; cannot install ${dest}/\${file}\")
      endif()
    endfunction()
    runx_generate(bash-completion/completions/runx completion bash)
    runx_generate(man/man1/runx.1 man)")
endfunction()
