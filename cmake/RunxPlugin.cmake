# runx_add_plugin(<name> SOURCES <files...>)
# Builds plugins/<name> as a MODULE named lib<name>.so into build/plugins/, with hidden visibility,
# against the plugin API only (never runner internals), and copies its schema fragment beside it.
function(runx_add_plugin name)
  cmake_parse_arguments(ARG "" "SCHEMA;OUTPUT_DIR" "SOURCES" ${ARGN})
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${RUNX_PLUGIN_OUTPUT_DIR})
  endif()
  add_library(${name} MODULE ${ARG_SOURCES})
  # fmt header-only: pip LibTorch links no libfmt, so a plugin must not need one at run time.
  target_link_libraries(${name} PRIVATE runx::plugin_api runx_fmt)
  runx_use_pch(${name})
  set_target_properties(${name} PROPERTIES
    PREFIX "lib" OUTPUT_NAME ${name}
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIR}
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  if(ARG_SCHEMA)
    add_custom_command(TARGET ${name} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E copy_if_different ${ARG_SCHEMA} ${ARG_OUTPUT_DIR}/${name}.schema.json)
  endif()
  set_target_properties(${name} PROPERTIES RUNX_SCHEMA "${ARG_SCHEMA}")  # installed beside it (RunxInstall)
  set_property(GLOBAL APPEND PROPERTY RUNX_PLUGINS ${name})
endfunction()
