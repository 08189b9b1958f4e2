// Fleet printers: the verdict lines and the host and pair tables (terminal, Markdown), CSV, JSON and JUnit XML.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ccbench/report/fleet.hpp"
#include "ccbench/report/text.hpp"
#include "ccbench/report/verdict_text.hpp"
#include "renderers.hpp"
#include "text_table.hpp"

namespace ccbench::report {

namespace {

std::string host_label(const FleetHost& h, int lanes) { return h.name + lane_suffix(h.lane, lanes); }

std::string link_label(const FleetPair& p, int lanes) {
  return pair_name(p.host_a, p.host_b) + lane_suffix(p.lane, lanes);
}

std::string pct(std::optional<double> score) { return score ? fmt::format("{:.0f}%", 100.0 * *score) : "-"; }

std::string figure_text(std::optional<double> value, const std::string& unit) {
  return value ? fmt::format("{:.4g} {}", *value, unit) : std::string{"none"};
}

std::string value_text(const FleetPair& p) { return p.value ? fmt::format("{:.4g}", *p.value) : p.status; }

std::string devices_text(const std::string& device) { return device.empty() ? "" : ", " + device; }

std::string unit_noun(const FleetVerdict& v) { return v.grouped() ? "groups" : "pairs"; }

std::string lane_prefix(int lane, int lanes) { return lanes > 1 ? fmt::format(" (local rank {})", lane) : ""; }

const FleetHost* host_of(const FleetVerdict& v, const std::string& name, int lane) {
  const auto it = std::find_if(v.hosts.begin(), v.hosts.end(),
                               [&](const FleetHost& h) { return h.name == name && h.lane == lane; });
  return it == v.hosts.end() ? nullptr : &*it;
}

std::string group_line(const FleetVerdict& v, const FleetGroup& g) {
  return fmt::format("LOW GROUP {} ({}; ranks {}): {} {} = {} of the reference; no host in it is LOW in every group",
                     g.id, fmt::join(g.hosts, ", "), fmt::join(g.ranks, ","),
                     g.value ? fmt::format("{:.4g}", *g.value) : g.status, g.value ? v.unit : "",
                     pct(g.of_reference()));
}

std::string fleet_low_line(const FleetVerdict& v, std::size_t lane) {
  const double level = *v.level[lane];
  const double anchor = *v.anchor[lane];
  const double share = v.higher_is_better ? level / anchor : anchor / level;
  return fmt::format(
      "FLEET LOW{}: the level {} is {:.0f}% of the anchor {} ({}): every {} is slow, so the data cannot put it on a "
      "host; look at what they all share (a setting, the firmware, a switch, the link rate)",
      lane_prefix(static_cast<int>(lane), v.lanes), figure_text(level, v.unit), 100.0 * share,
      figure_text(anchor, v.unit), v.anchor_basis, v.grouped() ? "group" : "pair");
}

std::string split_line(const FleetVerdict& v, const FleetSplit& s) {
  std::vector<std::string> parts;
  for (const auto& part : s.parts) {
    parts.push_back(fmt::format("{{{}}}", fmt::join(part, ", ")));
  }
  return fmt::format(
      "SPLIT{}: {} parts fine inside and LOW between them: {}; {} pairs across, median {} of the reference: a path "
      "the parts share (a switch, its uplink, a spine), not one host",
      lane_prefix(s.lane, v.lanes), s.parts.size(), fmt::join(parts, " | "), s.pairs_across, pct(s.median_across));
}

std::string bad_host_line(const FleetVerdict& v, const FleetHost& h) {
  return fmt::format("BAD HOST {}: rank {}{}; {} of {} {} LOW, median {} of the reference", host_label(h, v.lanes),
                     h.rank, devices_text(h.device), h.low, h.pairs, unit_noun(v), pct(h.median_score));
}

/// "n2<->n3: ranks 2 and 3 (devices); 0.5 GB/s = 50% of the reference": what a line about one pair begins with.
std::string pair_head(const FleetVerdict& v, const FleetPair& p) {
  const FleetHost* a = host_of(v, p.host_a, p.lane);
  const FleetHost* b = host_of(v, p.host_b, p.lane);
  const std::string figure =
      p.value ? fmt::format("{} {} = {} of the reference", value_text(p), v.unit, pct(p.of_reference()))
              : fmt::format("did not measure ({})", p.status);
  return fmt::format("{}: ranks {} and {}{}{}; {}", link_label(p, v.lanes), p.rank_a, p.rank_b,
                     devices_text(a != nullptr ? a->device : ""), devices_text(b != nullptr ? b->device : ""), figure);
}

std::string bad_link_line(const FleetVerdict& v, const FleetPair& p) {
  return fmt::format("BAD LINK {}; {} is fine elsewhere (median {}), {} too (median {})", pair_head(v, p), p.host_a,
                     pct(p.elsewhere_a), p.host_b, pct(p.elsewhere_b));
}

std::string cannot_tell_line(const FleetVerdict& v, const FleetPair& p) {
  return fmt::format(
      "CANNOT TELL {}; {} has no other pair measured: one pair cannot tell the host from the link (measure its other "
      "pairs)",
      pair_head(v, p), p.alone);
}

std::string suspicious_line(const FleetVerdict& v, const FleetPair& p) {
  return fmt::format("SUSPICIOUS {}: ranks {} and {}; {}", link_label(p, v.lanes), p.rank_a, p.rank_b,
                     printable(p.suspicious));
}

}  // namespace

std::vector<std::string> fleet_verdict_lines(const FleetVerdict& v) {
  std::vector<std::string> lines;
  for (std::size_t lane = 0; lane < v.fleet_low.size(); ++lane) {
    if (v.fleet_low[lane]) {
      lines.push_back(fleet_low_line(v, lane));
    }
  }
  for (const auto& s : v.splits) {
    lines.push_back(split_line(v, s));
  }
  for (const FleetHost* h : v.bad_hosts()) {
    lines.push_back(bad_host_line(v, *h));
  }
  for (const FleetGroup* g : v.low_groups()) {
    lines.push_back(group_line(v, *g));
  }
  for (const FleetPair* p : v.bad_links()) {
    lines.push_back(bad_link_line(v, *p));
  }
  for (const FleetPair* p : v.cannot_tell()) {
    lines.push_back(cannot_tell_line(v, *p));
  }
  for (const FleetPair* p : v.suspicious()) {
    lines.push_back(suspicious_line(v, *p));
  }
  for (const auto& finding : fleet_evidence(v)) {
    lines.push_back("evidence: " + finding);
  }
  return lines;
}

std::vector<std::string> fleet_evidence(const FleetVerdict& v) {
  std::vector<std::string> named;
  for (const FleetHost* h : v.bad_hosts()) {
    named.push_back(h->name);
  }
  for (const auto& list : {v.bad_links(), v.cannot_tell()}) {
    for (const FleetPair* p : list) {
      named.push_back(p->host_a);
      named.push_back(p->host_b);
    }
  }
  for (const FleetGroup* g : v.low_groups()) {
    named.insert(named.end(), g->hosts.begin(), g->hosts.end());
  }
  std::vector<const HostFabric*> hosts;
  for (const auto& h : v.fabric) {
    hosts.push_back(&h);
  }
  std::stable_partition(hosts.begin(), hosts.end(), [&named](const HostFabric* h) {
    return std::find(named.begin(), named.end(), h->host) != named.end();
  });
  std::vector<std::string> out;
  for (const HostFabric* h : hosts) {
    for (auto& finding : fabric_findings({*h})) {
      if (std::find(out.begin(), out.end(), finding) == out.end()) {
        out.push_back(std::move(finding));
      }
    }
  }
  return out;
}

namespace {

std::string summary_line(const FleetVerdict& v) {
  const auto hosts = v.bad_hosts().size();
  const auto links = v.bad_links().size();
  const auto groups = v.low_groups().size();
  const std::size_t judged = v.grouped() ? v.groups.size() : v.pairs.size();
  if (!v.anything_named()) {
    return fmt::format("nothing named: {} {}, every one within {:g}% of the reference\n", judged, unit_noun(v),
                       100.0 * v.threshold);
  }
  std::string whole;
  if (v.any_fleet_low()) {
    whole += "the fleet LOW as a whole, ";
  }
  if (!v.splits.empty()) {
    whole += fmt::format("{} split{}, ", v.splits.size(), v.splits.size() == 1 ? "" : "s");
  }
  if (v.grouped()) {
    return fmt::format("{}{} bad host{}, {} low group{} (of {} groups)\n", whole, hosts, hosts == 1 ? "" : "s", groups,
                       groups == 1 ? "" : "s", judged);
  }
  return fmt::format("{}{} bad host{}, {} bad link{} (of {} pairs)\n", whole, hosts, hosts == 1 ? "" : "s", links,
                     links == 1 ? "" : "s", judged);
}

}  // namespace

std::string fleet_reference_text(const FleetVerdict& v) {
  std::vector<std::string> parts;
  for (std::size_t lane = 0; lane < v.reference.size(); ++lane) {
    const std::string text = fmt::format("{} (level {}, anchor {})", figure_text(v.reference[lane], v.unit),
                                         figure_text(v.level[lane], v.unit), figure_text(v.anchor[lane], v.unit));
    parts.push_back(v.lanes > 1 ? fmt::format("local rank {}: {}", lane, text) : text);
  }
  const bool anchored = std::any_of(v.anchor.begin(), v.anchor.end(), [](const auto& a) { return a.has_value(); });
  std::string out = fmt::format("reference {}: {}; anchor: {}", v.metric, fmt::join(parts, "; "),
                                anchored ? v.anchor_basis : "none (" + v.anchor_basis + ")");
  for (const auto& note : v.level_notes) {
    out += "\nlevel: " + note;
  }
  if (v.partial && v.missing > 0) {
    out += fmt::format(
        "\npartial: {} of the {} pairs were not measured (the sweep stopped early): judged on the {} "
        "it has",
        v.missing, v.missing + v.pairs.size(), v.pairs.size());
  }
  return out;
}

namespace {

/// The pairs a table lists: all of them, or the LOW ones of a sweep too large to read row by row.
std::vector<const FleetPair*> listed_pairs(const FleetVerdict& v) {
  std::vector<const FleetPair*> out;
  const bool all = v.pairs.size() <= kFleetPairsListed;
  for (const auto& p : v.pairs) {
    if (all || p.low) {
      out.push_back(&p);
    }
  }
  return out;
}

std::string pairs_title(const FleetVerdict& v, std::size_t listed) {
  return v.pairs.size() <= kFleetPairsListed
             ? std::string{"Pairs"}
             : fmt::format("Pairs: the {} LOW of {} (every pair: --format csv or json)", listed, v.pairs.size());
}

std::string render_tables(const FleetVerdict& v, bool markdown, bool colour) {
  using detail::Align;
  const auto text = [&](const std::string& t) { return markdown ? t : printable(t); };
  detail::TextTable hosts({{"host", Align::Left},
                           {"rank", Align::Right},
                           {"devices", Align::Left},
                           {unit_noun(v), Align::Right},
                           {"LOW", Align::Right},
                           {"median", Align::Right},
                           {"verdict", Align::Left}});
  for (const auto& h : v.hosts) {
    hosts.add_row({{text(host_label(h, v.lanes))},
                   {std::to_string(h.rank)},
                   {text(h.device)},
                   {std::to_string(h.pairs)},
                   {std::to_string(h.low)},
                   {pct(h.median_score)},
                   {h.bad ? "BAD HOST" : "ok", h.bad ? "1;31" : "32"}});
  }
  detail::TextTable pairs({{"pair", Align::Left},
                           {"ranks", Align::Left},
                           {fmt::format("{} ({})", v.metric, v.unit), Align::Right},
                           {"of ref", Align::Right},
                           {"verdict", Align::Left}});
  const auto listed = listed_pairs(v);
  for (const FleetPair* p : listed) {
    const bool bad_link = p->low && !p->across_split && p->explained_by.empty();
    pairs.add_row({{text(link_label(*p, v.lanes))},
                   {fmt::format("{}-{}", p->rank_a, p->rank_b)},
                   {value_text(*p)},
                   {pct(p->of_reference())},
                   {text(p->verdict()), bad_link ? "1;31"
                                        : p->low ? "33"
                                                 : "32"}});
  }
  if (v.grouped()) {
    pairs = detail::TextTable({{"group", Align::Left},
                               {"hosts", Align::Left},
                               {fmt::format("{} ({})", v.metric, v.unit), Align::Right},
                               {"of ref", Align::Right},
                               {"verdict", Align::Left}});
    for (const auto& g : v.groups) {
      pairs.add_row({{text(g.id)},
                     {text(fmt::format("{}", fmt::join(g.hosts, ",")))},
                     {g.value ? fmt::format("{:.4g}", *g.value) : g.status},
                     {pct(g.of_reference())},
                     {g.verdict(), g.low && !g.explained ? "1;31"
                                   : g.low               ? "33"
                                                         : "32"}});
    }
  }
  const std::string title = fmt::format(
      "ccbench fleet: {}, {} hosts, {} {}, size {} {}", v.benchmark,
      v.hosts.size() / static_cast<std::size_t>(std::max(v.lanes, 1)), v.grouped() ? v.groups.size() : v.pairs.size(),
      unit_noun(v), format_size(v.size_bytes, SizeStyle::Binary), v.in_place ? "in-place" : "out-of-place");
  std::string verdicts;
  for (const auto& line : fleet_verdict_lines(v)) {
    verdicts += markdown ? "- **" + markdown_escape(line) + "**\n" : printable(line) + "\n";
  }
  const std::string table_title = v.grouped() ? std::string{"Groups"} : pairs_title(v, listed.size());
  if (markdown) {
    return fmt::format("### {}\n\nrule: {}\n\n{}\n\n{}\n{}\n#### Hosts\n\n{}\n#### {}\n\n{}", markdown_escape(title),
                       markdown_escape(v.rule()), markdown_escape(fleet_reference_text(v)), verdicts, summary_line(v),
                       hosts.markdown(), markdown_escape(table_title), pairs.markdown());
  }
  return fmt::format("{}\nrule: {}\n{}\n{}{}\n{}\n{}{}", printable(title), v.rule(), printable(fleet_reference_text(v)),
                     verdicts, summary_line(v), hosts.terminal(colour),
                     v.grouped() || listed.size() == v.pairs.size() ? "" : table_title + "\n", pairs.terminal(colour));
}

std::string testcase(const std::string& classname, const std::string& name, const std::string& failure_type,
                     const std::string& message, const std::string& body) {
  std::string out = fmt::format("    <testcase classname=\"{}\" name=\"{}\">\n", classname, xml_escape(name));
  if (failure_type.empty()) {
    out += fmt::format("      <system-out>{}</system-out>\n", xml_escape(body));
  } else {
    out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", xml_escape(message), failure_type,
                       xml_escape(body));
  }
  return out + "    </testcase>\n";
}

}  // namespace

namespace detail {

std::string TerminalRenderer::render(const FleetVerdict& verdict) const {
  return render_tables(verdict, false, m_colour);
}

std::string MarkdownRenderer::render(const FleetVerdict& verdict) const { return render_tables(verdict, true, false); }

std::string CsvRenderer::render(const FleetVerdict& v) const {
  std::string out = "kind,name,local_rank,ranks,value,unit,of_reference,pairs,low,verdict,explained_by\n";
  const auto row = [&](const std::vector<std::string>& fields) {
    std::vector<std::string> cells;
    std::transform(fields.begin(), fields.end(), std::back_inserter(cells), [](const auto& f) { return csv_field(f); });
    out += fmt::format("{}\n", fmt::join(cells, ","));
  };
  for (std::size_t lane = 0; lane < v.fleet_low.size(); ++lane) {
    row({"fleet", v.benchmark, std::to_string(lane), "", v.level[lane] ? fmt::format("{:.6g}", *v.level[lane]) : "",
         v.unit, v.level[lane] && v.reference[lane] ? fmt::format("{:.4f}", *v.level[lane] / *v.reference[lane]) : "",
         "", "", v.fleet_low[lane] ? "FLEET LOW" : "ok", v.anchor_basis});
  }
  for (const auto& s : v.splits) {
    std::vector<std::string> parts;
    for (const auto& part : s.parts) {
      parts.push_back(fmt::format("{}", fmt::join(part, " ")));
    }
    row({"split", fmt::format("{}", fmt::join(parts, " | ")), std::to_string(s.lane), "", "", "",
         s.median_across ? fmt::format("{:.4f}", *s.median_across) : "", std::to_string(s.pairs_across), "", "SPLIT",
         ""});
  }
  for (const auto& h : v.hosts) {
    row({"host", h.name, std::to_string(h.lane), std::to_string(h.rank), "", "",
         h.median_score ? fmt::format("{:.4f}", *h.median_score) : "", std::to_string(h.pairs), std::to_string(h.low),
         h.bad ? "BAD HOST" : "ok", ""});
  }
  for (const auto& g : v.groups) {
    row({"group", g.id, "0", fmt::format("{}", fmt::join(g.ranks, " ")), g.value ? fmt::format("{:.6g}", *g.value) : "",
         v.unit, g.value ? fmt::format("{:.4f}", g.score) : "", "", "",
         g.low ? (g.explained ? "LOW" : "LOW GROUP") : "ok", fmt::format("{}", fmt::join(g.hosts, " "))});
  }
  for (const auto& p : v.pairs) {
    row({"pair", pair_name(p.host_a, p.host_b), std::to_string(p.lane), fmt::format("{}-{}", p.rank_a, p.rank_b),
         p.value ? fmt::format("{:.6g}", *p.value) : "", v.unit, p.value ? fmt::format("{:.4f}", p.score) : "", "", "",
         !p.low                    ? (p.suspicious.empty() ? "ok" : "SUSPICIOUS")
         : p.across_split          ? "SPLIT"
         : !p.explained_by.empty() ? "LOW"
         : p.cannot_tell           ? "CANNOT TELL"
                                   : "BAD LINK",
         p.explained_by});
  }
  return out;
}

std::string JunitRenderer::render(const FleetVerdict& v) const {
  std::string cases;
  std::size_t tests = 0;
  std::size_t failures = 0;
  const auto add = [&](const std::string& text, bool failed) {
    cases += text;
    ++tests;
    failures += failed ? 1U : 0U;
  };
  for (std::size_t lane = 0; lane < v.fleet_low.size(); ++lane) {
    const std::string name = v.benchmark + lane_prefix(static_cast<int>(lane), v.lanes);
    add(v.fleet_low[lane]
            ? testcase("ccbench.fleet.level", name, "fleet_low", "FLEET LOW", fleet_low_line(v, lane))
            : testcase("ccbench.fleet.level", name, "", "",
                       fmt::format("level {} against the anchor {} ({})\n", figure_text(v.level[lane], v.unit),
                                   figure_text(v.anchor[lane], v.unit), v.anchor_basis)),
        v.fleet_low[lane]);
  }
  for (const auto& s : v.splits) {
    std::vector<std::string> parts;
    for (const auto& part : s.parts) {
      parts.push_back(fmt::format("{}", fmt::join(part, ",")));
    }
    add(testcase("ccbench.fleet.split", fmt::format("{}", fmt::join(parts, " | ")), "split", "SPLIT", split_line(v, s)),
        true);
  }
  for (const auto& h : v.hosts) {
    const std::string body = fmt::format("rank {}{}: {} of {} {} LOW, median {} of the reference\n", h.rank,
                                         devices_text(h.device), h.low, h.pairs, unit_noun(v), pct(h.median_score));
    add(testcase("ccbench.fleet.host", host_label(h, v.lanes), h.bad ? "bad_host" : "",
                 "BAD HOST " + host_label(h, v.lanes), body),
        h.bad);
  }
  for (const FleetPair* p : v.bad_links()) {
    const std::string name = link_label(*p, v.lanes);
    add(testcase("ccbench.fleet.link", name, "bad_link", "BAD LINK " + name, bad_link_line(v, *p)), true);
  }
  for (const FleetPair* p : v.cannot_tell()) {
    const std::string name = link_label(*p, v.lanes);
    add(testcase("ccbench.fleet.link", name, "cannot_tell", "CANNOT TELL " + name, cannot_tell_line(v, *p)), true);
  }
  for (const FleetPair* p : v.suspicious()) {
    const std::string name = link_label(*p, v.lanes);
    add(testcase("ccbench.fleet.link", name, "suspicious", "SUSPICIOUS " + name, suspicious_line(v, *p)), true);
  }
  for (const FleetGroup* g : v.low_groups()) {
    add(testcase("ccbench.fleet.group", g->id, "low_group", "LOW GROUP " + g->id, group_line(v, *g)), true);
  }
  const auto counts = fmt::format(R"(tests="{}" failures="{}" errors="0" skipped="0")", tests, failures);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"ccbench fleet\" {}>\n", counts);
  out += fmt::format("  <testsuite name=\"{}\" {}>\n", xml_escape("ccbench fleet: " + v.benchmark), counts);
  out += fmt::format("    <properties>\n      <property name=\"rule\" value=\"{}\"/>\n    </properties>\n",
                     xml_escape(v.rule()));
  return out + cases + "  </testsuite>\n</testsuites>\n";
}

}  // namespace detail

}  // namespace ccbench::report
