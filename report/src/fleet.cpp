// The fleet verdict: --all-pairs results in, BAD HOSTs and BAD LINKs out. The printers are in
// fleet_render.cpp.
#include "ccbench/report/fleet.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "ccbench/collective.hpp"
#include "devices.hpp"
#include "fleet_internal.hpp"

namespace ccbench::report {

namespace detail {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

std::optional<double> figure(const CaseResult& r, bool latency, bool best) {
  if (r.status != CaseStatus::Ok) {
    return std::nullopt;
  }
  if (latency) {
    return r.time ? std::optional<double>((best ? r.time->min : r.time->p50) * 1e6) : std::nullopt;
  }
  if (best && r.time && r.time->min > 0.0) {
    return r.busbw_GBps * r.time->p50 / r.time->min;
  }
  return r.busbw_GBps;
}

}  // namespace detail

namespace {

constexpr std::size_t kMinFleetHosts = 3;   // with 2, a slow pair cannot be put on a host or a link
constexpr std::size_t kMinPairsToName = 2;  // a host is named on 2 pairs with unnamed hosts at least
constexpr std::size_t kMaxListed = 3;       // missing pairs named in one message

using detail::figure;
using detail::median_of;

bool is_pair_result(const CaseResult& r) { return r.group == "pair" && r.group_ranks.size() == 2; }
bool is_fleet_result(const CaseResult& r) { return is_pair_result(r) || r.group == "hosts"; }

/// Index of `rank` among its host's ranks (its local rank), or -1.
int local_rank(const ResultDocument& doc, const std::string& host, int rank) {
  for (const auto& h : doc.environment.hosts) {
    if (h.hostname == host) {
      const auto it = std::find(h.ranks.begin(), h.ranks.end(), rank);
      return it == h.ranks.end() ? -1 : static_cast<int>(it - h.ranks.begin());
    }
  }
  return -1;
}

std::string pair_name(const FleetPair& p, int lanes) {
  return fmt::format("{}-{}{}", p.host_a, p.host_b, lane_suffix(p.lane, lanes));
}

struct Sweep {
  std::string benchmark;
  std::string first_file;
  std::set<std::uint64_t> sizes;
  std::string sizes_file;
  bool has_out_of_place = false;
  std::string kind;  // "pair" (--all-pairs) or "hosts" (--hosts-per-group)
};

// Same bench and the same sizes in every file; returns what they share.
Sweep check_files(const std::vector<LoadedRun>& runs) {
  Sweep sweep;
  for (const auto& run : runs) {
    std::set<std::uint64_t> sizes;
    for (const auto& r : run.doc.results) {
      if (!is_fleet_result(r)) {
        continue;
      }
      if (sweep.benchmark.empty()) {
        sweep.benchmark = r.benchmark;
        sweep.first_file = run.path;
        sweep.kind = r.group;
      } else if (r.group != sweep.kind) {
        throw InputError(run.path, "",
                         fmt::format("{} results beside {}'s {} results: one sweep at a time (--all-pairs or "
                                     "--hosts-per-group)",
                                     r.group, sweep.first_file, sweep.kind));
      } else if (r.benchmark != sweep.benchmark) {
        throw InputError(run.path, "",
                         fmt::format("{} results beside {}'s {}: a fleet verdict judges one bench's sweep", r.benchmark,
                                     sweep.first_file, sweep.benchmark));
      }
      sizes.insert(r.size_bytes);
      sweep.has_out_of_place = sweep.has_out_of_place || !r.spec.in_place;
    }
    if (sizes.empty()) {
      throw InputError(run.path, "",
                       "no pair results: a fleet verdict reads the results of a sweep run with --all-pairs (or "
                       "--hosts-per-group)");
    }
    if (sweep.sizes.empty()) {
      sweep.sizes = sizes;
      sweep.sizes_file = run.path;
    } else if (sizes != sweep.sizes) {
      throw InputError(run.path, "",
                       fmt::format("sizes {} differ from {}'s {}: a fleet verdict sets the pairs of one sweep "
                                   "against each other",
                                   fmt::join(sizes, ","), sweep.sizes_file, fmt::join(sweep.sizes, ",")));
    }
  }
  return sweep;
}

std::set<std::string> fleet_hosts(const std::vector<LoadedRun>& runs) {
  std::set<std::string> hosts;
  for (const auto& run : runs) {
    for (const auto& h : run.doc.environment.hosts) {
      hosts.insert(h.hostname);
    }
  }
  return hosts;
}

int lanes_of(const std::vector<LoadedRun>& runs) {
  std::size_t lanes = 0;
  for (const auto& run : runs) {
    for (const auto& h : run.doc.environment.hosts) {
      lanes = lanes == 0 ? h.ranks.size() : std::min(lanes, h.ranks.size());
    }
  }
  return static_cast<int>(std::max<std::size_t>(lanes, 1));
}

FleetPair make_pair(const LoadedRun& run, const CaseResult& r, bool latency, bool best) {
  FleetPair p;
  p.file = run.path;
  p.rank_a = r.group_ranks[0];
  p.rank_b = r.group_ranks[1];
  p.host_a = r.group_hosts[0];
  p.host_b = r.group_hosts[1];
  if (p.host_b < p.host_a) {
    std::swap(p.host_a, p.host_b);
    std::swap(p.rank_a, p.rank_b);
  }
  const int lane_a = local_rank(run.doc, p.host_a, p.rank_a);
  const int lane_b = local_rank(run.doc, p.host_b, p.rank_b);
  const std::string id = r.group_id;
  if (lane_a < 0 || lane_b < 0) {
    throw InputError(run.path, "",
                     fmt::format("{}: ranks {} and {} are not ranks of {} and {} in environment.hosts", id, p.rank_a,
                                 p.rank_b, p.host_a, p.host_b));
  }
  if (lane_a != lane_b) {
    throw InputError(run.path, "",
                     fmt::format("{} pairs local rank {} of {} with local rank {} of {}: a fleet verdict needs the "
                                 "pairs of --all-pairs from ccbench 1.7 on (the same local rank on both hosts)",
                                 id, lane_a, p.host_a, lane_b, p.host_b));
  }
  p.lane = lane_a;
  p.device_a = detail::device_label(detail::topology_host(run.doc, p.host_a), p.lane, true);
  p.device_b = detail::device_label(detail::topology_host(run.doc, p.host_b), p.lane, true);
  p.status = std::string{name(r.status)};
  p.value = figure(r, latency, best);
  return p;
}

using PairKey = std::tuple<int, std::string, std::string>;  // lane, host_a, host_b

std::map<PairKey, FleetPair> collect_pairs(const std::vector<LoadedRun>& runs, std::uint64_t size, bool in_place,
                                           bool latency, bool best, int lanes) {
  std::map<PairKey, FleetPair> pairs;
  for (const auto& run : runs) {
    for (const auto& r : run.doc.results) {
      if (!is_pair_result(r) || r.size_bytes != size || r.spec.in_place != in_place) {
        continue;
      }
      if (r.group_hosts.size() != 2) {
        throw InputError(run.path, "",
                         fmt::format("{} is within host {}: a fleet verdict judges pairs of hosts; run --all-pairs "
                                     "across 3 hosts or more",
                                     r.group_id, r.group_hosts.empty() ? std::string{"?"} : r.group_hosts.front()));
      }
      FleetPair p = make_pair(run, r, latency, best);
      if (p.lane >= lanes) {
        continue;  // a host with more ranks than another: its extra local ranks have no partner
      }
      const PairKey key{p.lane, p.host_a, p.host_b};
      if (const auto it = pairs.find(key); it != pairs.end()) {
        throw InputError(run.path, "",
                         fmt::format("pair {} is measured twice (here and in {}): pass each file of the sweep once",
                                     pair_name(p, lanes), it->second.file));
      }
      pairs.emplace(key, std::move(p));
    }
  }
  return pairs;
}

void check_complete(const std::map<PairKey, FleetPair>& pairs, const std::set<std::string>& hosts, int lanes) {
  std::vector<std::string> missing;
  std::size_t expected = 0;
  for (int lane = 0; lane < lanes; ++lane) {
    for (auto a = hosts.begin(); a != hosts.end(); ++a) {
      for (auto b = std::next(a); b != hosts.end(); ++b) {
        ++expected;
        if (!pairs.contains({lane, *a, *b})) {
          missing.push_back(fmt::format("{}-{}{}", *a, *b, lane_suffix(lane, lanes)));
        }
      }
    }
  }
  if (missing.empty()) {
    return;
  }
  const std::size_t count = missing.size();
  if (missing.size() > kMaxListed) {
    missing.resize(kMaxListed);
    missing.emplace_back("...");
  }
  throw UsageError(
      fmt::format("{} of the {} pairs of {} hosts are missing from the sweep ({}): pass every file of "
                  "the --all-pairs run, over every host",
                  count, expected, hosts.size(), fmt::join(missing, ", ")));
}

// The reference of one lane: the median over hosts of each host's median measured pair.
std::optional<double> lane_reference(const std::vector<FleetPair*>& pairs, const std::set<std::string>& hosts) {
  std::vector<double> host_medians;
  for (const auto& host : hosts) {
    std::vector<double> values;
    for (const FleetPair* p : pairs) {
      if ((p->host_a == host || p->host_b == host) && p->value) {
        values.push_back(*p->value);
      }
    }
    if (!values.empty()) {
      host_medians.push_back(median_of(values));
    }
  }
  return host_medians.empty() ? std::nullopt : std::optional<double>(median_of(host_medians));
}

// Names the BAD HOSTs of one lane, worst first, and puts each LOW pair on a bad host or leaves it a link.
std::vector<FleetHost> judge_lane(std::vector<FleetPair*>& pairs, const std::set<std::string>& hosts, int lane,
                                  std::optional<double> reference, const FleetVerdict& v) {
  for (FleetPair* p : pairs) {
    if (p->value && reference && *p->value > 0.0) {
      p->score = v.higher_is_better ? *p->value / *reference : *reference / *p->value;
    }
    p->low = !p->value || p->score < 1.0 - v.threshold;
  }
  std::set<std::string> named;
  for (;;) {
    const std::string* worst = nullptr;
    double worst_fraction = 0.5;  // more than half of its pairs
    for (const auto& host : hosts) {
      if (named.contains(host)) {
        continue;
      }
      std::size_t considered = 0;
      std::size_t low = 0;
      for (const FleetPair* p : pairs) {
        const bool mine = p->host_a == host || p->host_b == host;
        const std::string& other = p->host_a == host ? p->host_b : p->host_a;
        if (mine && !named.contains(other)) {
          ++considered;
          low += p->low ? 1U : 0U;
        }
      }
      const double fraction = considered == 0 ? 0.0 : static_cast<double>(low) / static_cast<double>(considered);
      if (considered >= kMinPairsToName && fraction > worst_fraction) {
        worst = &host;
        worst_fraction = fraction;
      }
    }
    if (worst == nullptr) {
      break;
    }
    named.insert(*worst);
  }
  std::vector<FleetHost> out;
  for (const auto& host : hosts) {
    FleetHost h;
    h.name = host;
    h.lane = lane;
    h.bad = named.contains(host);
    std::vector<double> scores;
    for (const FleetPair* p : pairs) {
      if (p->host_a != host && p->host_b != host) {
        continue;
      }
      ++h.pairs;
      h.low += p->low ? 1U : 0U;
      if (p->value && reference) {
        scores.push_back(p->score);
      }
      h.rank = p->host_a == host ? p->rank_a : p->rank_b;
      h.device = p->host_a == host ? p->device_a : p->device_b;
    }
    if (!scores.empty()) {
      h.median_score = median_of(scores);
    }
    out.push_back(std::move(h));
  }
  for (FleetPair* p : pairs) {
    if (p->low) {
      p->explained_by = named.contains(p->host_a) ? p->host_a : named.contains(p->host_b) ? p->host_b : "";
    }
  }
  return out;
}

}  // namespace

std::string FleetPair::verdict() const {
  return !low ? "ok" : explained_by.empty() ? "BAD LINK" : "LOW (BAD HOST " + explained_by + ")";
}

std::string FleetGroup::verdict() const { return !low ? "ok" : explained ? "LOW (holds a BAD HOST)" : "LOW GROUP"; }

std::string lane_suffix(int lane, int lanes) { return lanes > 1 ? fmt::format(" (local rank {})", lane) : ""; }

std::vector<const FleetHost*> FleetVerdict::bad_hosts() const {
  std::vector<const FleetHost*> out;
  for (const auto& h : hosts) {
    if (h.bad) {
      out.push_back(&h);
    }
  }
  return out;
}

std::vector<const FleetPair*> FleetVerdict::bad_links() const {
  std::vector<const FleetPair*> out;
  for (const auto& p : pairs) {
    if (p.low && p.explained_by.empty()) {
      out.push_back(&p);
    }
  }
  return out;
}

std::vector<const FleetGroup*> FleetVerdict::low_groups() const {
  std::vector<const FleetGroup*> out;
  for (const auto& g : groups) {
    if (g.low && !g.explained) {
      out.push_back(&g);
    }
  }
  return out;
}

bool FleetVerdict::anything_named() const {
  return !bad_hosts().empty() || !bad_links().empty() || !low_groups().empty();
}

std::string FleetVerdict::rule() const {
  const double pct = 100.0 * (1.0 - threshold);
  const std::string low = higher_is_better ? fmt::format("below {:g}% of the reference {}", pct, metric)
                                           : fmt::format("above the reference latency / {:g}%", pct);
  const std::string sample = stat == "best" ? "of its fastest sample" : "of its median sample";
  if (grouped()) {
    return fmt::format(
        "each group's {} {}; a group is LOW {} (the median group), or when it did not measure; a host is a BAD "
        "HOST when every one of its groups (2 at least: one per round) is LOW; a LOW group that holds no BAD "
        "HOST is a LOW GROUP (a slow link inside it, or a host slow in one round only)",
        metric, sample, low);
  }
  return fmt::format(
      "each pair's {} {}; a pair is LOW {} (the median over hosts of each host's median pair{}), or when it did not "
      "measure; a host is "
      "a BAD HOST when more than half of its pairs with hosts not named already are LOW ({} such pairs at least; "
      "the worst host first); a LOW pair between two hosts that are not BAD HOSTs is a BAD LINK",
      metric, sample, low, lanes > 1 ? ", per local rank" : "", kMinPairsToName);
}

FleetVerdict evaluate_fleet(const std::vector<LoadedRun>& runs, const FleetOptions& options) {
  const Sweep sweep = check_files(runs);
  FleetVerdict v;
  v.benchmark = sweep.benchmark;
  v.threshold = options.threshold;
  const bool latency = sweep.benchmark == info(Collective::IbWriteLat).bench;
  v.higher_is_better = !latency;
  v.metric = latency ? "latency" : "busbw";
  v.unit = latency ? "us" : "GB/s";
  v.stat = options.best ? "best" : "median";
  v.size_bytes = options.size.value_or(*sweep.sizes.rbegin());
  if (!sweep.sizes.contains(v.size_bytes)) {
    throw UsageError(fmt::format("--size {}: the sweep measured {}", v.size_bytes, fmt::join(sweep.sizes, ", ")));
  }
  v.in_place = !sweep.has_out_of_place;
  for (const auto& run : runs) {
    v.files.push_back(run.path);
  }
  const std::set<std::string> hosts = fleet_hosts(runs);
  if (hosts.size() < kMinFleetHosts) {
    throw UsageError(
        fmt::format("{} host{} ({}): a fleet verdict needs {} hosts or more (with one pair, a slow result cannot "
                    "be put on a host or on the link)",
                    hosts.size(), hosts.size() == 1 ? "" : "s", fmt::join(hosts, ", "), kMinFleetHosts));
  }
  if (sweep.kind == "hosts") {
    detail::judge_groups(runs, latency, options.best, hosts, v);
    return v;
  }
  v.lanes = lanes_of(runs);
  auto pairs = collect_pairs(runs, v.size_bytes, v.in_place, latency, options.best, v.lanes);
  check_complete(pairs, hosts, v.lanes);
  for (auto& [key, p] : pairs) {
    v.pairs.push_back(std::move(p));
  }
  for (int lane = 0; lane < v.lanes; ++lane) {
    std::vector<FleetPair*> mine;
    for (auto& p : v.pairs) {
      if (p.lane == lane) {
        mine.push_back(&p);
      }
    }
    const auto reference = lane_reference(mine, hosts);
    v.reference.push_back(reference);
    auto judged = judge_lane(mine, hosts, lane, reference, v);
    v.hosts.insert(v.hosts.end(), judged.begin(), judged.end());
  }
  return v;
}

}  // namespace ccbench::report
