# ccbench_embed_json(VAR FILE TEMPLATE OUTPUT): compiles a JSON data file into the binaries.
# Reads FILE into VAR and configures TEMPLATE (which holds R"ccbench_json(@VAR@)ccbench_json")
# into OUTPUT; editing FILE re-runs the configure step.
function(ccbench_embed_json var file template output)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  file(READ ${file} _text)
  string(FIND "${_text}" ")ccbench_json\"" _delimiter_at)
  if(NOT _delimiter_at EQUAL -1)
    message(FATAL_ERROR "${file} contains the raw-string delimiter )ccbench_json\"")
  endif()
  set(${var} "${_text}")
  configure_file(${template} ${output} @ONLY)
endfunction()
