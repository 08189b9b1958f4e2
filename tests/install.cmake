# install tier: cmake --install moved away from the source and build trees, the .deb in a fresh
# Debian 12 root filesystem, and the bundle in a bare one (tests/install/install_test.py). Root, unshare and (deb) mmdebstrap with the
# Debian archive; exit 77 = skipped, saying what is missing. Measured here: relocated 5 s, deb 33 s,
# bundle 34 s, quickstart 187-199 s (a clone of HEAD in a fresh Debian 12: apt, build, run), container 25-28 s,
# nccl-swap 2 s (after one download of the nvidia-nccl-cu13 wheel); gpu-smoke: the bundle's ccbench-gpu-smoke in a
# bare Debian 12 with a pip wheel's NCCL, its GPU steps skipped; workflows: ccbench-accept-node and ccbench-regression
# from a moved install and from the bundle, their verdicts checked (issue 35).
if(NOT CCBENCH_MPI_FOUND OR NOT TARGET ccbench-report)
  return()
endif()
foreach(_case relocated deb bundle quickstart container nccl-swap gpu-smoke workflows)
  add_test(NAME install.${_case}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/install/install_test.py
                   --build ${PROJECT_BINARY_DIR} --source ${PROJECT_SOURCE_DIR} ${_case})
  set_tests_properties(install.${_case} PROPERTIES LABELS install TIMEOUT 1800 RESOURCE_LOCK cpu SKIP_RETURN_CODE 77)
endforeach()
