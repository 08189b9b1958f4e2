// Fleet printers: the verdict lines and the host and pair tables (terminal, Markdown), CSV, JSON and JUnit XML.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "ccbench/report/fleet.hpp"
#include "text_table.hpp"

namespace ccbench::report {

namespace {

using nlohmann::json;

std::string host_label(const FleetHost& h, int lanes) { return h.name + lane_suffix(h.lane, lanes); }

std::string link_label(const FleetPair& p, int lanes) {
  return fmt::format("{}-{}{}", p.host_a, p.host_b, lane_suffix(p.lane, lanes));
}

std::string pct(std::optional<double> score) { return score ? fmt::format("{:.0f}%", 100.0 * *score) : "-"; }

std::string value_text(const FleetPair& p) { return p.value ? fmt::format("{:.4g}", *p.value) : p.status; }

std::string devices_text(const std::string& device) { return device.empty() ? "" : ", " + device; }

std::string unit_noun(const FleetVerdict& v) { return v.grouped() ? "groups" : "pairs"; }

std::string group_line(const FleetVerdict& v, const FleetGroup& g) {
  return fmt::format("LOW GROUP {} ({}; ranks {}): {} {} = {} of the reference; no host in it is LOW in every group",
                     g.id, fmt::join(g.hosts, ", "), fmt::join(g.ranks, ","),
                     g.value ? fmt::format("{:.4g}", *g.value) : g.status, g.value ? v.unit : "",
                     pct(g.of_reference()));
}

std::vector<std::string> verdict_lines(const FleetVerdict& v) {
  std::vector<std::string> lines;
  for (const FleetHost* h : v.bad_hosts()) {
    lines.push_back(fmt::format("BAD HOST {}: rank {}{}; {} of {} {} LOW, median {} of the reference",
                                host_label(*h, v.lanes), h->rank, devices_text(h->device), h->low, h->pairs,
                                unit_noun(v), pct(h->median_score)));
  }
  for (const FleetGroup* g : v.low_groups()) {
    lines.push_back(group_line(v, *g));
  }
  for (const FleetPair* p : v.bad_links()) {
    const auto host = [&](const std::string& name) {
      return std::find_if(v.hosts.begin(), v.hosts.end(),
                          [&](const FleetHost& h) { return h.name == name && h.lane == p->lane; });
    };
    const auto a = host(p->host_a);
    const auto b = host(p->host_b);
    lines.push_back(fmt::format(
        "BAD LINK {}: ranks {} and {}{}{}; {} {} = {} of the reference; {} is fine elsewhere (median {}), {} too "
        "(median {})",
        link_label(*p, v.lanes), p->rank_a, p->rank_b, devices_text(p->device_a), devices_text(p->device_b),
        value_text(*p), p->value ? v.unit : "", pct(p->of_reference()), p->host_a,
        pct(a != v.hosts.end() ? a->median_score : std::nullopt), p->host_b,
        pct(b != v.hosts.end() ? b->median_score : std::nullopt)));
  }
  return lines;
}

std::string summary_line(const FleetVerdict& v) {
  const auto hosts = v.bad_hosts().size();
  const auto links = v.bad_links().size();
  const auto groups = v.low_groups().size();
  const std::size_t judged = v.grouped() ? v.groups.size() : v.pairs.size();
  if (hosts + links + groups == 0) {
    return fmt::format("nothing named: {} {}, every one within {:g}% of the reference\n", judged, unit_noun(v),
                       100.0 * v.threshold);
  }
  if (v.grouped()) {
    return fmt::format("{} bad host{}, {} low group{} (of {} groups)\n", hosts, hosts == 1 ? "" : "s", groups,
                       groups == 1 ? "" : "s", judged);
  }
  return fmt::format("{} bad host{}, {} bad link{} (of {} pairs)\n", hosts, hosts == 1 ? "" : "s", links,
                     links == 1 ? "" : "s", judged);
}

std::string reference_text(const FleetVerdict& v) {
  std::vector<std::string> parts;
  for (std::size_t lane = 0; lane < v.reference.size(); ++lane) {
    const std::string value = v.reference[lane] ? fmt::format("{:.4g} {}", *v.reference[lane], v.unit) : "none";
    parts.push_back(v.lanes > 1 ? fmt::format("local rank {}: {}", lane, value) : value);
  }
  return fmt::format("reference {}: {}", v.metric, fmt::join(parts, "; "));
}

std::string render_tables(const FleetVerdict& v, bool markdown, bool colour) {
  using detail::Align;
  detail::TextTable hosts({{"host", Align::Left},
                           {"rank", Align::Right},
                           {"devices", Align::Left},
                           {unit_noun(v), Align::Right},
                           {"LOW", Align::Right},
                           {"median", Align::Right},
                           {"verdict", Align::Left}});
  for (const auto& h : v.hosts) {
    hosts.add_row({{printable(host_label(h, v.lanes))},
                   {std::to_string(h.rank)},
                   {printable(h.device)},
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
  for (const auto& p : v.pairs) {
    const bool bad_link = p.low && p.explained_by.empty();
    pairs.add_row({{printable(link_label(p, v.lanes))},
                   {fmt::format("{}-{}", p.rank_a, p.rank_b)},
                   {value_text(p)},
                   {pct(p.of_reference())},
                   {printable(p.verdict()), bad_link ? "1;31"
                                            : p.low  ? "33"
                                                     : "32"}});
  }
  if (v.grouped()) {
    pairs = detail::TextTable({{"group", Align::Left},
                               {"hosts", Align::Left},
                               {fmt::format("{} ({})", v.metric, v.unit), Align::Right},
                               {"of ref", Align::Right},
                               {"verdict", Align::Left}});
    for (const auto& g : v.groups) {
      pairs.add_row({{printable(g.id)},
                     {printable(fmt::format("{}", fmt::join(g.hosts, ",")))},
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
  for (const auto& line : verdict_lines(v)) {
    verdicts += (markdown ? "- **" : "") + printable(line) + (markdown ? "**\n" : "\n");
  }
  if (markdown) {
    return fmt::format("### {}\n\nrule: {}\n\n{}\n\n{}\n{}\n#### Hosts\n\n{}\n#### {}\n\n{}", html_escape(title),
                       v.rule(), reference_text(v), verdicts, summary_line(v), hosts.markdown(),
                       v.grouped() ? "Groups" : "Pairs", pairs.markdown());
  }
  return fmt::format("{}\nrule: {}\n{}\n{}{}\n{}\n{}", printable(title), v.rule(), reference_text(v), verdicts,
                     summary_line(v), hosts.terminal(colour), pairs.terminal(colour));
}

std::string render_csv(const FleetVerdict& v) {
  std::string out = "kind,name,local_rank,ranks,value,unit,of_reference,pairs,low,verdict,explained_by\n";
  const auto row = [&](const std::vector<std::string>& fields) {
    std::vector<std::string> cells;
    std::transform(fields.begin(), fields.end(), std::back_inserter(cells), [](const auto& f) { return csv_field(f); });
    out += fmt::format("{}\n", fmt::join(cells, ","));
  };
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
    row({"pair", fmt::format("{}-{}", p.host_a, p.host_b), std::to_string(p.lane),
         fmt::format("{}-{}", p.rank_a, p.rank_b), p.value ? fmt::format("{:.6g}", *p.value) : "", v.unit,
         p.value ? fmt::format("{:.4f}", p.score) : "", "", "",
         p.low ? (p.explained_by.empty() ? "BAD LINK" : "LOW") : "ok", p.explained_by});
  }
  return out;
}

json optional_json(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

std::string render_json(const FleetVerdict& v) {
  json hosts = json::array();
  for (const auto& h : v.hosts) {
    hosts.push_back({{"host", h.name},
                     {"local_rank", h.lane},
                     {"rank", h.rank},
                     {"device", h.device},
                     {"pairs", h.pairs},
                     {"low", h.low},
                     {"median_of_reference", optional_json(h.median_score)},
                     {"verdict", h.bad ? "bad_host" : "ok"}});
  }
  json pairs = json::array();
  for (const auto& p : v.pairs) {
    pairs.push_back({{"hosts", {p.host_a, p.host_b}},
                     {"ranks", {p.rank_a, p.rank_b}},
                     {"local_rank", p.lane},
                     {"devices", {p.device_a, p.device_b}},
                     {"status", p.status},
                     {"value", optional_json(p.value)},
                     {"of_reference", optional_json(p.of_reference())},
                     {"verdict", p.low ? (p.explained_by.empty() ? "bad_link" : "low") : "ok"},
                     {"explained_by", p.explained_by.empty() ? json(nullptr) : json(p.explained_by)},
                     {"file", p.file}});
  }
  json bad_hosts = json::array();
  for (const FleetHost* h : v.bad_hosts()) {
    bad_hosts.push_back({{"host", h->name}, {"local_rank", h->lane}, {"rank", h->rank}, {"device", h->device}});
  }
  json bad_links = json::array();
  for (const FleetPair* p : v.bad_links()) {
    bad_links.push_back(
        {{"hosts", {p->host_a, p->host_b}}, {"ranks", {p->rank_a, p->rank_b}}, {"local_rank", p->lane}});
  }
  json groups = json::array();
  json low_groups = json::array();
  for (const auto& g : v.groups) {
    groups.push_back({{"id", g.id},
                      {"hosts", g.hosts},
                      {"ranks", g.ranks},
                      {"status", g.status},
                      {"value", optional_json(g.value)},
                      {"of_reference", optional_json(g.of_reference())},
                      {"verdict", g.low ? (g.explained ? "low" : "low_group") : "ok"},
                      {"file", g.file}});
    if (g.low && !g.explained) {
      low_groups.push_back({{"id", g.id}, {"hosts", g.hosts}, {"ranks", g.ranks}});
    }
  }
  json reference = json::array();
  for (const auto& r : v.reference) {
    reference.push_back(optional_json(r));
  }
  const bool named = v.anything_named();
  const json doc = {{"benchmark", v.benchmark},
                    {"metric", v.metric},
                    {"stat", v.stat},
                    {"unit", v.unit},
                    {"size_bytes", v.size_bytes},
                    {"in_place", v.in_place},
                    {"threshold", v.threshold},
                    {"rule", v.rule()},
                    {"reference", reference},
                    {"files", v.files},
                    {"bad_hosts", bad_hosts},
                    {"bad_links", bad_links},
                    {"hosts", hosts},
                    {"pairs", pairs},
                    {"groups", groups},
                    {"low_groups", low_groups},
                    {"verdict", named ? "fail" : "pass"}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string render_fleet(const FleetVerdict& verdict, Format format, bool colour) {
  switch (format) {
    case Format::Terminal:
      return render_tables(verdict, false, colour);
    case Format::Markdown:
      return render_tables(verdict, true, false);
    case Format::Csv:
      return render_csv(verdict);
    case Format::Json:
      return render_json(verdict);
  }
  return render_tables(verdict, false, false);
}

std::string render_fleet_junit(const FleetVerdict& v) {
  const auto links = v.bad_links();
  const auto bad_hosts = v.bad_hosts();
  const auto low_groups = v.low_groups();
  const std::size_t tests = v.hosts.size() + links.size() + low_groups.size();
  const std::size_t failures = bad_hosts.size() + links.size() + low_groups.size();
  const auto counts = fmt::format(R"(tests="{}" failures="{}" errors="0" skipped="0")", tests, failures);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"ccbench fleet\" {}>\n", counts);
  out += fmt::format("  <testsuite name=\"{}\" {}>\n", xml_escape("ccbench fleet: " + v.benchmark), counts);
  out += fmt::format("    <properties>\n      <property name=\"rule\" value=\"{}\"/>\n    </properties>\n",
                     xml_escape(v.rule()));
  const auto lines = verdict_lines(v);
  for (const auto& h : v.hosts) {
    out += fmt::format("    <testcase classname=\"ccbench.fleet.host\" name=\"{}\">\n",
                       xml_escape(host_label(h, v.lanes)));
    const std::string body =
        xml_escape(fmt::format("rank {}{}: {} of {} {} LOW, median {} of the reference\n", h.rank,
                               devices_text(h.device), h.low, h.pairs, unit_noun(v), pct(h.median_score)));
    if (h.bad) {
      out += fmt::format("      <failure message=\"{}\" type=\"bad_host\">{}</failure>\n",
                         xml_escape("BAD HOST " + host_label(h, v.lanes)), body);
    } else {
      out += fmt::format("      <system-out>{}</system-out>\n", body);
    }
    out += "    </testcase>\n";
  }
  for (const FleetPair* p : links) {
    const std::string name = link_label(*p, v.lanes);
    const auto line = std::find_if(lines.begin(), lines.end(),
                                   [&](const std::string& l) { return l.starts_with("BAD LINK " + name + ": "); });
    out += fmt::format("    <testcase classname=\"ccbench.fleet.link\" name=\"{}\">\n", xml_escape(name));
    out += fmt::format("      <failure message=\"{}\" type=\"bad_link\">{}</failure>\n", xml_escape("BAD LINK " + name),
                       xml_escape(line != lines.end() ? *line : name));
    out += "    </testcase>\n";
  }
  for (const FleetGroup* g : low_groups) {
    out += fmt::format("    <testcase classname=\"ccbench.fleet.group\" name=\"{}\">\n", xml_escape(g->id));
    out += fmt::format("      <failure message=\"{}\" type=\"low_group\">{}</failure>\n",
                       xml_escape("LOW GROUP " + g->id), xml_escape(group_line(v, *g)));
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace ccbench::report
