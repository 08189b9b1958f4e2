#include "ccbench/collective.hpp"

#include <array>

namespace ccbench {
namespace {

// The rows of workloads.def (the column order is written there).
// NOLINTNEXTLINE(cppcoreguidelines-macro-usage)
#define CCBENCH_WORKLOAD(ID, NAME, BENCH, KIND, SEND, RECV, S, FACTOR, REDUCE_OP, ROOT, FASTEST, PAIRWISE) \
  CollectiveInfo{.id = Collective::ID,                                                                     \
                 .name = (NAME),                                                                           \
                 .bench = (BENCH),                                                                         \
                 .kind = WorkloadKind::KIND,                                                               \
                 .send = Span::SEND,                                                                       \
                 .recv = Span::RECV,                                                                       \
                 .algbw_bytes = Span::S,                                                                   \
                 .factor = BusFactor::FACTOR,                                                              \
                 .has_reduce_op = (REDUCE_OP),                                                             \
                 .has_root = (ROOT),                                                                       \
                 .fastest_sample_rate = (FASTEST),                                                         \
                 .pairwise = (PAIRWISE)},
constexpr std::array kCollectives{
#include "ccbench/workloads.def"
};
#undef CCBENCH_WORKLOAD

// info() indexes the table by the enum: the rows are in the enum's order by construction, checked here.
constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kCollectives.size(); ++i) {
    if (static_cast<std::size_t>(kCollectives[i].id) != i) {
      return false;
    }
  }
  return true;
}
static_assert(rows_in_enum_order());

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
  return span == Span::Count ? count : count * static_cast<std::uint64_t>(nranks);  // Plan: traffic.hpp
}

std::uint64_t count_for_bytes(const CollectiveInfo& coll, std::uint64_t bytes, std::size_t type_size, int nranks) {
  const std::uint64_t total = bytes / type_size;
  return coll.algbw_bytes == Span::Count ? total : total / static_cast<std::uint64_t>(nranks);
}

std::uint64_t algbw_bytes(const CollectiveInfo& coll, std::uint64_t count, std::size_t type_size, int nranks) {
  return elements(coll.algbw_bytes, count, nranks) * type_size;
}

}  // namespace ccbench
