add_library(ccbench_warnings INTERFACE)
add_library(ccbench::warnings ALIAS ccbench_warnings)
target_compile_options(ccbench_warnings INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wundef -Wnon-virtual-dtor>
  $<$<AND:$<BOOL:${CCBENCH_WERROR}>,$<CXX_COMPILER_ID:GNU,Clang>>:-Werror>)
