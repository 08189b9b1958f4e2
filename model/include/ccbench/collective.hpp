#pragma once
// The collective table: one row of data per workload (DESIGN §4), written once in workloads.def.
// S (the bytes algbw counts) and the bus factor are exactly nccl-tests' (doc/PERFORMANCE.md).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ccbench {

/// The measured operations: NCCL's collectives and send/recv, raw RDMA writes between two ranks
/// (ib_write_bw, ib_write_lat: the verbs backend only), and a GPU's memory copies (copy_bench only).
enum class Collective {
#define CCBENCH_WORKLOAD(id, ...) id,  // NOLINT(cppcoreguidelines-macro-usage): the rows of workloads.def
#include "ccbench/workloads.def"
#undef CCBENCH_WORKLOAD
};

/// How many elements each rank's buffers hold, as multiples of `count`.
/// `count` is nccl-tests' count: per rank for all_gather/reduce_scatter, per peer for alltoall.
/// Plan: from the case's traffic plan (alltoallv: each rank its own, each peer its own; traffic.hpp's
/// send_elements, recv_elements and case_bytes answer for every span).
enum class Span { Count, CountTimesRanks, Plan };

enum class BusFactor {
  AllReduce,       // 2(n-1)/n
  NMinusOneOverN,  // (n-1)/n
  One,             // 1
};

/// What a workload is, where code must treat kinds apart (validation, backends, the reader).
enum class WorkloadKind {
  Collective,  // NCCL or MPI over a group of ranks
  RdmaWrite,   // verbs RDMA WRITEs between the two ranks of a pair (ib_write_bw, ib_write_lat)
  Copy,        // memory copies one process drives (copy_bench)
};

/// A workload descriptor: what a bench measures, and how its sizes and rates are counted.
struct CollectiveInfo {
  Collective id;
  std::string_view name;   // JSON "op": all_reduce, ...
  std::string_view bench;  // binary name: allreduce_bench, ...
  WorkloadKind kind;
  Span send;         // elements in each rank's send buffer
  Span recv;         // elements in each rank's receive buffer
  Span algbw_bytes;  // S = this × typesize
  BusFactor factor;
  bool has_reduce_op;
  bool has_root;
  bool fastest_sample_rate;  // reports S over the fastest sample as well (perftest's "BW peak")
  bool pairwise;             // measures between the ranks of pairs (send/recv, RDMA writes): not in groups of hosts
};

std::span<const CollectiveInfo> all_collectives();
/// ib_write_bw and ib_write_lat: WorkloadKind::RdmaWrite (bytes, no dtype).
bool is_rdma(Collective coll);
/// copy: WorkloadKind::Copy, host<->device, device<->device and GPU<->GPU copies (copy_bench, no backend).
bool is_copy(Collective coll);
const CollectiveInfo& info(Collective coll);
std::optional<Collective> parse_collective(std::string_view name);

double bus_factor(BusFactor factor, int nranks);
/// Span::Plan has no answer from count and ranks alone: use traffic.hpp's (this gives count x nranks, the generated
/// pattern's total before its 16-byte alignment).
std::uint64_t elements(Span span, std::uint64_t count, int nranks);

/// nccl-tests' count for a requested size in bytes (the size S that algbw counts).
/// Zero when the size is below one element per rank (the case is then skipped).
std::uint64_t count_for_bytes(const CollectiveInfo& coll, std::uint64_t bytes, std::size_t type_size, int nranks);
/// S in bytes for `count` elements.
std::uint64_t algbw_bytes(const CollectiveInfo& coll, std::uint64_t count, std::size_t type_size, int nranks);

}  // namespace ccbench
