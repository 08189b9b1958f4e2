# report/ tests (unit tier): the reader, the printers, compare, accept and html, on the real result
# files under tests/data/report/runs. Included from tests/CMakeLists.txt (GTest, Python3 provided).
add_executable(ccbench_report_tests  # in the folders of report/ they test
  unit/report/reading/history_index_test.cpp
  unit/report/reading/input_test.cpp
  unit/report/reading/json_get_test.cpp
  unit/report/reading/schemas_test.cpp
  unit/report/judging/accept_fabric_test.cpp
  unit/report/judging/accept_next_test.cpp
  unit/report/judging/accept_naming_test.cpp
  unit/report/judging/accept_profile_test.cpp
  unit/report/judging/accept_test.cpp
  unit/report/judging/baseline_test.cpp
  unit/report/judging/compare_test.cpp
  unit/report/judging/evidence_test.cpp
  unit/report/judging/regression_test.cpp
  unit/report/judging/trend_test.cpp
  unit/report/rendering/baseline_profile_test.cpp
  unit/report/rendering/html_test.cpp
  unit/report/rendering/openmetrics_test.cpp
  unit/report/rendering/table_test.cpp
  unit/report/rendering/text_test.cpp)
target_link_libraries(ccbench_report_tests PRIVATE ccbench::report GTest::gtest_main fmt::fmt ccbench::warnings)
target_include_directories(ccbench_report_tests PRIVATE ${PROJECT_SOURCE_DIR}/report/judging/src)
target_compile_definitions(ccbench_report_tests PRIVATE
  CCBENCH_REPORT_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data/report"
  CCBENCH_TOPO_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data/topo"
  CCBENCH_PROFILES_DIR="${PROJECT_SOURCE_DIR}/profiles"
  CCBENCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
gtest_discover_tests(ccbench_report_tests TEST_PREFIX "unit." PROPERTIES LABELS unit
                     SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")

# End to end through the ccbench-report binary.
set(_report_args --report $<TARGET_FILE:ccbench-report> --data ${CMAKE_CURRENT_SOURCE_DIR}/data/report
    --profiles ${PROJECT_SOURCE_DIR}/profiles)
foreach(_case golden malformed fleet_input compare_scaled)
  add_test(NAME report.${_case}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/report/report_test.py ${_report_args} ${_case})
  set_tests_properties(report.${_case} PROPERTIES LABELS unit TIMEOUT 300)
endforeach()
# The fleet verdict on synthetic sweeps derived from the real ones (tests/tools/synthetic_fleet.py): every case of
# issue 22's section 2 with the names it must give, and its bad input (section 3).
foreach(_case verdicts input)
  add_test(NAME report.fleet_cases.${_case}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/report/fleet_cases_test.py
                   --report $<TARGET_FILE:ccbench-report> ${_case})
  set_tests_properties(report.fleet_cases.${_case} PROPERTIES LABELS unit TIMEOUT 300)
endforeach()
add_test(NAME report.compare_scipy
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/report/compare_scipy_test.py
                 --report $<TARGET_FILE:ccbench-report> --data ${CMAKE_CURRENT_SOURCE_DIR}/data/report)
set_tests_properties(report.compare_scipy PROPERTIES LABELS unit TIMEOUT 300 SKIP_RETURN_CODE 77)
add_test(NAME report.accept_junit
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/report/accept_junit_test.py ${_report_args})
set_tests_properties(report.accept_junit PROPERTIES LABELS unit TIMEOUT 300 SKIP_RETURN_CODE 77)
add_test(NAME report.html_chromium
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/report/html_chromium_test.py ${_report_args})
set_tests_properties(report.html_chromium PROPERTIES LABELS unit TIMEOUT 300 SKIP_RETURN_CODE 77 RESOURCE_LOCK cpu)
# Hostile files (issue 15): inputs that are not regular files or too large, outputs that are not regular
# files, an output that is an input (issue 35), compare of runs that share no row or a candidate that stopped early.
foreach(_case inputs outputs outputs_inputs compare_incomplete)
  add_test(NAME report.files.${_case}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/report/files_test.py ${_report_args} ${_case})
  set_tests_properties(report.files.${_case} PROPERTIES LABELS unit TIMEOUT 120)
endforeach()
# ccbench-report import (issue 27) on the real logs of tests/data/import: figures against the logs' own, the H800 /
# H100 comparison, nccl-tests' -J file, malformed logs, logs of other runs and copies of one log, failed and cut runs, unnamed tests and contradicted flags (issue 35).
foreach(_case logs platforms json malformed runs ended perftest)
  add_test(NAME report.import.${_case}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/report/import_test.py
                   --report $<TARGET_FILE:ccbench-report> --data ${CMAKE_CURRENT_SOURCE_DIR}/data/import
                   --schema ${PROJECT_SOURCE_DIR}/report/schema/ccbench.result.schema.json
                   --profiles ${PROJECT_SOURCE_DIR}/profiles ${_case})
  set_tests_properties(report.import.${_case} PROPERTIES LABELS unit TIMEOUT 120)
endforeach()
# export --format openmetrics (issue 39, section 2): every export promtool-clean, served by a real node_exporter's
# textfile collector and a real Pushgateway, which the test starts on sockets it bound itself (Debian's prometheus,
# prometheus-node-exporter and prometheus-pushgateway; skipped without them, which fails CI).
foreach(_case promtool node_exporter pushgateway)
  add_test(NAME report.export.${_case}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/report/export_test.py
                   --report $<TARGET_FILE:ccbench-report> --data ${CMAKE_CURRENT_SOURCE_DIR}/data
                   --profiles ${PROJECT_SOURCE_DIR}/profiles --readme ${PROJECT_SOURCE_DIR}/docs/reporter.md ${_case})
  set_tests_properties(report.export.${_case} PROPERTIES LABELS unit TIMEOUT 300 SKIP_RETURN_CODE 77)
endforeach()
# ... and every bench the MPI backend runs, run for real (2 ranks, 3 small sizes) and its export promtool-clean
# (mpi tier: it needs the benches and mpirun).
if(CCBENCH_MPI_FOUND)
  add_test(NAME report.export.benches
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/report/export_test.py
                   --report $<TARGET_FILE:ccbench-report> --data ${CMAKE_CURRENT_SOURCE_DIR}/data
                   --profiles ${PROJECT_SOURCE_DIR}/profiles --readme ${PROJECT_SOURCE_DIR}/docs/reporter.md
                   --bin-dir ${PROJECT_BINARY_DIR}/bench/apps --mpirun ${MPIEXEC_EXECUTABLE} benches)
  set_tests_properties(report.export.benches PROPERTIES LABELS mpi TIMEOUT 600 SKIP_RETURN_CODE 77 RESOURCE_LOCK cpu)
endif()
