#pragma once
// The identity of a result row: what must match for two rows to be compared
// (bench, backend, timing mode, op, dtype, redop, root, ranks, group, size, placement).
#include <compare>
#include <cstdint>
#include <string>

#include "ccbench/result.hpp"

namespace ccbench::report {

struct RowKey {
  std::string benchmark;
  std::string backend;
  std::string timing;
  std::string variant;  // --nccl-variants: "ring"; "" otherwise (its "configured" rows are plain rows)
  std::string op;
  std::string dtype;
  std::string redop;  // "" where the op has none
  int root = -1;      // -1 where the op has none
  int ranks = 0;
  std::string group_id;
  std::uint64_t size_bytes = 0;
  bool in_place = false;
  // NOLINTNEXTLINE(readability-implicit-bool-conversion,modernize-use-nullptr): false positives on the defaulted <=>
  auto operator<=>(const RowKey&) const = default;
};

RowKey key_of(const CaseResult& result);
/// "out-of-place" | "in-place".
std::string_view placement_name(bool in_place);
/// "allreduce_bench mpi batch float32 sum world(4) 1 MiB out-of-place" (for listings; "nccl batch ring ..."
/// for a --nccl-variants row).
std::string describe(const RowKey& key);

}  // namespace ccbench::report
