// Acceptance checks' naming of what they find: the input ("no result matched"), the failing group (its ranks,
// hosts, and the GPUs and NICs the topology names) and the case. The checks are in accept.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accept_checks.hpp"
#include "ccbench/report/devices.hpp"
#include "ccbench/text.hpp"

namespace ccbench::report::detail {

/// What the input holds, for "no result matched": "allreduce_bench mpi world of 4 ranks, ...".
std::string input_summary(const std::vector<LoadedRun>& runs) {
  std::vector<std::string> kinds;
  for (const auto& run : runs) {
    for (const auto& r : run.doc.results) {
      auto text = fmt::format("{} {} {} of {} ranks", r.benchmark, r.backend, r.group, r.ranks);
      if (std::find(kinds.begin(), kinds.end(), text) == kinds.end()) {
        kinds.push_back(std::move(text));
      }
    }
  }
  return kinds.empty() ? std::string("no results") : fmt::format("{}", fmt::join(kinds, ", "));
}

/// Up to kMaxCulprits items, then "and N more".
std::string capped(const std::vector<std::string>& items, std::string_view sep) {
  std::vector<std::string> shown(items.begin(),
                                 items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), kMaxCulprits)));
  if (items.size() > kMaxCulprits) {
    shown.push_back(fmt::format("and {} more", items.size() - kMaxCulprits));
  }
  return fmt::format("{}", fmt::join(shown, sep));
}

// --- naming: ranks, hosts, GPUs and NICs ---------------------------------------------------------

namespace {

using nlohmann::json;

constexpr std::size_t kMaxHosts = 4;  // hosts of one group named with their devices
constexpr std::size_t kMaxRankItems = 12;

std::string rank_list(const std::vector<int>& ranks) {
  std::vector<std::string> items;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) {
      ++j;
    }
    items.push_back(j >= i + 2 ? fmt::format("{}-{}", ranks[i], ranks[j]) : std::to_string(ranks[i]));
    if (j == i + 1) {
      items.push_back(std::to_string(ranks[j]));
    }
    i = j + 1;
  }
  if (items.size() > kMaxRankItems) {
    items.resize(kMaxRankItems);
    items.push_back(fmt::format("... ({} ranks)", ranks.size()));
  }
  return fmt::format("{}", fmt::join(items, ","));
}

/// Hosts of a group in order of appearance, each with the local ranks of the group's ranks on it.
std::vector<std::pair<std::string, std::vector<int>>> hosts_of(const ResultDocument& doc, const CaseResult& r) {
  std::vector<std::pair<std::string, std::vector<int>>> hosts;
  for (const int rank : r.group_ranks) {
    for (const auto& h : doc.environment.hosts) {
      const auto at = std::find(h.ranks.begin(), h.ranks.end(), rank);
      if (at == h.ranks.end()) {
        continue;
      }
      auto it = std::find_if(hosts.begin(), hosts.end(), [&](const auto& e) { return e.first == h.hostname; });
      if (it == hosts.end()) {
        it = hosts.insert(hosts.end(), {h.hostname, {}});
      }
      it->second.push_back(static_cast<int>(at - h.ranks.begin()));
    }
  }
  return hosts;
}

}  // namespace

/// "group pair:2-3 (ranks 2,3 on node7: GPU2 0000:1b:00.0, GPU3 0000:29:00.0)", as tables name groups.
std::string describe_group(const Row& row) {
  const CaseResult& r = *row.r;
  const std::string ranks = r.group_ranks.empty() ? std::string() : "ranks " + rank_list(r.group_ranks) + " ";
  const auto hosts = hosts_of(row.run->doc, r);
  if (hosts.empty() || hosts.size() > kMaxHosts) {
    const auto names = hosts.empty() ? r.group_hosts : std::vector<std::string>{hosts[0].first, hosts[1].first, "..."};
    const auto on = hosts.size() > kMaxHosts ? fmt::format("{} hosts: ", hosts.size()) : std::string();
    return fmt::format("group {} ({}on {}{})", r.group_id, ranks, on, fmt::join(names, ", "));
  }
  // CUDA device = local rank (the NCCL backend); with CUDA_VISIBLE_DEVICES that is no NVML index.
  const bool names_gpus = r.backend == "nccl" && !row.run->doc.environment.variables.contains("CUDA_VISIBLE_DEVICES");
  std::vector<std::string> parts;
  bool any_device = false;
  for (const auto& [hostname, locals] : hosts) {
    std::vector<std::string> devices;
    const json* topo = names_gpus ? topology_host(row.run->doc, hostname) : nullptr;
    for (const int local : locals) {
      if (auto label = device_label(topo, local, hosts.size() > 1); !label.empty()) {
        devices.push_back(std::move(label));
      }
    }
    any_device = any_device || !devices.empty();
    parts.push_back(devices.empty() ? hostname : fmt::format("{}: {}", hostname, fmt::join(devices, ", ")));
  }
  return fmt::format("group {} ({}on {})", r.group_id, ranks, fmt::join(parts, any_device ? "; " : ", "));
}

/// "all_reduce float32 256 MiB out-of-place" (with the run's name when several runs are read).
std::string case_label(const Row& row) {
  const CaseResult& r = *row.r;
  std::string label =
      fmt::format("{} {} {} {}", info(r.spec.collective).name, name(r.spec.dtype),
                  format_size(r.size_bytes, SizeStyle::Binary), r.spec.in_place ? "in-place" : "out-of-place");
  if (!r.variant.empty()) {  // --nccl-variants: a profile's check covers both sweeps
    label += " (" + r.variant + ")";
  }
  return row.show_run ? fmt::format("{} [{}]", label, row.run->name()) : label;
}

}  // namespace ccbench::report::detail
