#include "ccbench/report/benches.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "ccbench/errors.hpp"

namespace ccbench::report {
namespace {

constexpr std::array<std::string_view, 3> kKindNames{"collective", "rdma", "copy"};
constexpr std::array kKinds{WorkloadKind::Collective, WorkloadKind::RdmaWrite, WorkloadKind::Copy};

std::string_view kind_name(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::Collective:
      return kKindNames[0];
    case WorkloadKind::RdmaWrite:
      return kKindNames[1];
    case WorkloadKind::Copy:
      return kKindNames[2];
  }
  return "?";
}

/// The backends that run a kind of workload: the collectives on NCCL and MPI, RDMA writes on verbs, and the
/// copies on CUDA itself (copy_bench, no backend of the app layer).
std::vector<std::string_view> backends_of(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::Collective:
      return {"mpi", "nccl"};
    case WorkloadKind::RdmaWrite:
      return {"verbs"};
    case WorkloadKind::Copy:
      return {"cuda"};
  }
  return {};
}

bool passes(const CollectiveInfo& row, const BenchFilter& filter) {
  if (filter.kind && row.kind != *filter.kind) {
    return false;
  }
  if (filter.pairwise && row.pairwise != *filter.pairwise) {
    return false;
  }
  if (filter.backend.empty()) {
    return true;
  }
  const auto backends = backends_of(row.kind);
  return std::find(backends.begin(), backends.end(), filter.backend) != backends.end();
}

}  // namespace

BenchFilter bench_filter(std::string_view kind, std::string_view backend, bool pairwise, bool groups) {
  BenchFilter filter;
  if (!kind.empty()) {
    const auto* found =
        std::find_if(kKinds.begin(), kKinds.end(), [&](WorkloadKind k) { return kind_name(k) == kind; });
    if (found == kKinds.end()) {
      throw UsageError(fmt::format("--kind '{}' is not {}", kind, fmt::join(kKindNames, ", ")));
    }
    filter.kind = *found;
  }
  if (!backend.empty()) {
    std::vector<std::string_view> known;  // every kind's backends, in the kinds' order
    for (const auto k : kKinds) {
      const auto of_kind = backends_of(k);
      known.insert(known.end(), of_kind.begin(), of_kind.end());
    }
    if (std::find(known.begin(), known.end(), backend) == known.end()) {
      throw UsageError(fmt::format("--backend '{}' is not {}", backend, fmt::join(known, ", ")));
    }
    filter.backend = backend;
  }
  if (pairwise && groups) {
    throw UsageError("benches: --pairwise and --groups exclude each other");
  }
  if (pairwise || groups) {
    filter.pairwise = pairwise;
  }
  return filter;
}

std::string render_benches(const BenchFilter& filter, bool json) {
  std::string text;
  auto rows = nlohmann::json::array();
  for (const auto& row : all_collectives()) {
    if (!passes(row, filter)) {
      continue;
    }
    if (!json) {
      text += fmt::format("{}\n", row.bench);
      continue;
    }
    rows.push_back({{"bench", row.bench},
                    {"op", row.name},
                    {"kind", kind_name(row.kind)},
                    {"backends", backends_of(row.kind)},
                    {"pairwise", row.pairwise},
                    {"reduce_op", row.has_reduce_op},
                    {"root", row.has_root}});
  }
  return json ? rows.dump(2) + "\n" : text;
}

}  // namespace ccbench::report
