# Run at every build (cmake -P): writes OUT from IN with the source tree's git revision, only when it
# changed, so that --version and the results name the commit that was built, not the one configured.
# -DSOURCE_DIR= -DIN= -DOUT= -DPROJECT_VERSION= [-DGIT_EXECUTABLE=]
set(CCBENCH_GIT_REVISION "unknown")
if(DEFINED ENV{CCBENCH_GIT_REVISION})  # a copy of the source without .git (scripts/build-cuda12.sh)
  set(CCBENCH_GIT_REVISION "$ENV{CCBENCH_GIT_REVISION}")
elseif(GIT_EXECUTABLE)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --abbrev=12
                  WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE _rev
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _rev)
    set(CCBENCH_GIT_REVISION "${_rev}")
  endif()
endif()
configure_file(${IN} ${OUT} @ONLY)
