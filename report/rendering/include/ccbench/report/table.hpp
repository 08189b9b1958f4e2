#pragma once
// `ccbench-report table`: per run, bench and group, the nccl-tests-like table plus median/p95,
// %peak and wrong elements.
#include <vector>

#include "ccbench/report/input.hpp"
#include "ccbench/report/rows.hpp"

namespace ccbench::report {

/// The cases of one run that share everything but size and placement: one table.
struct TableSection {
  const LoadedRun* run = nullptr;
  RowKey key;                            // size_bytes and in_place unset
  std::vector<const CaseResult*> cases;  // by size, out-of-place first
};

/// What `table` renders in every format. It points into the runs it was made of, which must outlive it.
struct TableModel {
  std::vector<TableSection> sections;  // run by run, each run's in the order of its results
};

TableModel make_table_model(const std::vector<LoadedRun>& runs);

}  // namespace ccbench::report
