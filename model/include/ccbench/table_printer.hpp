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
  std::string groups;              // "--split node: 2 group(s) side by side"; empty for one world group
  std::string timing;              // "batch, host steady_clock"
  std::string stopping;            // "median of >= 10 samples, 95% CI within 1%, budget 1 s per size"
  std::vector<std::string> peaks;  // per group: "world: 450 GB/s (NVLink4 18 links x 25 GB/s ...)"
  std::string registration;        // -R (NCCL): what the library granted; empty without -R
};

/// The unit of the table's rates (the JSON keeps GB/s): GB/s as nccl-tests, or Gb/s as perftest's --report_gbits.
enum class RateUnit { GBps, Gbps };

class TablePrinter {
 public:
  /// `show_group`: a first column with the group id (for --split).
  TablePrinter(std::FILE* out, std::vector<bool> placements_in_place, bool show_group = false,
               RateUnit unit = RateUnit::GBps);
  void header(const TableHeader& h) const;
  /// One row: the cases of one size, in the order of the placements given at construction. A skipped case's
  /// reason follows on a comment line, once until it changes.
  void row(const std::vector<CaseResult>& cells) const;
  /// The cases of one size from every group: one row per group, in the order given.
  void rows(const std::vector<CaseResult>& cells) const;
  void footer(const std::vector<CaseResult>& all, const std::string& result_path) const;

 private:
  [[nodiscard]] std::string cell(const CaseResult& r) const;

  std::FILE* m_out;
  std::vector<bool> m_in_place;
  bool m_show_group;
  RateUnit m_unit;
  mutable std::string m_last_reason;  // the skip reason printed last
};

}  // namespace ccbench
