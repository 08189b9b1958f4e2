# ccbench-drain (scripts/drain.sh) without Slurm (unit tier): a fake scontrol on PATH that records its argv and
# answers `scontrol show node` from a state file; the verdicts are ccbench-report's own over the runs of
# tests/data/report/runs. Each case takes a few seconds. The cycle on a real Slurm cluster is slurm.drain
# (tests/slurm.cmake). Included from tests/CMakeLists.txt (Python3 provided).
set(_drain_driver ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/drain/drain_test.py
    --report $<TARGET_FILE:ccbench-report>)
foreach(_case dry-run apply resume admin no-verdict hostile accept this-node bad-link)
  string(REPLACE "-" "_" _name ${_case})
  add_test(NAME drain.${_name} COMMAND ${_drain_driver} ${_case})
  set_tests_properties(drain.${_name} PROPERTIES LABELS unit TIMEOUT 120)
endforeach()
# ... and the installed one (cmake --install of this build into a scratch prefix), which finds its own ccbench-report:
# the dry run and --apply cases (install label: it needs every installed file built).
foreach(_case dry-run apply)
  string(REPLACE "-" "_" _name ${_case})
  add_test(NAME drain.installed_${_name} COMMAND ${_drain_driver} --installed ${PROJECT_BINARY_DIR} ${_case})
  set_tests_properties(drain.installed_${_name} PROPERTIES LABELS install TIMEOUT 300)
endforeach()
