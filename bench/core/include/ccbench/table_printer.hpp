#pragma once
// The console reporter: an nccl-tests-like table, one row per size with a column group per
// placement (out-of-place, in-place). Receives plain CaseResult values; never measures.
#include <cstdio>
#include <string>
#include <vector>

#include "ccbench/result.hpp"

namespace ccbench {

struct TableHeader {
  std::string title;    // "ccbench 0.1.0 (git ...) allreduce_bench"
  std::string backend;  // "mpi (Open MPI v4.1.4)"
  int ranks = 0;
  int hosts = 0;
  std::string timing;    // "batch, host steady_clock"
  std::string stopping;  // "median of >= 10 samples, 95% CI within 1%, budget 1 s per size"
};

class TablePrinter {
 public:
  TablePrinter(std::FILE* out, std::vector<bool> placements_in_place);
  void header(const TableHeader& h) const;
  /// One row: the cases of one size, in the order of the placements given at construction.
  void row(const std::vector<CaseResult>& cells) const;
  void footer(const std::vector<CaseResult>& all, const std::string& result_path) const;

 private:
  std::FILE* m_out;
  std::vector<bool> m_in_place;
};

}  // namespace ccbench
