# FindNCCL: imported targets NCCL::nccl (the library) and NCCL::headers (nccl.h only).
# Searched in NCCL_HOME / $ENV{NCCL_HOME}, the CUDA toolkit directory, then system paths.
# Sets NCCL_FOUND, NCCL_VERSION, NCCL_INCLUDE_DIR, NCCL_LIBRARY.
set(_nccl_hints ${NCCL_HOME} $ENV{NCCL_HOME})
if(CUDAToolkit_LIBRARY_ROOT)
  list(APPEND _nccl_hints ${CUDAToolkit_LIBRARY_ROOT})
endif()
if(CUDAToolkit_INCLUDE_DIRS)
  foreach(_dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
    get_filename_component(_parent "${_dir}" DIRECTORY)
    list(APPEND _nccl_hints ${_parent})
  endforeach()
endif()

find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${_nccl_hints} PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES nccl HINTS ${_nccl_hints} PATH_SUFFIXES lib64 lib lib/x86_64-linux-gnu)

if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_defs REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*#define NCCL_${_part} +([0-9]+).*" "\\1" _nccl_${_part} "${_nccl_defs}")
  endforeach()
  set(NCCL_VERSION "${_nccl_MAJOR}.${_nccl_MINOR}.${_nccl_PATCH}")
endif()

include(FindPackageHandleStandardArgs)
# nccl.h is what the build needs (the library is loaded at run time), so NCCL_LIBRARY is optional: a
# wheel's include/ alone builds the NCCL backend (the CUDA 12 build of CI does).
find_package_handle_standard_args(NCCL REQUIRED_VARS NCCL_INCLUDE_DIR VERSION_VAR NCCL_VERSION)

# NCCL::headers: nccl.h alone. The backend loads libnccl.so.2 at run time (nccl_api.hpp), so that a
# build with NCCL starts where there is none and takes whichever NCCL the loader finds.
if(NCCL_FOUND AND NOT TARGET NCCL::headers)
  add_library(NCCL::headers INTERFACE IMPORTED)
  set_target_properties(NCCL::headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
if(NCCL_FOUND AND NCCL_LIBRARY AND NOT TARGET NCCL::nccl)
  add_library(NCCL::nccl UNKNOWN IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
set_package_properties(NCCL PROPERTIES URL "https://developer.nvidia.com/nccl" DESCRIPTION "NVIDIA Collective Communications Library")
