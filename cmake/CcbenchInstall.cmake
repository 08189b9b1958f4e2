# What `cmake --install` puts where (docs/install.md), relocatable: nothing installed names the prefix.
#   bin/                  the benches, ccbench-report, ccbench-topo, copy_bench, and the workflows'
#                         entry points ccbench-accept-node, ccbench-accept-fleet, ccbench-regression,
#                         ccbench-gpu-smoke, ccbench-drain (thin wrappers)
#   libexec/ccbench/      the workflow scripts themselves: they source env.sh and lib/ beside them, so
#                         they stay together there and bin/ gets one prefixed name each, not
#                         "regression.sh" on every user's PATH
#   share/ccbench/        hardware.json and its schema, the result schema, profiles/, suites/ (not the
#                         sbatch files of scripts/slurm: they find a checkout, not an install, yet)
#   share/doc/ccbench/    README.md, CHANGELOG.md, profiles.md, docs/ (the guides and the reference)
# The binaries find share/ccbench as ../share/ccbench from their own folder (ccbench/data_dir.hpp);
# the scripts find it as ../../share/ccbench from theirs (scripts/env.sh).
include(GNUInstallDirs)

set(CCBENCH_INSTALL_DATADIR "${CMAKE_INSTALL_DATADIR}/ccbench")
set(CCBENCH_INSTALL_LIBEXECDIR "${CMAKE_INSTALL_LIBEXECDIR}/ccbench")
set(CCBENCH_INSTALL_DOCDIR "${CMAKE_INSTALL_DATADIR}/doc/ccbench")

set(_ccbench_programs ccbench-report ccbench-topo copy_bench ${CCBENCH_BENCH_TARGETS})
foreach(_program IN LISTS _ccbench_programs)
  if(TARGET ${_program})
    install(TARGETS ${_program} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ccbench)
  endif()
endforeach()

# Workflow scripts and what they source. The scripts that build from a source tree (quickstart,
# test, lint, fuzz, install-deps, compare-builds, check-benches, fidelity) are not installed.
set(_ccbench_workflows accept-node accept-fleet regression gpu-smoke drain)
foreach(_wf IN LISTS _ccbench_workflows)
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/${_wf}.sh DESTINATION ${CCBENCH_INSTALL_LIBEXECDIR}
          COMPONENT ccbench)
  set(_wrapper "${PROJECT_BINARY_DIR}/wrappers/ccbench-${_wf}")
  file(WRITE "${_wrapper}"
       "#!/bin/bash\n# ccbench-${_wf}: runs ${_wf}.sh of this install (libexec/ccbench), wherever it was moved.\n"
       "exec \"$(dirname \"$(readlink -f \"$0\")\")/../${CCBENCH_INSTALL_LIBEXECDIR}/${_wf}.sh\" \"$@\"\n")
  install(PROGRAMS "${_wrapper}" DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ccbench)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/scripts/env.sh DESTINATION ${CCBENCH_INSTALL_LIBEXECDIR} COMPONENT ccbench)
install(FILES ${PROJECT_SOURCE_DIR}/scripts/lib/workflow.sh DESTINATION ${CCBENCH_INSTALL_LIBEXECDIR}/lib
        COMPONENT ccbench)

install(FILES ${PROJECT_SOURCE_DIR}/topo/specs/hardware.json ${PROJECT_SOURCE_DIR}/topo/specs/hardware.schema.json
              ${PROJECT_SOURCE_DIR}/report/schema/ccbench.result.schema.json
        DESTINATION ${CCBENCH_INSTALL_DATADIR} COMPONENT ccbench)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/profiles/ DESTINATION ${CCBENCH_INSTALL_DATADIR}/profiles COMPONENT ccbench
        FILES_MATCHING PATTERN "*.json")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scripts/suites/ DESTINATION ${CCBENCH_INSTALL_DATADIR}/suites
        COMPONENT ccbench FILES_MATCHING PATTERN "*.suite")
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md DESTINATION ${CCBENCH_INSTALL_DOCDIR}
        COMPONENT ccbench)
install(FILES ${PROJECT_SOURCE_DIR}/profiles/README.md DESTINATION ${CCBENCH_INSTALL_DOCDIR} RENAME profiles.md
        COMPONENT ccbench)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CCBENCH_INSTALL_DOCDIR}/docs COMPONENT ccbench
        FILES_MATCHING PATTERN "*.md")

# The Debian package (cpack -G DEB in the build: ccbench_<version>_amd64.deb), one package for all of
# it: NCCL is loaded at run time and the CUDA runtime is linked statically, so nothing in it needs an
# NVIDIA library to install or to start, and a GPU-less node runs the host-memory and RDMA benches
# from the same package that a GPU node runs NCCL from. NCCL is Recommends (libnccl2, NVIDIA's
# repository; a pip wheel's NCCL is found too). Depends: the shared libraries as dpkg-shlibdeps reads
# them off the binaries, mpirun, and python3 (the workflows read profiles and results with it).
set(CPACK_PACKAGE_NAME ccbench)
set(CPACK_PACKAGE_VENDOR "ccbench")
set(CPACK_PACKAGE_CONTACT "ccbench maintainers <ccbench@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL OFF)
set(CPACK_COMPONENTS_ALL ccbench)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "openmpi-bin, python3")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libnccl2")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "all-reduce, all-gather, reduce-scatter, broadcast, reduce, all-to-all and send/recv on NCCL (GPUs)\nor MPI (host memory), RDMA writes on libibverbs, with bus bandwidth set against the hardware's\nspec; ccbench-report turns the JSON results into tables and regression, acceptance and fleet\nverdicts. NCCL is loaded at run time (libnccl2, or a pip wheel's), so the package installs and\nruns without it.")
include(CPack)
