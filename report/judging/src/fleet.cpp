// The fleet verdict of an --all-pairs sweep: pairs in; FLEET LOW, SPLITs, BAD HOSTs and BAD LINKs out. Each lane
// is judged in fleet_lane.cpp, the level and the anchor are in fleet_level.cpp, groups in fleet_groups.cpp, the
// printers in fleet_render.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "ccbench/collective.hpp"
#include "fleet_internal.hpp"

namespace ccbench::report {

namespace {

constexpr std::size_t kMinFleetHosts = 3;  // with 2, a slow pair cannot be put on a host or a link
constexpr std::size_t kMaxListed = 3;      // missing pairs named in one message
constexpr std::int32_t kNoPair = -1;

using detail::figure;
using detail::judge_lane;
using detail::Judged;
using detail::Lane;

/// Where each (lane, host a, host b) pair is in v.pairs: a dense matrix, so half a million pairs cost 4 bytes
/// each to place, check for twice and for missing.
class PairIndex {
 public:
  PairIndex(int lanes, std::size_t hosts)
      : m_hosts(hosts), m_at(static_cast<std::size_t>(lanes) * hosts * hosts, kNoPair) {}
  std::int32_t& at(int lane, std::size_t a, std::size_t b) {
    return m_at[(static_cast<std::size_t>(lane) * m_hosts + a) * m_hosts + b];
  }

 private:
  std::size_t m_hosts;
  std::vector<std::int32_t> m_at;
};

FleetPair make_pair(const FleetSweep& sweep, const FleetSweep::Case& c, const FleetVerdict& v, bool best) {
  const auto& path = sweep.files().at(c.file).path;
  if (c.host_count != 2) {
    throw InputError(
        path, "",
        fmt::format("{} is within host {}: a fleet verdict judges pairs of hosts; run --all-pairs across "
                    "3 hosts or more",
                    c.group_id,
                    c.host_count == 0 ? std::string{"?"} : sweep.host_names()[sweep.hosts()[c.first_host]]));
  }
  FleetPair p;
  p.file = c.file;
  p.rank_a = sweep.ranks()[c.first_rank];
  p.rank_b = sweep.ranks()[c.first_rank + 1];
  p.host_a = sweep.host_names()[sweep.hosts()[c.first_host]];
  p.host_b = sweep.host_names()[sweep.hosts()[c.first_host + 1]];
  if (p.host_a == p.host_b) {
    throw InputError(
        path, "",
        fmt::format("{} pairs host {} with itself: a fleet verdict judges pairs of two hosts", c.group_id, p.host_a));
  }
  if (p.host_b < p.host_a) {
    std::swap(p.host_a, p.host_b);
    std::swap(p.rank_a, p.rank_b);
  }
  const int lane_a = sweep.local_rank(c.file, p.host_a, p.rank_a);
  const int lane_b = sweep.local_rank(c.file, p.host_b, p.rank_b);
  if (lane_a < 0 || lane_b < 0) {
    throw InputError(path, "",
                     fmt::format("{}: ranks {} and {} are not ranks of {} and {} in environment.hosts", c.group_id,
                                 p.rank_a, p.rank_b, p.host_a, p.host_b));
  }
  if (lane_a != lane_b) {
    throw InputError(path, "",
                     fmt::format("{} pairs local rank {} of {} with local rank {} of {}: a fleet verdict needs the "
                                 "pairs of --all-pairs from ccbench 1.7 on (the same local rank on both hosts)",
                                 c.group_id, lane_a, p.host_a, lane_b, p.host_b));
  }
  p.lane = lane_a;
  p.status = std::string{name(c.status)};
  p.value = figure(c, !v.higher_is_better, best, sweep, v.unit);
  if (!std::isnan(c.peak_GBps)) {
    p.peak_GBps = c.peak_GBps;
  }
  return p;
}

void collect_pairs(const FleetSweep& sweep, const FleetOptions& options, const Judged& hosts, FleetVerdict& v) {
  PairIndex index(v.lanes, hosts.names.size());
  for (const auto& c : sweep.cases()) {
    if (c.size_bytes != v.size_bytes || c.in_place != v.in_place) {
      continue;
    }
    FleetPair p = make_pair(sweep, c, v, options.best);
    if (p.lane >= v.lanes) {
      continue;  // a host with more ranks than another: its extra local ranks have no partner
    }
    const auto a = hosts.index.find(p.host_a);
    const auto b = hosts.index.find(p.host_b);
    if (a == hosts.index.end() || b == hosts.index.end()) {
      throw InputError(
          sweep.files().at(c.file).path, "",
          fmt::format("{}: hosts {} and {} are not both in environment.hosts", c.group_id, p.host_a, p.host_b));
    }
    std::int32_t& slot = index.at(p.lane, a->second, b->second);
    if (slot != kNoPair) {
      const auto& other = v.pairs[static_cast<std::size_t>(slot)];
      throw InputError(
          sweep.files().at(c.file).path, "",
          fmt::format("pair {}{} is measured twice (here and in {}): pass each file of the sweep once",
                      pair_name(p.host_a, p.host_b), lane_suffix(p.lane, v.lanes), sweep.files().at(other.file).path));
    }
    slot = static_cast<std::int32_t>(v.pairs.size());
    v.measured += p.value ? 1U : 0U;
    v.pairs.push_back(std::move(p));
  }
  std::vector<std::string> missing;
  std::size_t expected = 0;
  for (int lane = 0; lane < v.lanes; ++lane) {
    for (std::size_t a = 0; a < hosts.names.size(); ++a) {
      for (std::size_t b = a + 1; b < hosts.names.size(); ++b) {
        ++expected;
        if (index.at(lane, a, b) == kNoPair) {
          ++v.missing;
          if (missing.size() < kMaxListed) {
            missing.push_back(pair_name(hosts.names[a], hosts.names[b]) + lane_suffix(lane, v.lanes));
          }
        }
      }
    }
  }
  if (v.missing > 0) {
    if (v.missing > kMaxListed) {
      missing.emplace_back("...");
    }
    v.evidence = stop_at_no_verdict(rule_on(
        Stakes::Comparison,
        {{Lack::Absent,
          fmt::format("{} of the {} pairs of {} hosts are missing from the sweep ({}): pass every file of the "
                      "--all-pairs run, over every host (or --partial to judge the pairs a sweep that stopped early "
                      "measured)",
                      v.missing, expected, hosts.names.size(), fmt::join(missing, ", "))}},
        options.partial ? "--partial" : ""));
  }
  std::stable_sort(v.pairs.begin(), v.pairs.end(), [](const FleetPair& x, const FleetPair& y) {
    return std::tie(x.lane, x.host_a, x.host_b) < std::tie(y.lane, y.host_a, y.host_b);
  });
}

/// A host's median score over its other pairs of the lane, leaving out the link itself and pairs with BAD HOSTs.
std::optional<double> elsewhere(const FleetVerdict& v, const FleetPair& link, const std::string& host) {
  std::vector<double> scores;
  for (const auto& p : v.pairs) {
    if (p.lane == link.lane && &p != &link && (p.host_a == host || p.host_b == host) && p.value &&
        (!p.low || p.explained_by.empty())) {
      scores.push_back(p.score);
    }
  }
  return scores.empty() ? std::nullopt : std::optional<double>(detail::median_of(std::move(scores)));
}

}  // namespace

FleetVerdict evaluate_fleet(const FleetSweep& sweep, const FleetOptions& options) {
  FleetVerdict v;
  v.benchmark = sweep.benchmark();
  v.threshold = options.threshold;
  v.partial = options.partial;
  const bool latency = sweep.benchmark() == info(Collective::IbWriteLat).bench;
  v.higher_is_better = !latency;
  v.metric = latency ? "latency" : "busbw";
  v.unit = latency ? "us" : "GB/s";
  v.stat = options.best ? "best" : "median";
  if (options.reference && !(*options.reference > 0.0 && std::isfinite(*options.reference))) {
    throw UsageError(fmt::format("--reference {:g}: expected a positive figure in {}", *options.reference, v.unit));
  }
  v.size_bytes = options.size.value_or(sweep.sizes().empty() ? 0 : *sweep.sizes().rbegin());
  if (!sweep.sizes().contains(v.size_bytes)) {
    throw UsageError(fmt::format("--size {}: the sweep measured {}", v.size_bytes, fmt::join(sweep.sizes(), ", ")));
  }
  v.in_place = !sweep.has_out_of_place();
  for (const auto& f : sweep.files()) {
    v.files.push_back(f.path);
    v.fabric.insert(v.fabric.end(), f.head.doc.fabric.begin(), f.head.doc.fabric.end());
  }
  const std::set<std::string> host_set = sweep.all_hosts();
  std::map<std::string, std::string> machines;  // machine identity -> the first host name it came under
  for (const auto& f : sweep.files()) {
    for (const auto& h : f.head.doc.environment.hosts) {
      const auto [first, added] = machines.emplace(h.machine, h.hostname);
      if (!h.machine.empty() && !added && first->second != h.hostname) {
        stop_at_no_verdict(
            rule_on(Stakes::Comparison,
                    {{Lack::Inconsistent, fmt::format("hosts {} and {} are one machine ({}): their pair measured a "
                                                      "loopback, not a link; sweep again with each machine listed once",
                                                      first->second, h.hostname, h.machine)}}));
      }
    }
  }
  if (host_set.size() < kMinFleetHosts) {
    stop_at_no_verdict(rule_on(
        Stakes::Comparison,
        {{Lack::Unjudgeable,
          fmt::format("{} host{} ({}): a fleet verdict needs {} hosts or more (with one pair, a slow result cannot "
                      "be put on a host or on the link)",
                      host_set.size(), host_set.size() == 1 ? "" : "s", fmt::join(host_set, ", "), kMinFleetHosts)}}));
  }
  if (sweep.kind() == "hosts") {
    detail::judge_groups(sweep, options, host_set, v);
    return v;
  }
  Judged hosts;
  hosts.names.assign(host_set.begin(), host_set.end());
  for (std::size_t i = 0; i < hosts.names.size(); ++i) {
    hosts.index.emplace(hosts.names[i], i);
  }
  v.lanes = sweep.lanes();
  collect_pairs(sweep, options, hosts, v);
  if (v.measured == 0) {
    stop_at_no_verdict(
        rule_on(Stakes::Comparison,
                {{Lack::Absent, fmt::format("no pair of the sweep measured ({} pairs, each {}): nothing "
                                            "to judge",
                                            v.pairs.size(), v.pairs.empty() ? "missing" : v.pairs.front().status)}}));
  }
  std::vector<Lane> lanes(static_cast<std::size_t>(v.lanes));
  for (std::size_t l = 0; l < lanes.size(); ++l) {
    lanes[l].lane = static_cast<int>(l);
    lanes[l].of_host.resize(hosts.names.size());
  }
  for (std::size_t i = 0; i < v.pairs.size(); ++i) {
    const auto& p = v.pairs[i];
    Lane& lane = lanes[static_cast<std::size_t>(p.lane)];
    const std::size_t at = lane.pairs.size();
    lane.pairs.push_back(i);
    lane.a.push_back(hosts.index.at(p.host_a));
    lane.b.push_back(hosts.index.at(p.host_b));
    lane.of_host[lane.a.back()].push_back(at);
    lane.of_host[lane.b.back()].push_back(at);
  }
  for (auto& lane : lanes) {
    judge_lane(lane, hosts, sweep, options, v);
  }
  for (auto& p : v.pairs) {  // what a BAD LINK's and a CANNOT TELL pair's lines cite
    if (p.low && !p.across_split && p.explained_by.empty()) {
      p.elsewhere_a = elsewhere(v, p, p.host_a);
      p.elsewhere_b = elsewhere(v, p, p.host_b);
      p.alone = p.cannot_tell ? (p.elsewhere_a ? p.host_b : p.host_a) : "";
    }
  }
  return v;
}

FleetVerdict evaluate_fleet(const std::vector<LoadedRun>& runs, const FleetOptions& options) {
  return evaluate_fleet(FleetSweep::of(runs), options);
}

std::optional<FleetVerdict> page_fleet_verdict(const std::vector<LoadedRun>& runs) {
  try {
    return evaluate_fleet(runs, FleetOptions{});
  } catch (const UsageError&) {
    return std::nullopt;  // not one sweep over 3 hosts or more
  }
}

}  // namespace ccbench::report
