#pragma once
// `ccbench-report benches`: the workload table's benches, for the scripts, suites and tests that run
// "every bench" (or every bench of a kind): they ask this instead of keeping a list of their own.
#include <optional>
#include <string>
#include <string_view>

#include "ccbench/collective.hpp"

namespace ccbench::report {

struct BenchFilter {
  std::optional<WorkloadKind> kind;  // collective | rdma | copy
  std::string backend;               // mpi | nccl | verbs | cuda: the benches that backend runs ("": any)
  std::optional<bool> pairwise;      // true: measured between the ranks of pairs; false: in groups of ranks
};

/// The kind named on the command line: collective, rdma or copy. Throws UsageError otherwise.
WorkloadKind parse_workload_kind(std::string_view name);
/// Checks a --backend name (mpi, nccl, verbs, cuda). Throws UsageError otherwise.
void check_backend_name(std::string_view name);

/// The benches that pass the filter, in the table's order: one name a line (text), or a JSON array of
/// {bench, op, kind, backends, pairwise, reduce_op, root} (json).
std::string render_benches(const BenchFilter& filter, bool json);

}  // namespace ccbench::report
