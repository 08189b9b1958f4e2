# The documents (issue 41). docs.sections: every section of the README as it was before docs/ still has a page,
# every page is in the index, every relative link resolves, the layout names every top-level folder.
add_test(NAME docs.sections COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/docs/sections_check.py
                                    --source ${PROJECT_SOURCE_DIR})
set_tests_properties(docs.sections PROPERTIES LABELS unit TIMEOUT 60)
# docs.examples: every `$` example of README.md and docs/*.md run by byexample against this build in a scratch
# folder, its output compared with the page's; docs.examples_catch: a copy of README.md with one word of its first
# example's output changed must fail. Label docs, not unit: they need the benches, mpirun and ccbench-report, which
# test.sh's minimal and sanitizer stages do not build (they run -L unit); the default stage runs every label.
# byexample comes from PyPI (scripts/install-deps.sh puts it in a venv); without it: skipped, which fails CI.
if(CCBENCH_MPI_FOUND)
  foreach(_case examples examples_catch)
    set(_catch "")
    if(_case STREQUAL examples_catch)
      set(_catch --catch)
    endif()
    add_test(NAME docs.${_case}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/docs/doc_examples.py
                     --source ${PROJECT_SOURCE_DIR} --build ${PROJECT_BINARY_DIR} ${_catch})
    set_tests_properties(docs.${_case} PROPERTIES LABELS docs TIMEOUT 600 SKIP_RETURN_CODE 77 RESOURCE_LOCK cpu)
  endforeach()
endif()
# docs.examples_cluster: the blocks after a `<!-- cluster: hosts=N rate=MBIT [slow=nodeK:MBIT] -->` line (the fleet
# guide's accept-fleet.sh), each on a namespace cluster of the cluster tier made for it and torn down after it
# (tests/docs/doc_cluster.py); docs.examples lists them as run here. docs.examples_cluster_catch: the first such
# block with its verdict line's host changed must fail. Label cluster, as the cluster tier's tests: root, RUN_SERIAL
# (the links are shaped to be measured), and the lock those run by hand take (flock /tmp/nscluster.lock); 77
# (skipped) where network namespaces cannot be made. One block of 4 hosts at 1 MiB a pair: 24 s here.
if(CCBENCH_MPI_FOUND)
  find_program(CCBENCH_FLOCK flock)
  if(CCBENCH_FLOCK)
    foreach(_case examples_cluster examples_cluster_catch)
      set(_catch "")
      if(_case STREQUAL examples_cluster_catch)
        set(_catch --catch)
      endif()
      add_test(NAME docs.${_case}
               COMMAND ${CCBENCH_FLOCK} /tmp/nscluster.lock ${Python3_EXECUTABLE}
                       ${CMAKE_CURRENT_SOURCE_DIR}/docs/doc_examples.py --source ${PROJECT_SOURCE_DIR}
                       --build ${PROJECT_BINARY_DIR} --cluster ${_catch})
      set_tests_properties(docs.${_case} PROPERTIES LABELS cluster SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 300)
    endforeach()
  endif()
endif()
