# Runner modules and their boundaries.
#
# runx_add_module(<name> SOURCES <files...> [DEPS <modules...>] [LINK <targets...>] [TORCH_FREE])
#   Builds runner/src/<name>/ as the static library runx_<name> (alias runx::<name>), the same way
#   for every module, and records which runx modules it may include (DEPS) and whether it must
#   stay free of LibTorch (TORCH_FREE).
# runx_module_rules(<name> [DEPS <modules...>] [TORCH_FREE])
#   Records the same rules for a module built into another target (trial, worker, models, data
#   and plugins are built into runx_core, sweep into runx_sweep, cli into runx_cli).
# runx_torch_free_headers(<header...>)
#   Headers of LibTorch modules that torch-free modules may include (they include no LibTorch).
#
# The rules are written to <build>/module-rules.txt; the ctest Layering.ModuleBoundaries
# (scripts/check-layers.sh) fails when a file includes a module it did not declare, or when a
# torch-free module reaches a LibTorch header, directly or through the project's own headers.

function(runx_module_rules name)
  cmake_parse_arguments(ARG "TORCH_FREE" "" "DEPS" ${ARGN})
  string(REPLACE ";" " " _deps "${ARG_DEPS}")
  set_property(GLOBAL APPEND PROPERTY RUNX_MODULE_RULES "module ${name} ${ARG_TORCH_FREE} ${_deps}")
endfunction()

function(runx_torch_free_headers)
  foreach(h ${ARGN})
    set_property(GLOBAL APPEND PROPERTY RUNX_MODULE_RULES "header ${h}")
  endforeach()
endfunction()

function(runx_add_module name)
  cmake_parse_arguments(ARG "TORCH_FREE" "" "SOURCES;DEPS;LINK;PRIVATE_LINK" ${ARGN})
  add_library(runx_${name} STATIC ${ARG_SOURCES})
  add_library(runx::${name} ALIAS runx_${name})
  target_include_directories(runx_${name} PUBLIC ${PROJECT_SOURCE_DIR}/runner/src)
  set(_deps "")
  foreach(d ${ARG_DEPS})
    if(TARGET runx_${d})
      list(APPEND _deps runx::${d})
    endif()
  endforeach()
  target_link_libraries(runx_${name} PUBLIC ${_deps} ${ARG_LINK} PRIVATE ${ARG_PRIVATE_LINK})
  if(ARG_TORCH_FREE)
    runx_module_rules(${name} TORCH_FREE DEPS ${ARG_DEPS})
  else()
    runx_module_rules(${name} DEPS ${ARG_DEPS})
  endif()
endfunction()

# Writes the recorded rules; call once, after every module is declared.
function(runx_write_module_rules)
  get_property(_rules GLOBAL PROPERTY RUNX_MODULE_RULES)
  string(REPLACE ";" "\n" _text "${_rules}")
  file(WRITE ${CMAKE_BINARY_DIR}/module-rules.txt "${_text}\n")
endfunction()
