// One lane of the fleet verdict: its level, its pairs scored against it, and the findings it gives (a SPLIT, BAD
// HOSTs, pairs faster than their link's spec, pairs that cannot tell the host from the link). Called per lane by
// evaluate_fleet (fleet.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ccbench/report/devices.hpp"
#include "fleet_internal.hpp"

namespace ccbench::report::detail {

namespace {

constexpr std::size_t kMinPairsToName = 2;  // a host is named on 2 pairs with unnamed hosts at least

/// Union-find over the hosts of a lane.
class Parts {
 public:
  explicit Parts(std::size_t n) : m_parent(n) { std::iota(m_parent.begin(), m_parent.end(), std::size_t{0}); }
  std::size_t root(std::size_t x) {
    while (m_parent[x] != x) {
      m_parent[x] = m_parent[m_parent[x]];
      x = m_parent[x];
    }
    return x;
  }
  void join(std::size_t a, std::size_t b) { m_parent[root(a)] = root(b); }

 private:
  std::vector<std::size_t> m_parent;
};

/// Two parts or more of 2 hosts or more, joined by the pairs that are not LOW: a SPLIT; marks the LOW pairs
/// between its parts.
void find_split(Lane& lane, const Judged& hosts, FleetVerdict& v) {
  Parts parts(hosts.names.size());
  for (std::size_t i = 0; i < lane.pairs.size(); ++i) {
    if (!v.pairs[lane.pairs[i]].low) {
      parts.join(lane.a[i], lane.b[i]);
    }
  }
  std::map<std::size_t, std::vector<std::string>> members;
  for (std::size_t h = 0; h < hosts.names.size(); ++h) {
    members[parts.root(h)].push_back(hosts.names[h]);
  }
  std::vector<std::size_t> big;
  for (const auto& [root, names] : members) {
    if (names.size() >= 2) {
      big.push_back(root);
    }
  }
  if (big.size() < 2) {
    return;
  }
  FleetSplit split;
  split.lane = lane.lane;
  std::vector<double> scores;
  for (std::size_t i = 0; i < lane.pairs.size(); ++i) {
    const std::size_t ra = parts.root(lane.a[i]);
    const std::size_t rb = parts.root(lane.b[i]);
    auto& p = v.pairs[lane.pairs[i]];
    if (ra != rb && members[ra].size() >= 2 && members[rb].size() >= 2) {
      p.across_split = true;
      ++split.pairs_across;
      if (p.value) {
        scores.push_back(p.score);
      }
    }
  }
  for (const std::size_t root : big) {
    split.parts.push_back(members[root]);
  }
  if (!scores.empty()) {
    split.median_across = detail::median_of(scores);
  }
  v.splits.push_back(std::move(split));
}

/// Names the BAD HOSTs of one lane, worst first: counts kept per host and lowered as hosts are named, so a
/// sweep of 1,024 hosts takes a moment, not hours.
std::vector<bool> name_bad_hosts(const Lane& lane, const FleetVerdict& v, std::size_t n) {
  std::vector<std::size_t> considered(n, 0);
  std::vector<std::size_t> low(n, 0);
  for (std::size_t i = 0; i < lane.pairs.size(); ++i) {
    const auto& p = v.pairs[lane.pairs[i]];
    if (p.across_split) {
      continue;
    }
    for (const std::size_t h : {lane.a[i], lane.b[i]}) {
      ++considered[h];
      low[h] += p.low ? 1U : 0U;
    }
  }
  std::vector<bool> named(n, false);
  for (;;) {
    std::optional<std::size_t> worst;
    double worst_fraction = 0.5;  // more than half of its pairs
    for (std::size_t h = 0; h < n; ++h) {
      const double fraction =
          considered[h] == 0 ? 0.0 : static_cast<double>(low[h]) / static_cast<double>(considered[h]);
      if (!named[h] && considered[h] >= kMinPairsToName && fraction > worst_fraction) {
        worst = h;
        worst_fraction = fraction;
      }
    }
    if (!worst) {
      return named;
    }
    named[*worst] = true;
    for (const std::size_t i : lane.of_host[*worst]) {
      const auto& p = v.pairs[lane.pairs[i]];
      const std::size_t other = lane.a[i] == *worst ? lane.b[i] : lane.a[i];
      if (!p.across_split && !named[other]) {
        --considered[other];
        low[other] -= p.low ? 1U : 0U;
      }
    }
  }
}

/// Goodness as the figure it stands for (GB/s, or us), for the notes.
double figure_of(double g, const FleetVerdict& v) { return detail::goodness(g, v.higher_is_better); }

/// The level of a lane: the fastest pairs' (`top`), unless they cannot be it. Fastest pairs whose hosts are fewer
/// than half of the lane's, and that are not a set of 3 hosts or more fine among themselves, while the rest sit
/// together lower, are no level (one machine under two names makes one pair of loopback speed): the rest's level
/// is taken, unless the anchor confirms the top (the rest below its LOW line, the top above), and those pairs are
/// marked SUSPICIOUS with a note that says so.
std::optional<double> believable_level(const Lane& lane, const Judged& hosts, std::optional<double> top,
                                       std::optional<double> anchor, FleetVerdict& v) {
  if (!top) {
    return top;
  }
  const double cut = (1.0 - v.threshold) * *top;
  const auto in_top = [&](const FleetPair& p) { return p.value && goodness(*p.value, v.higher_is_better) >= cut; };
  std::vector<bool> top_host(hosts.names.size(), false);
  std::vector<double> rest;
  std::size_t top_pairs = 0;
  for (std::size_t i = 0; i < lane.pairs.size(); ++i) {
    const auto& p = v.pairs[lane.pairs[i]];
    if (in_top(p)) {
      ++top_pairs;
      top_host[lane.a[i]] = top_host[lane.b[i]] = true;
    } else if (p.value) {
      rest.push_back(goodness(*p.value, v.higher_is_better));
    }
  }
  const auto count = [](const std::vector<bool>& flags) {
    return static_cast<std::size_t>(std::count(flags.begin(), flags.end(), true));
  };
  const auto in_lane = static_cast<std::size_t>(
      std::count_if(lane.of_host.begin(), lane.of_host.end(), [](const auto& pairs) { return !pairs.empty(); }));
  const std::size_t top_hosts = count(top_host);
  bool fine_among_themselves = top_hosts >= 3;
  for (std::size_t i = 0; i < lane.pairs.size() && fine_among_themselves; ++i) {
    fine_among_themselves = !(top_host[lane.a[i]] && top_host[lane.b[i]]) || in_top(v.pairs[lane.pairs[i]]);
  }
  if (2 * top_hosts >= in_lane || fine_among_themselves || rest.empty()) {
    return top;
  }
  const auto bulk = detail::healthy_level(rest, v.threshold);
  if (anchor && *top >= (1.0 - v.threshold) * *anchor && *bulk < (1.0 - v.threshold) * *anchor) {
    return top;  // the anchor says the fastest are where a healthy pair should be
  }
  std::vector<std::string> names;
  for (const std::size_t i : lane.pairs) {
    auto& p = v.pairs[i];
    if (in_top(p)) {
      p.suspicious = fmt::format("faster than the rest of the fleet: {:.4g} {} against its level {:.4g} {}", *p.value,
                                 v.unit, figure_of(*bulk, v), v.unit);
      names.push_back(pair_name(p.host_a, p.host_b));
    }
  }
  v.level_notes.push_back(fmt::format(
      "{}the fastest {} pair(s) ({}, at {:.4g} {}) hold {} of the {} hosts, and the rest sit together at {:.4g} {}: "
      "that is no level; the pairs are judged against the rest's, and those are SUSPICIOUS (a loopback: one machine "
      "under two names; a misplaced rank){}",
      v.lanes > 1 ? fmt::format("local rank {}: ", lane.lane) : "", top_pairs, fmt::join(names, ", "),
      figure_of(*top, v), v.unit, top_hosts, in_lane, figure_of(*bulk, v), v.unit,
      anchor ? "" : "; give --reference to say which is healthy"));
  return bulk;
}

/// A pair faster than its link's spec cannot be a measurement of that link. Where most pairs are, the spec is what
/// is wrong (a peak model that does not know this fabric): said in a note, and no pair is named for it.
void mark_faster_than_spec(const Lane& lane, FleetVerdict& v) {
  constexpr double kSlack = 1.05;  // rounding in a result's figures
  const auto over = [&](const FleetPair& p) {
    return v.higher_is_better && p.value && p.peak_GBps && *p.value > kSlack * *p.peak_GBps;
  };
  std::size_t measured = 0;
  std::size_t above = 0;
  for (const std::size_t i : lane.pairs) {
    measured += v.pairs[i].value ? 1U : 0U;
    above += over(v.pairs[i]) ? 1U : 0U;
  }
  if (2 * above > measured) {
    v.level_notes.push_back(
        fmt::format("{}{} of the {} pairs measured above their spec peak: the spec (peak_GBps) "
                    "looks low for this fabric, so no pair is named for it",
                    v.lanes > 1 ? fmt::format("local rank {}: ", lane.lane) : "", above, measured));
    return;
  }
  for (const std::size_t i : lane.pairs) {
    auto& p = v.pairs[i];
    if (over(p) && p.suspicious.empty()) {
      p.suspicious = fmt::format("faster than its link can go: {:.4g} GB/s over the spec peak {:.4g} GB/s", *p.value,
                                 *p.peak_GBps);
    }
  }
}

/// LOW pairs that are not explained, one of whose hosts has no other measured pair in the lane: one pair cannot
/// tell the host from the link.
void mark_cannot_tell(const Lane& lane, FleetVerdict& v) {
  std::vector<std::size_t> measured(lane.of_host.size(), 0);
  for (std::size_t i = 0; i < lane.pairs.size(); ++i) {
    if (v.pairs[lane.pairs[i]].value) {
      ++measured[lane.a[i]];
      ++measured[lane.b[i]];
    }
  }
  for (std::size_t i = 0; i < lane.pairs.size(); ++i) {
    auto& p = v.pairs[lane.pairs[i]];
    const std::size_t others = p.value ? 1 : 0;  // this pair itself, when it measured
    p.cannot_tell = p.low && !p.across_split && p.explained_by.empty() &&
                    (measured[lane.a[i]] <= others || measured[lane.b[i]] <= others);
  }
}

}  // namespace

void judge_lane(Lane& lane, const Judged& hosts, const FleetSweep& sweep, const FleetOptions& options,
                FleetVerdict& v) {
  std::vector<double> values;
  std::vector<double> peaks;
  for (const std::size_t i : lane.pairs) {
    if (v.pairs[i].value) {
      values.push_back(goodness(*v.pairs[i].value, v.higher_is_better));
    }
  }
  const auto top = detail::healthy_level(values, v.threshold);
  std::size_t unknown = 0;
  for (const std::size_t i : lane.pairs) {  // the spec peaks of the pairs near the top
    const auto& p = v.pairs[i];
    if (p.value && !p.peak_GBps) {
      ++unknown;
    } else if (p.value && goodness(*p.value, v.higher_is_better) >= (1.0 - v.threshold) * *top) {
      peaks.push_back(*p.peak_GBps);
    }
  }
  const auto anchor = detail::anchor_of(v, options, peaks, unknown, values.size());
  const auto level = believable_level(lane, hosts, top, anchor, v);
  mark_faster_than_spec(lane, v);
  const auto reference = detail::set_reference(v, level, anchor, options.reference.has_value());
  for (const std::size_t i : lane.pairs) {
    auto& p = v.pairs[i];
    if (p.value && reference) {
      p.score = goodness(*p.value, v.higher_is_better) / *reference;
    }
    p.low = !p.value || p.score < 1.0 - v.threshold;
  }
  find_split(lane, hosts, v);
  const std::vector<bool> named = name_bad_hosts(lane, v, hosts.names.size());
  for (std::size_t i = 0; i < lane.pairs.size(); ++i) {
    auto& p = v.pairs[lane.pairs[i]];
    if (p.low && !p.across_split) {
      p.explained_by = named[lane.a[i]] ? p.host_a : named[lane.b[i]] ? p.host_b : "";
    }
  }
  mark_cannot_tell(lane, v);
  for (std::size_t h = 0; h < hosts.names.size(); ++h) {
    FleetHost host;
    host.name = hosts.names[h];
    host.lane = lane.lane;
    host.bad = named[h];
    std::vector<double> scores;
    for (const std::size_t i : lane.of_host[h]) {
      const auto& p = v.pairs[lane.pairs[i]];
      ++host.pairs;
      host.low += p.low ? 1U : 0U;
      if (p.value && reference) {
        scores.push_back(p.score);
      }
      host.rank = lane.a[i] == h ? p.rank_a : p.rank_b;
    }
    if (!lane.of_host[h].empty()) {  // named from the topology of the file of its first pair
      const auto& doc = sweep.files().at(v.pairs[lane.pairs[lane.of_host[h].front()]].file).head.doc;
      host.device = detail::device_label(detail::topology_host(doc, host.name), lane.lane, true);
    }
    if (!scores.empty()) {
      host.median_score = detail::median_of(scores);
    }
    v.hosts.push_back(std::move(host));
  }
}

}  // namespace ccbench::report::detail
