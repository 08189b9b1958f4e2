#include "ccbench/collective.hpp"

#include <array>

namespace ccbench {
namespace {

// One row per collective. S and the bus factor follow nccl-tests' doc/PERFORMANCE.md:
// all_gather, reduce_scatter and alltoall count the whole (n x count) buffer, the others count.
constexpr std::array kCollectives{
    CollectiveInfo{Collective::AllReduce, "all_reduce", "allreduce_bench", Span::Count, Span::Count, Span::Count,
                   BusFactor::AllReduce, true, false},
    CollectiveInfo{Collective::AllGather, "all_gather", "allgather_bench", Span::Count, Span::CountTimesRanks,
                   Span::CountTimesRanks, BusFactor::NMinusOneOverN, false, false},
    CollectiveInfo{Collective::ReduceScatter, "reduce_scatter", "reducescatter_bench", Span::CountTimesRanks,
                   Span::Count, Span::CountTimesRanks, BusFactor::NMinusOneOverN, true, false},
    CollectiveInfo{Collective::AllToAll, "alltoall", "alltoall_bench", Span::CountTimesRanks, Span::CountTimesRanks,
                   Span::CountTimesRanks, BusFactor::NMinusOneOverN, false, false},
    CollectiveInfo{Collective::Broadcast, "broadcast", "broadcast_bench", Span::Count, Span::Count, Span::Count,
                   BusFactor::One, false, true},
    CollectiveInfo{Collective::Reduce, "reduce", "reduce_bench", Span::Count, Span::Count, Span::Count, BusFactor::One,
                   true, true},
    CollectiveInfo{Collective::SendRecv, "sendrecv", "sendrecv_bench", Span::Count, Span::Count, Span::Count,
                   BusFactor::One, false, false},
    // perftest's ib_write_bw / ib_write_lat: S = the bytes of one RDMA WRITE; its time is per write
    // (bw) or one way, half the round trip (lat); busbw = algbw (one link, factor 1).
    CollectiveInfo{Collective::IbWriteBw, "ib_write_bw", "ib_write_bw_bench", Span::Count, Span::Count, Span::Count,
                   BusFactor::One, false, false},
    CollectiveInfo{Collective::IbWriteLat, "ib_write_lat", "ib_write_lat_bench", Span::Count, Span::Count, Span::Count,
                   BusFactor::One, false, false},
    // copy_bench: S = the bytes copied (each direction's, summed for a bidirectional copy); the factor
    // is set per result (2 for a copy within one GPU's memory, which reads and writes every byte).
    CollectiveInfo{Collective::Copy, "copy", "copy_bench", Span::Count, Span::Count, Span::Count, BusFactor::One, false,
                   false},
};

}  // namespace

std::span<const CollectiveInfo> all_collectives() { return kCollectives; }

bool is_rdma(Collective coll) { return coll == Collective::IbWriteBw || coll == Collective::IbWriteLat; }

bool is_copy(Collective coll) { return coll == Collective::Copy; }

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
