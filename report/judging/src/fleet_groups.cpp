// The fleet verdict of a --hosts-per-group sweep: each group against the level of the fastest groups (and the
// anchor); a host whose every group is LOW is a BAD HOST; a LOW group without one is a LOW GROUP.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "fleet_internal.hpp"

namespace ccbench::report::detail {

namespace {

constexpr std::size_t kMinGroupsToName = 2;  // one per round: a host bad in one round alone is not named

}  // namespace

void judge_groups(const FleetSweep& sweep, const FleetOptions& options, const std::set<std::string>& hosts,
                  FleetVerdict& v) {
  std::set<std::string> ids;
  std::vector<double> peaks_of;  // per group, NaN when unknown
  for (const auto& c : sweep.cases()) {
    if (c.size_bytes != v.size_bytes || c.in_place != v.in_place) {
      continue;
    }
    const auto& path = sweep.files().at(c.file).path;
    if (!ids.insert(c.group_id).second) {
      throw InputError(path, "",
                       fmt::format("group {} is measured twice: pass each file of the sweep once", c.group_id));
    }
    FleetGroup g;
    g.id = c.group_id;
    for (std::uint32_t i = 0; i < c.host_count; ++i) {
      g.hosts.push_back(sweep.host_names()[sweep.hosts()[c.first_host + i]]);
    }
    g.ranks.assign(sweep.ranks().begin() + c.first_rank, sweep.ranks().begin() + c.first_rank + c.rank_count);
    g.status = std::string{name(c.status)};
    g.value = figure(c, !v.higher_is_better, options.best, sweep, v.unit);
    g.file = path;
    v.measured += g.value ? 1U : 0U;
    peaks_of.push_back(c.peak_GBps);
    v.groups.push_back(std::move(g));
  }
  if (v.measured == 0) {
    throw UsageError(fmt::format("no group of the sweep measured ({} groups): nothing to judge", v.groups.size()));
  }
  std::vector<double> values;
  for (const auto& g : v.groups) {
    if (g.value) {
      values.push_back(goodness(*g.value, v.higher_is_better));
    }
  }
  const auto level = healthy_level(values, v.threshold);
  std::vector<double> peaks;
  std::size_t unknown = 0;
  for (std::size_t i = 0; i < v.groups.size(); ++i) {
    const auto& g = v.groups[i];
    if (g.value && std::isnan(peaks_of[i])) {
      ++unknown;
    } else if (g.value && goodness(*g.value, v.higher_is_better) >= (1.0 - v.threshold) * *level) {
      peaks.push_back(peaks_of[i]);
    }
  }
  const auto anchor = anchor_of(v, options, peaks, unknown, values.size());
  const auto reference = set_reference(v, level, anchor, options.reference.has_value());
  for (auto& g : v.groups) {
    if (g.value && reference) {
      g.score = goodness(*g.value, v.higher_is_better) / *reference;
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
    for (const auto& file : sweep.files()) {
      for (const auto& info : file.head.doc.environment.hosts) {
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
