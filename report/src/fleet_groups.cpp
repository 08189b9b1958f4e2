// The fleet verdict of a --hosts-per-group sweep: a host whose every group is LOW is a BAD HOST; a
// LOW group without one is a LOW GROUP.
#include <fmt/format.h>

#include <algorithm>

#include "fleet_internal.hpp"

namespace ccbench::report::detail {

namespace {

constexpr std::size_t kMinGroupsToName = 2;  // one per round: a host bad in one round alone is not named

}  // namespace

void judge_groups(const std::vector<LoadedRun>& runs, bool latency, bool best, const std::set<std::string>& hosts,
                  FleetVerdict& v) {
  std::set<std::string> ids;
  for (const auto& run : runs) {
    for (const auto& r : run.doc.results) {
      if (r.group != "hosts" || r.size_bytes != v.size_bytes || r.spec.in_place != v.in_place) {
        continue;
      }
      if (!ids.insert(r.group_id).second) {
        throw InputError(run.path, "",
                         fmt::format("group {} is measured twice: pass each file of the sweep once", r.group_id));
      }
      FleetGroup g;
      g.id = r.group_id;
      g.hosts = r.group_hosts;
      g.ranks = r.group_ranks;
      g.status = std::string{name(r.status)};
      g.value = figure(r, latency, best);
      g.file = run.path;
      v.groups.push_back(std::move(g));
    }
  }
  std::vector<double> values;
  for (const auto& g : v.groups) {
    if (g.value) {
      values.push_back(*g.value);
    }
  }
  const std::optional<double> reference = values.empty() ? std::nullopt : std::optional<double>(median_of(values));
  v.reference = {reference};
  for (auto& g : v.groups) {
    if (g.value && reference && *g.value > 0.0) {
      g.score = v.higher_is_better ? *g.value / *reference : *reference / *g.value;
    }
    g.low = !g.value || g.score < 1.0 - v.threshold;
  }
  for (const auto& name : hosts) {
    FleetHost h;
    h.name = name;
    std::vector<double> scores;
    for (const auto& g : v.groups) {
      const auto at = std::find(g.hosts.begin(), g.hosts.end(), name);
      if (at == g.hosts.end()) {
        continue;
      }
      ++h.pairs;
      h.low += g.low ? 1U : 0U;
      if (g.value && reference) {
        scores.push_back(g.score);
      }
    }
    if (h.pairs == 0) {
      throw UsageError(
          fmt::format("host {} is in no group of the sweep: pass every file of the --hosts-per-group run", name));
    }
    for (const auto& run : runs) {
      for (const auto& info : run.doc.environment.hosts) {
        if (info.hostname == name && !info.ranks.empty()) {
          h.rank = info.ranks.front();
        }
      }
    }
    if (!scores.empty()) {
      h.median_score = median_of(scores);
    }
    h.bad = h.pairs >= kMinGroupsToName && h.low == h.pairs;
    v.hosts.push_back(std::move(h));
  }
  for (auto& g : v.groups) {
    g.explained = g.low && std::any_of(g.hosts.begin(), g.hosts.end(), [&](const std::string& name) {
                    return std::any_of(v.hosts.begin(), v.hosts.end(),
                                       [&](const FleetHost& h) { return h.name == name && h.bad; });
                  });
  }
  std::sort(v.groups.begin(), v.groups.end(), [](const FleetGroup& a, const FleetGroup& b) {
    return a.id.size() != b.id.size() ? a.id.size() < b.id.size() : a.id < b.id;  // hosts:2 before hosts:10
  });
}

}  // namespace ccbench::report::detail
