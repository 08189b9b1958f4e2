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

/// The filter `ccbench-report benches --kind K --backend B --pairwise|--groups` asks for ("" or false: not
/// given). Throws UsageError for a kind or backend the table does not have, or --pairwise with --groups.
BenchFilter bench_filter(std::string_view kind, std::string_view backend, bool pairwise, bool groups);

/// The benches that pass the filter, in the table's order: one name a line (text), or a JSON array of
/// {bench, op, kind, backends, pairwise, reduce_op, root} (json).
std::string render_benches(const BenchFilter& filter, bool json);

}  // namespace ccbench::report
