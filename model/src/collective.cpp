#include "ccbench/collective.hpp"

#include <array>

namespace ccbench {
namespace {

// One row per workload. S and the bus factor follow nccl-tests' doc/PERFORMANCE.md:
// all_gather, reduce_scatter and alltoall count the whole (n x count) buffer, the others count.
// One workload to a few lines:
// clang-format off
constexpr std::array kCollectives{
    CollectiveInfo{.id = Collective::AllReduce, .name = "all_reduce", .bench = "allreduce_bench",
                   .kind = WorkloadKind::Collective, .send = Span::Count,
                   .recv = Span::Count, .algbw_bytes = Span::Count, .factor = BusFactor::AllReduce,
                   .has_reduce_op = true, .has_root = false, .fastest_sample_rate = false, .pairwise = false},
    CollectiveInfo{.id = Collective::AllGather, .name = "all_gather", .bench = "allgather_bench",
                   .kind = WorkloadKind::Collective, .send = Span::Count,
                   .recv = Span::CountTimesRanks, .algbw_bytes = Span::CountTimesRanks,
                   .factor = BusFactor::NMinusOneOverN, .has_reduce_op = false, .has_root = false,
                   .fastest_sample_rate = false, .pairwise = false},
    CollectiveInfo{.id = Collective::ReduceScatter, .name = "reduce_scatter", .bench = "reducescatter_bench",
                   .kind = WorkloadKind::Collective, .send = Span::CountTimesRanks,
                   .recv = Span::Count, .algbw_bytes = Span::CountTimesRanks, .factor = BusFactor::NMinusOneOverN,
                   .has_reduce_op = true, .has_root = false, .fastest_sample_rate = false, .pairwise = false},
    CollectiveInfo{.id = Collective::AllToAll, .name = "alltoall", .bench = "alltoall_bench",
                   .kind = WorkloadKind::Collective, .send = Span::CountTimesRanks,
                   .recv = Span::CountTimesRanks, .algbw_bytes = Span::CountTimesRanks,
                   .factor = BusFactor::NMinusOneOverN, .has_reduce_op = false, .has_root = false,
                   .fastest_sample_rate = false, .pairwise = false},
    CollectiveInfo{.id = Collective::Broadcast, .name = "broadcast", .bench = "broadcast_bench",
                   .kind = WorkloadKind::Collective, .send = Span::Count,
                   .recv = Span::Count, .algbw_bytes = Span::Count, .factor = BusFactor::One, .has_reduce_op = false,
                   .has_root = true, .fastest_sample_rate = false, .pairwise = false},
    CollectiveInfo{.id = Collective::Reduce, .name = "reduce", .bench = "reduce_bench",
                   .kind = WorkloadKind::Collective, .send = Span::Count,
                   .recv = Span::Count, .algbw_bytes = Span::Count, .factor = BusFactor::One, .has_reduce_op = true,
                   .has_root = true, .fastest_sample_rate = false, .pairwise = false},
    CollectiveInfo{.id = Collective::SendRecv, .name = "sendrecv", .bench = "sendrecv_bench",
                   .kind = WorkloadKind::Collective, .send = Span::Count,
                   .recv = Span::Count, .algbw_bytes = Span::Count, .factor = BusFactor::One, .has_reduce_op = false,
                   .has_root = false, .fastest_sample_rate = false, .pairwise = true},
    // perftest's ib_write_bw / ib_write_lat: S = the bytes of one RDMA WRITE; its time is per write
    // (bw) or one way, half the round trip (lat); busbw = algbw (one link, factor 1).
    CollectiveInfo{.id = Collective::IbWriteBw, .name = "ib_write_bw", .bench = "ib_write_bw_bench",
                   .kind = WorkloadKind::RdmaWrite, .send = Span::Count,
                   .recv = Span::Count, .algbw_bytes = Span::Count, .factor = BusFactor::One, .has_reduce_op = false,
                   .has_root = false, .fastest_sample_rate = true, .pairwise = true},
    CollectiveInfo{.id = Collective::IbWriteLat, .name = "ib_write_lat", .bench = "ib_write_lat_bench",
                   .kind = WorkloadKind::RdmaWrite, .send = Span::Count,
                   .recv = Span::Count, .algbw_bytes = Span::Count, .factor = BusFactor::One, .has_reduce_op = false,
                   .has_root = false, .fastest_sample_rate = false, .pairwise = true},
    // copy_bench: S = the bytes copied (each direction's, summed for a bidirectional copy); the factor
    // is set per result (2 for a copy within one GPU's memory, which reads and writes every byte).
    CollectiveInfo{.id = Collective::Copy, .name = "copy", .bench = "copy_bench", .kind = WorkloadKind::Copy,
                   .send = Span::Count, .recv = Span::Count,
                   .algbw_bytes = Span::Count, .factor = BusFactor::One, .has_reduce_op = false, .has_root = false,
                   .fastest_sample_rate = false, .pairwise = false},
};
// clang-format on

}  // namespace

std::span<const CollectiveInfo> all_collectives() { return kCollectives; }

bool is_rdma(Collective coll) { return info(coll).kind == WorkloadKind::RdmaWrite; }

bool is_copy(Collective coll) { return info(coll).kind == WorkloadKind::Copy; }

const CollectiveInfo& info(Collective coll) { return kCollectives[static_cast<std::size_t>(coll)]; }

std::optional<Collective> parse_collective(std::string_view name) {
  for (const auto& row : kCollectives) {
    if (row.name == name || row.bench == name) {
      return row.id;
    }
  }
  return std::nullopt;
}

double bus_factor(BusFactor factor, int nranks) {
  const double n = nranks;
  switch (factor) {
    case BusFactor::AllReduce:
      return 2.0 * (n - 1.0) / n;
    case BusFactor::NMinusOneOverN:
      return (n - 1.0) / n;
    case BusFactor::One:
      return 1.0;
  }
  return 1.0;
}

std::uint64_t elements(Span span, std::uint64_t count, int nranks) {
  return span == Span::Count ? count : count * static_cast<std::uint64_t>(nranks);
}

std::uint64_t count_for_bytes(const CollectiveInfo& coll, std::uint64_t bytes, std::size_t type_size, int nranks) {
  const std::uint64_t total = bytes / type_size;
  return coll.algbw_bytes == Span::Count ? total : total / static_cast<std::uint64_t>(nranks);
}

std::uint64_t algbw_bytes(const CollectiveInfo& coll, std::uint64_t count, std::size_t type_size, int nranks) {
  return elements(coll.algbw_bytes, count, nranks) * type_size;
}

}  // namespace ccbench
