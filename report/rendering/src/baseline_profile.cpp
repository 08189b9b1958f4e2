// ccbench-report baseline's outputs: the learned profile (profiles/README.md's format, version 1.2.0) and the
// summary the terminal shows. Nothing is decided here: the floors and who was left out come from learn_baseline.
#include "ccbench/report/baseline_profile.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace ccbench::report {

namespace {

using nlohmann::ordered_json;

constexpr const char* kSourceKey = "fleet";

std::string gbps(double value) { return fmt::format("{:.4g}", value); }

std::string method_text(const BaselineOptions& o) {
  return fmt::format(
      "per check, each host's busbw (the lowest of its groups; the median of its runs); centre: their median; "
      "spread: {} x MAD (median absolute deviation), at least {:g}% of the median; hosts more than {:g} spreads from "
      "the median left out and the rest refitted; floor: {:g} spreads below the refitted median, rounded down to 4 "
      "digits; a check with fewer than {} hosts, or without a majority kept, gets no floor",
      kMadToSigma, o.min_spread_pct, o.k, o.k, o.min_hosts);
}

ordered_json host_json(const HostFigure& h) {
  return ordered_json{{"host", h.host}, {"GBps", h.GBps}, {"spreads", h.spreads}};
}

ordered_json select_json(const BaselineKey& key) {
  ordered_json s{{"benchmark", key.benchmark}, {"backend", key.backend}, {"op", key.op}, {"dtype", key.dtype}};
  if (!key.redop.empty()) {
    s["redop"] = key.redop;
  }
  s["in_place"] = key.in_place;
  s["group"] = key.group;
  s["ranks"] = key.ranks;
  s["nodes"] = key.nodes;
  return s;
}

std::string left_out_text(const LearnedCheck& c) {
  std::vector<std::string> parts;
  for (const auto& h : c.left_out) {
    parts.push_back(fmt::format("{} at {} GB/s ({:+.1f} spreads)", h.host, gbps(h.GBps), h.spreads));
  }
  return parts.empty() ? std::string("none") : fmt::format("{}", fmt::join(parts, "; "));
}

ordered_json check_json(const LearnedCheck& c, const BaselineOptions& o) {
  return ordered_json{
      {"id", c.id},
      {"kind", "busbw"},
      {"description", fmt::format("{} busbw >= {} GB/s in every group (learned from {} hosts)", describe(c.key),
                                  gbps(c.floor_GBps), c.fit.n)},
      {"select", select_json(c.key)},
      {"size", c.key.size_bytes},
      {"min_GBps", c.floor_GBps},
      {"source", kSourceKey},
      {"note",
       fmt::format("median {} GB/s of {} hosts, spread {} GB/s ({}), floor {:g} spreads below: {:.1f}% of the "
                   "median; left out: {}",
                   gbps(c.fit.centre), c.fit.n, gbps(c.fit.spread),
                   c.fit.spread_from_floor ? fmt::format("{:g}% of the median: the MAD was smaller", o.min_spread_pct)
                                           : fmt::format("{} x MAD {}", kMadToSigma, gbps(c.fit.mad)),
                   o.k, 100 * c.floor_GBps / c.fit.centre, left_out_text(c))}};
}

ordered_json fit_json(const LearnedCheck& c) {
  ordered_json hosts = ordered_json::array();
  for (const auto& h : c.hosts) {
    hosts.push_back(host_json(h));
  }
  ordered_json left = ordered_json::array();
  for (const auto& h : c.left_out) {
    left.push_back(host_json(h));
  }
  return ordered_json{{"id", c.id},
                      {"centre_GBps", c.fit.centre},
                      {"mad_GBps", c.fit.mad},
                      {"spread_GBps", c.fit.spread},
                      {"spread_from", c.fit.spread_from_floor ? "min_spread_pct" : "mad"},
                      {"floor_GBps", c.floor_GBps},
                      {"hosts_kept", c.fit.n},
                      {"first_fit",
                       {{"centre_GBps", c.first.centre},
                        {"mad_GBps", c.first.mad},
                        {"spread_GBps", c.first.spread},
                        {"hosts", c.first.n}}},
                      {"hosts", hosts},
                      {"left_out", left}};
}

}  // namespace

ordered_json baseline_profile(const Baseline& b, const std::string& id, const std::string& name) {
  const auto& p = b.provenance;
  const auto& o = b.options;
  ordered_json checks = ordered_json::array();
  ordered_json fits = ordered_json::array();
  for (const auto& c : b.checks) {
    checks.push_back(check_json(c, o));
    fits.push_back(fit_json(c));
  }
  ordered_json not_learned = ordered_json::array();
  for (const auto& n : b.not_learned) {
    not_learned.push_back({{"id", n.id}, {"what", describe(n.key)}, {"hosts", n.hosts}, {"reason", n.reason}});
  }
  const std::string span =
      fmt::format("{} .. {}", p.from_utc.empty() ? "?" : p.from_utc, p.to_utc.empty() ? "?" : p.to_utc);
  ordered_json doc{
      {"profile", "ccbench.accept"},
      {"profile_version", kBaselineProfileVersion},
      {"id", id},
      {"name", name},
      {"description",
       fmt::format("Learned by ccbench-report baseline from {} results of {} hosts ({}): each busbw floor is where the "
                   "fleet's own results put it, not a published number. Judge a node with: ccbench-report accept "
                   "RESULTS --profile THIS_FILE. /baseline says where every floor came from and which hosts were left "
                   "out of it.",
                   p.results, p.hosts.size(), span)},
      {"sources",
       {{kSourceKey,
         {{"title",
           fmt::format("ccbench-report baseline over {} results of {} hosts, {}", p.results, p.hosts.size(), span)},
          {"says",
           fmt::format("the hosts' busbw per check, listed in /baseline/checks; hosts: {}", fmt::join(p.hosts, "; "))},
          {"note", method_text(o)}}}}},
      {"checks", checks},
      {"baseline",
       {{"tool", "ccbench-report baseline"},
        {"method",
         {{"centre", "median"},
          {"spread", fmt::format("{} x MAD, at least min_spread_pct of the median", kMadToSigma)},
          {"outliers", "beyond k spreads of the first fit's median, either side; then refitted without them"},
          {"floor", "refitted median - k x refitted spread, rounded down to 4 significant digits"},
          {"k", o.k},
          {"min_hosts", o.min_hosts},
          {"min_spread_pct", o.min_spread_pct}}},
        {"results", p.results},
        {"files", p.files},
        {"hosts", p.hosts},
        {"from_utc", p.from_utc},
        {"to_utc", p.to_utc},
        {"software", {{"ccbench", p.tool_version}, {"libraries", p.libraries}, {"variables", p.variables}}},
        {"checks", fits},
        {"not_learned", not_learned}}}};
  return doc;
}

std::string baseline_summary(const Baseline& b, const std::string& written_to) {
  const auto& p = b.provenance;
  std::string out = fmt::format("baseline: {} results of {} hosts ({} .. {}), ccbench {}", p.results, p.hosts.size(),
                                p.from_utc, p.to_utc, p.tool_version);
  for (const auto& [lib, version] : p.libraries) {
    if (lib != "backend_choice") {  // how --backend auto chose: no library
      out += fmt::format(", {} {}", lib, version);
    }
  }
  out += fmt::format("\nrule: {}\n", method_text(b.options));
  for (const auto& c : b.checks) {
    out +=
        fmt::format("{}: floor {} GB/s = median {} - {:g} x spread {} ({:.1f}% of the median; {} of {} hosts kept)\n",
                    c.id, gbps(c.floor_GBps), gbps(c.fit.centre), b.options.k, gbps(c.fit.spread),
                    100 * c.floor_GBps / c.fit.centre, c.fit.n, c.hosts.size());
    for (const auto& h : c.left_out) {
      out += fmt::format("  left out: {} at {} GB/s, {:+.1f} spreads from the median of all {} ({} GB/s)\n", h.host,
                         gbps(h.GBps), h.spreads, c.first.n, gbps(c.first.centre));
    }
    for (const auto& h : c.hosts) {
      out += fmt::format("  {} {} GB/s\n", h.host, gbps(h.GBps));
    }
  }
  for (const auto& n : b.not_learned) {
    out +=
        fmt::format("not learned: {} ({}): {}; hosts: {}\n", n.id, describe(n.key), n.reason, fmt::join(n.hosts, ", "));
  }
  out += fmt::format("profile written: {} ({} check{}, {} not learned)\n", written_to, b.checks.size(),
                     b.checks.size() == 1 ? "" : "s", b.not_learned.size());
  return out;
}

}  // namespace ccbench::report
