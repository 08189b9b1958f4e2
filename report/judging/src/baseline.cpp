// ccbench-report baseline: an acceptance profile's busbw floors learned from a fleet's own results
// (docs/baseline.md). Results are grouped by what a profile's busbw check selects; each host gets one figure per
// check; the figures are fitted robustly, outliers named and left out, and the floor set below the refitted centre.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ccbench/collective.hpp"
#include "ccbench/errors.hpp"
#include "ccbench/report/baseline.hpp"
#include "ccbench/text.hpp"

namespace ccbench::report {

namespace {

/// The host a row's group spans: its hosts in name order joined by ','; the run's hosts where the row names none.
std::string host_of(const CaseResult& r, const ResultDocument& doc) {
  std::set<std::string> names(r.group_hosts.begin(), r.group_hosts.end());
  if (names.empty()) {
    for (const auto& h : doc.environment.hosts) {
      names.insert(h.hostname);
    }
  }
  return fmt::format("{}", fmt::join(names, ","));
}

BaselineKey key_from(const CaseResult& r) {
  const auto& coll = info(r.spec.collective);
  BaselineKey key;
  key.benchmark = r.benchmark;
  key.backend = r.backend;
  key.op = std::string(coll.name);
  key.dtype = std::string(name(r.spec.dtype));
  key.redop = coll.has_reduce_op ? std::string(name(r.spec.op)) : std::string();
  key.in_place = r.spec.in_place;
  key.group = r.group;
  key.ranks = r.ranks;
  key.nodes = r.nodes;
  key.size_bytes = r.size_bytes;
  return key;
}

std::string short_size(std::uint64_t bytes) {
  for (const auto& [shift, unit] : {std::pair{30, 'G'}, std::pair{20, 'M'}, std::pair{10, 'K'}}) {
    if (bytes >= (std::uint64_t{1} << shift) && bytes % (std::uint64_t{1} << shift) == 0) {
      return fmt::format("{}{}", bytes >> shift, unit);
    }
  }
  return std::to_string(bytes);
}

/// One result and the others must be of one kind: the same libraries (GPU model, NCCL, CUDA, MPI), ccbench and
/// communication variables. Returns what differs, or "".
std::string kind_difference(const ResultDocument& a, const ResultDocument& b) {
  if (a.run.tool_version != b.run.tool_version) {
    return fmt::format("ccbench {} vs {}", a.run.tool_version, b.run.tool_version);
  }
  const auto differ = [](std::string_view what, const std::map<std::string, std::string>& x,
                         const std::map<std::string, std::string>& y) -> std::string {
    std::set<std::string> keys;
    for (const auto& kv : x) {
      keys.insert(kv.first);
    }
    for (const auto& kv : y) {
      keys.insert(kv.first);
    }
    for (const auto& k : keys) {
      const auto ix = x.find(k);
      const auto iy = y.find(k);
      const std::string vx = ix == x.end() ? std::string("(none)") : '"' + ix->second + '"';
      const std::string vy = iy == y.end() ? std::string("(none)") : '"' + iy->second + '"';
      if (vx != vy) {
        return fmt::format("{} {}: {} vs {}", what, k, vx, vy);
      }
    }
    return {};
  };
  auto libraries_a = a.environment.libraries;
  auto libraries_b = b.environment.libraries;
  libraries_a.erase("backend_choice");  // how --backend auto chose, not a library: the backend is in each check
  libraries_b.erase("backend_choice");
  if (auto d = differ("library", libraries_a, libraries_b); !d.empty()) {
    return d;
  }
  return differ("variable", a.environment.variables, b.environment.variables);
}

void refuse_mixed_kinds(const std::vector<LoadedRun>& runs) {
  for (const auto& run : runs) {
    if (const auto d = kind_difference(runs.front().doc, run.doc); !d.empty()) {
      throw UsageError(
          fmt::format("baseline: {} and {} are results of different kinds ({}): learn each kind on its "
                      "own, never one floor for both",
                      runs.front().path, run.path, d));
    }
  }
}

/// The floor as a profile writes it: 4 significant digits, rounded down (never above what the fit gave).
double round_down(double value) {
  if (!(value > 0)) {
    return value;
  }
  double r = std::stod(fmt::format("{:.4g}", value));
  if (r > value) {
    const double step = std::pow(10.0, std::floor(std::log10(value)) - 3);
    r = std::stod(fmt::format("{:.4g}", r - step));
  }
  return r;
}

struct Evidence {
  std::map<BaselineKey, std::map<std::string, std::vector<double>>> figures;  // key -> host -> a figure per result
  std::map<BaselineKey, std::pair<std::string, std::string>> settings;        // key -> (timing and variant, file)
};

Evidence gather(const std::vector<LoadedRun>& runs) {
  Evidence e;
  for (const auto& run : runs) {
    std::map<std::pair<BaselineKey, std::string>, double> lowest;  // this run's lowest busbw per check and host
    for (const auto& r : run.doc.results) {
      if (r.status != CaseStatus::Ok || !(r.busbw_GBps > 0)) {
        continue;  // a row that did not measure is no figure: its host is counted only where it measured
      }
      const BaselineKey key = key_from(r);
      // What the rows of one check must share beyond their key: the timing, the variant, and the peak (the GPU or
      // link model: an imported log records no library, but its peak names the GPU).
      const std::string setting =
          fmt::format("timing {}{}, peak {}", name(r.timing), r.variant == "ring" ? " ring" : "",
                      r.peak_GBps ? fmt::format("{:g} GB/s: {}", *r.peak_GBps, r.peak_basis) : std::string("unknown"));
      const auto [it, fresh] = e.settings.emplace(key, std::pair{setting, run.path});
      if (!fresh && it->second.first != setting) {
        throw UsageError(
            fmt::format("baseline: {} and {} are results of different kinds: {} with {} vs {}: learn "
                        "each kind on its own, never one floor for both",
                        it->second.second, run.path, describe(key), it->second.first, setting));
      }
      const auto slot = std::pair{key, host_of(r, run.doc)};
      const auto found = lowest.find(slot);
      lowest[slot] = found == lowest.end() ? r.busbw_GBps : std::min(found->second, r.busbw_GBps);
    }
    for (const auto& [slot, value] : lowest) {
      e.figures[slot.first][slot.second].push_back(value);
    }
  }
  return e;
}

/// The keys to learn: those at the sizes asked for, else each bench's (and group's, placement's) largest size.
std::vector<BaselineKey> chosen_keys(const Evidence& e, const std::vector<std::uint64_t>& sizes) {
  std::vector<BaselineKey> keys;
  if (!sizes.empty()) {
    for (const auto size : sizes) {
      const auto before = keys.size();
      for (const auto& kv : e.figures) {
        if (kv.first.size_bytes == size) {
          keys.push_back(kv.first);
        }
      }
      if (keys.size() == before) {
        throw UsageError(fmt::format("baseline: --size {}: no result measured that size", short_size(size)));
      }
    }
    std::sort(keys.begin(), keys.end());
    return keys;
  }
  std::map<BaselineKey, BaselineKey> largest;  // the key without its size -> the key at its largest size
  for (const auto& kv : e.figures) {
    BaselineKey sizeless = kv.first;
    sizeless.size_bytes = 0;
    auto& best = largest[sizeless];
    if (kv.first.size_bytes > best.size_bytes) {
      best = kv.first;
    }
  }
  for (const auto& kv : largest) {
    keys.push_back(kv.second);
  }
  return keys;
}

Provenance provenance_of(const std::vector<LoadedRun>& runs) {
  Provenance p;
  p.results = runs.size();
  const auto& first = runs.front().doc;
  p.tool_version = first.run.tool_version;
  p.libraries = first.environment.libraries;
  p.variables = first.environment.variables;
  for (const auto& run : runs) {
    p.files.push_back(run.path);
    const auto& started = run.doc.run.started_utc;
    const auto& ended = run.doc.run.ended_utc.empty() ? started : run.doc.run.ended_utc;
    if (!started.empty() && (p.from_utc.empty() || started < p.from_utc)) {
      p.from_utc = started;
    }
    if (!ended.empty() && ended > p.to_utc) {
      p.to_utc = ended;
    }
  }
  return p;
}

/// Fits one check; a NotLearned reason instead where the evidence does not support a floor.
std::variant<LearnedCheck, NotLearned> learn_check(const BaselineKey& key,
                                                   const std::map<std::string, std::vector<double>>& by_host,
                                                   const BaselineOptions& o) {
  LearnedCheck c;
  c.key = key;
  c.id = check_id(key);
  std::vector<double> values;
  for (const auto& [host, figures] : by_host) {
    c.hosts.push_back({host, median_of(figures), 0});
    values.push_back(c.hosts.back().GBps);
  }
  NotLearned no{key, c.id, {}, {}};
  for (const auto& h : c.hosts) {
    no.hosts.push_back(h.host);
  }
  if (static_cast<int>(c.hosts.size()) < o.min_hosts) {
    no.reason = fmt::format("{} host{} with a result, at least {} needed (--min-hosts)", c.hosts.size(),
                            c.hosts.size() == 1 ? "" : "s", o.min_hosts);
    return no;
  }
  const double fraction = o.min_spread_pct / 100;
  c.first = robust_fit(values, fraction);
  std::vector<double> kept;
  for (auto& h : c.hosts) {
    h.spreads = (h.GBps - c.first.centre) / c.first.spread;
    if (std::abs(h.spreads) > o.k) {
      c.left_out.push_back(h);
    } else {
      kept.push_back(h.GBps);
    }
  }
  if (kept.size() * 2 <= c.hosts.size()) {
    no.reason = fmt::format("{} of {} hosts beyond {:g} spreads of the median: no majority to learn from",
                            c.left_out.size(), c.hosts.size(), o.k);
    return no;
  }
  c.fit = robust_fit(kept, fraction);
  c.floor_GBps = round_down(c.fit.centre - o.k * c.fit.spread);
  if (!(c.floor_GBps > 0)) {
    no.reason = fmt::format("the hosts spread too far for a floor (centre {:.4g} GB/s, spread {:.4g})", c.fit.centre,
                            c.fit.spread);
    return no;
  }
  return c;
}

}  // namespace

std::string check_id(const BaselineKey& key) {
  std::string bench = key.benchmark;
  if (bench.size() > 6 && bench.ends_with("_bench")) {
    bench.resize(bench.size() - 6);
  }
  std::string id =
      fmt::format("{}-{}{}-{}-{}-{}r-{}n-busbw-{}", bench, key.dtype, key.redop.empty() ? "" : "-" + key.redop,
                  key.in_place ? "in" : "out", key.group, key.ranks, key.nodes, short_size(key.size_bytes));
  std::replace_if(
      id.begin(), id.end(),
      [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) == 0 && ch != '.' && ch != '_' && ch != '-'; },
      '_');
  return id;
}

std::string describe(const BaselineKey& key) {
  return fmt::format("{} {} {}{} {} group {} of {} ranks on {} node{} at {}", key.benchmark, key.backend, key.dtype,
                     key.redop.empty() ? "" : " " + key.redop, key.in_place ? "in-place" : "out-of-place", key.group,
                     key.ranks, key.nodes, key.nodes == 1 ? "" : "s", format_size(key.size_bytes, SizeStyle::Binary));
}

Baseline learn_baseline(const std::vector<LoadedRun>& runs, const BaselineOptions& options) {
  if (runs.empty()) {
    throw UsageError("baseline: no result given");
  }
  refuse_mixed_kinds(runs);
  const Evidence evidence = gather(runs);
  const auto keys = chosen_keys(evidence, options.sizes);
  Baseline b;
  b.options = options;
  b.provenance = provenance_of(runs);
  std::set<std::string> hosts;
  for (const auto& key : keys) {
    for (const auto& kv : evidence.figures.at(key)) {
      hosts.insert(kv.first);
    }
  }
  if (static_cast<int>(hosts.size()) < options.min_hosts) {
    throw UsageError(
        fmt::format("baseline: {} host{} in the results ({}), at least {} needed (--min-hosts): a floor "
                    "from fewer is a guess",
                    hosts.size(), hosts.size() == 1 ? "" : "s", fmt::join(hosts, "; "), options.min_hosts));
  }
  b.provenance.hosts.assign(hosts.begin(), hosts.end());
  for (const auto& key : keys) {
    auto learned = learn_check(key, evidence.figures.at(key), options);
    if (auto* c = std::get_if<LearnedCheck>(&learned)) {
      b.checks.push_back(std::move(*c));
    } else {
      b.not_learned.push_back(std::get<NotLearned>(std::move(learned)));
    }
  }
  if (b.checks.empty()) {
    std::vector<std::string> why;
    for (const auto& n : b.not_learned) {
      why.push_back(fmt::format("{}: {}", n.id, n.reason));
    }
    throw UsageError(fmt::format("baseline: no check could be learned ({})", fmt::join(why, "; ")));
  }
  return b;
}

}  // namespace ccbench::report
