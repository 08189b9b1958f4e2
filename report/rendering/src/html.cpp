// The HTML report: the page (its head, style and runs table, the runs' findings and evidence, the fleet section)
// around the plots and results tables of html_results.cpp.
#include "ccbench/report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "ccbench/collective.hpp"
#include "ccbench/fabric.hpp"
#include "ccbench/report/rows.hpp"
#include "ccbench/report/text.hpp"
#include "fleet_html.hpp"
#include "html_internal.hpp"

namespace ccbench::report {

namespace {

using detail::esc;
using detail::join;
using detail::plots;
using detail::result_tables;

// Even markup that slipped through escaping could neither run a script nor fetch anything.
constexpr std::string_view kContentSecurityPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

constexpr std::string_view kStyle = R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em; color: #1a1a1a; background: #fff; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.3em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.3em; }
p.note, p.meta { color: #555; margin: 0.2em 0; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.4em 0 1em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; vertical-align: top; }
table.runs td.file { overflow-wrap: anywhere; min-width: 16em; }
th { background: #eef0f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.status-ok { color: #1b6e1b; }
td.status-bad { color: #b00020; font-weight: bold; }
svg.plot { font-size: 12px; display: block; margin: 0.3em 0 1em; }
svg.plot text.axis-label { font-weight: bold; }
div.fleet { display: flex; flex-wrap: wrap; gap: 2em; align-items: flex-start; }
div.fleet figure { margin: 0; }
svg.heatmap { font-size: 12px; display: block; }
)css";

// How the page names each run: LoadedRun::name(), made unique with " #i" where two runs share it.
std::vector<std::string> run_names(const std::vector<LoadedRun>& runs) {
  std::vector<std::string> names;
  std::map<std::string, int> uses;
  for (const auto& run : runs) {
    names.push_back(run.name());
    ++uses[names.back()];
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (uses[names[i]] > 1) {
      names[i] += fmt::format(" #{}", i + 1);
    }
  }
  return names;
}

// ---- the runs table ----

template <typename Field>
std::string distinct(const ResultDocument& doc, Field field) {
  std::set<std::string> values;
  for (const auto& r : doc.results) {
    values.insert(field(r));
  }
  return join(std::vector<std::string>(values.begin(), values.end()), ", ");
}

constexpr std::size_t kHostsNamed = 8;  // a run on more hosts names the first and the last few

std::string runs_table_row(const LoadedRun& run, const std::string& run_name) {
  const auto& doc = run.doc;
  std::vector<std::string> hosts;
  std::size_t ranks = 0;
  const std::size_t n = doc.environment.hosts.size();
  for (std::size_t i = 0; i < n; ++i) {
    const auto& host = doc.environment.hosts[i];
    if (n <= kHostsNamed || i < kHostsNamed / 2 || i + 2 >= n) {
      hosts.push_back(esc(host.hostname));
    } else if (i == kHostsNamed / 2) {
      hosts.push_back(fmt::format("... ({} hosts in all)", n));
    }
    ranks += host.ranks.size();
  }
  std::vector<std::string> libraries;
  for (const auto& [library, version] : doc.environment.libraries) {
    libraries.push_back(esc(library) + ": " + esc(version));
  }
  const std::string backends = distinct(doc, [](const CaseResult& r) { return r.backend; });
  const std::string timings = distinct(doc, [](const CaseResult& r) { return std::string(name(r.timing)); });
  std::string tool = esc(doc.run.tool_version);
  if (!doc.run.git_revision.empty()) {
    tool += " (" + esc(doc.run.git_revision) + ")";
  }
  if (doc.run.source) {  // an imported run: its numbers are the other tool's
    tool = fmt::format("{}{} ({}), imported by ccbench {}", esc(doc.run.source->tool),
                       doc.run.source->version.empty() ? "" : " " + esc(doc.run.source->version),
                       esc(doc.run.source->format), tool);
  }
  return fmt::format(
      "<tr><td>{}</td><td class=\"file\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
      "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
      esc(run_name), esc(run.path), esc(doc.run.benchmark), esc(run.schema_version), esc(doc.run.started_utc),
      join(hosts, ", "), ranks, esc(backends), join(libraries, "<br>"), esc(timings), tool);
}

std::string runs_table(const std::vector<LoadedRun>& runs, const std::vector<std::string>& names) {
  std::string out =
      "<h2>Runs</h2>\n<table class=\"runs\">\n<thead><tr><th>run</th><th>file</th><th>benchmark</th><th>schema</th>"
      "<th>started (UTC)</th><th>hosts</th><th>ranks</th><th>backend</th><th>libraries</th><th>timing</th>"
      "<th>tool (git revision)</th></tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    out += runs_table_row(runs[i], names[i]);
  }
  return out + "</tbody>\n</table>\n";
}

/// A section listing each run's findings (`findings_of(run.doc)`), or nothing when no run has any.
template <typename FindingsOf>
std::string findings_section(const std::vector<LoadedRun>& runs, const std::vector<std::string>& names,
                             FindingsOf findings_of, std::string_view heading) {
  std::string items;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const auto& finding : findings_of(runs[i].doc)) {
      items += fmt::format("<li><b>{}</b>: {}</li>\n", esc(names[i]), esc(printable(finding)));
    }
  }
  return items.empty() ? std::string{} : fmt::format("{}<ul class=\"findings\">\n{}</ul>\n", heading, items);
}

/// What each run says beyond its bandwidth: the straggler verdicts of --per-rank runs (schema 1.9.0), and the
/// fabric's evidence (1.8.0): error counters that moved, links trained low.
std::string evidence_sections(const std::vector<LoadedRun>& runs, const std::vector<std::string>& names) {
  return findings_section(
             runs, names, [](const ResultDocument& doc) { return straggler_findings(doc); },
             "<h2>Per-rank times</h2>\n<p class=\"note\">--per-rank: the rank the others wait for has the "
             "shortest time of a sample (it arrives last); named when it does so in most samples.</p>\n") +
         findings_section(
             runs, names, [](const ResultDocument& doc) { return fabric_findings(doc.fabric); },
             "<h2>Fabric</h2>\n<p class=\"note\">Counters read on each host before the first case and "
             "after the last; links against their capability.</p>\n");
}

/// Pair or host groups of a fleet sweep shown one by one (a plot and a table each) at most; a sweep of more is
/// shown by its fleet section alone (1,024 hosts are half a million pairs).
constexpr std::size_t kMaxFleetGroupsShown = 64;

bool is_fleet_case(const CaseResult& r) {
  return (r.group == "pair" && r.group_hosts.size() == 2) || r.group == "hosts";
}

/// `runs` without the fleet results when they hold more than kMaxFleetGroupsShown groups (their count in `left_out`).
std::vector<LoadedRun> without_a_large_fleet(const std::vector<LoadedRun>& runs, std::size_t& left_out) {
  std::set<std::pair<std::size_t, std::string>> groups;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const auto& r : runs[i].doc.results) {
      if (is_fleet_case(r)) {
        groups.emplace(i, r.group_id);
      }
    }
  }
  left_out = 0;
  if (groups.size() <= kMaxFleetGroupsShown) {
    return runs;
  }
  std::vector<LoadedRun> out;
  for (const auto& run : runs) {
    LoadedRun copy;
    copy.path = run.path;
    copy.schema_version = run.schema_version;
    copy.doc.run = run.doc.run;
    copy.doc.environment = run.doc.environment;
    for (const auto& r : run.doc.results) {
      if (is_fleet_case(r)) {
        ++left_out;
      } else {
        copy.doc.results.push_back(r);
      }
    }
    out.push_back(std::move(copy));
  }
  return out;
}

}  // namespace

std::string detail::page_open(std::string_view title) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n", kContentSecurityPolicy);
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", esc(title), kStyle);
  return out + fmt::format("<h1>{}</h1>\n", esc(title));
}

std::string render_html(const std::vector<LoadedRun>& runs, const HtmlOptions& options) {
  const std::vector<std::string> names = run_names(runs);
  std::string out = detail::page_open(options.title);
  out += fmt::format(
      "<p class=\"note\">{} run(s). Sizes are binary (1 KiB = 1024 B); rates are GB/s = 10<sup>9</sup> B/s. "
      "Times are per op, the slowest rank's, median (p50) and p95 over the samples.</p>\n",
      runs.size());
  out += runs_table(runs, names);
  out += evidence_sections(runs, names);
  out += detail::fleet_section(options.fleet);
  std::size_t fleet_cases = 0;
  const std::vector<LoadedRun> shown = without_a_large_fleet(runs, fleet_cases);
  if (fleet_cases > 0) {
    out += fmt::format(
        "<p class=\"note\">The {} results of the fleet sweep's pairs or groups are judged and drawn in the fleet "
        "section above, not plotted and tabled one by one (more than {} groups).</p>\n",
        fleet_cases, kMaxFleetGroupsShown);
  }
  out += plots(shown, names);
  out += result_tables(shown, names);
  return out + "</body>\n</html>\n";
}

}  // namespace ccbench::report
