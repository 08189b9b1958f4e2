#include "ccbench/report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

#include "ccbench/collective.hpp"
#include "ccbench/fabric.hpp"
#include "ccbench/report/rows.hpp"
#include "ccbench/report/text.hpp"
#include "fleet_html.hpp"
#include "svg_plot.hpp"

namespace ccbench::report {

namespace {

// Series colours (Tableau 10): distinct, and known to the chromium test, which counts their pixels.
constexpr std::array<const char*, 10> kPalette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

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

constexpr double kUs = 1e6;

std::string esc(std::string_view text) { return html_escape(text); }

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

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const auto& part : parts) {
    out += (out.empty() ? "" : std::string(separator)) + part;
  }
  return out;
}

// The rows of one results table: everything of key_of but the size and the placement.
RowKey table_key(const CaseResult& r) {
  RowKey key = key_of(r);
  key.size_bytes = 0;
  key.in_place = false;
  return key;
}

// The rows of one plot: as a table, across backends, timing modes and --nccl-variants (the legend names them).
RowKey plot_key(const CaseResult& r) {
  RowKey key = table_key(r);
  key.backend.clear();
  key.timing.clear();
  key.variant.clear();
  return key;
}

// "all_reduce sum · float32 · allreduce_bench · group world (4 ranks)"; backend and timing when set.
std::string describe_group(const RowKey& key) {
  std::string text = key.op;
  if (!key.redop.empty()) {
    text += " " + key.redop;
  }
  if (key.root >= 0) {
    text += fmt::format(" root {}", key.root);
  }
  text += fmt::format(" · {} · {}", key.dtype, key.benchmark);
  if (!key.backend.empty()) {
    text += fmt::format(" · {} · {}", key.backend, key.timing);
    text += key.variant.empty() ? "" : " · " + key.variant;
  }
  return text + fmt::format(" · group {} ({} rank{})", key.group_id, key.ranks, key.ranks == 1 ? "" : "s");
}

/// Results grouped by (run index, key) in order of first appearance; the run index is 0 throughout when
/// runs share groups (plots), and the run's own when each run gets its own (tables).
using Entries = std::vector<std::pair<std::size_t, const CaseResult*>>;
using GroupKey = std::pair<std::size_t, RowKey>;
struct Grouped {
  std::vector<GroupKey> order;
  std::map<GroupKey, Entries> entries;
};

Grouped group_results(const std::vector<LoadedRun>& runs, RowKey (*key_of_result)(const CaseResult&), bool per_run) {
  Grouped grouped;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const auto& r : runs[i].doc.results) {
      const GroupKey key{per_run ? i : 0, key_of_result(r)};
      auto [it, inserted] = grouped.entries.try_emplace(key);
      if (inserted) {
        grouped.order.push_back(key);
      }
      it->second.emplace_back(i, &r);
    }
  }
  return grouped;
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

// ---- plots ----

// Series of one plot section: run x placement (x backend and timing mode, when the section mixes them).
// "batch", or "batch, ring" for a --nccl-variants row.
std::string mode_of(const CaseResult& r) {
  return std::string(name(r.timing)) + (r.variant.empty() ? "" : ", " + r.variant);
}

using SeriesKey = std::tuple<std::size_t, bool, std::string, std::string>;

std::map<SeriesKey, Entries> series_entries(const Entries& entries, bool mixed_modes) {
  std::map<SeriesKey, Entries> series;
  for (const auto& entry : entries) {
    const CaseResult& r = *entry.second;
    const bool plottable = r.status == CaseStatus::Ok && r.size_bytes > 0 && std::isfinite(r.busbw_GBps);
    if (plottable) {
      const SeriesKey key{entry.first, r.spec.in_place, mixed_modes ? r.backend : "", mixed_modes ? mode_of(r) : ""};
      series[key].push_back(entry);
    }
  }
  return series;
}

bool mixes_modes(const Entries& entries) {
  std::set<std::pair<std::string, std::string>> modes;
  for (const auto& entry : entries) {
    modes.emplace(entry.second->backend, mode_of(*entry.second));
  }
  return modes.size() > 1;
}

PlotSeries make_series(const SeriesKey& key, const Entries& entries, const std::vector<std::string>& names,
                       std::size_t index) {
  const auto& [run, in_place, backend, timing] = key;
  PlotSeries series;
  series.label = names[run] + " · " + std::string(placement_name(in_place));
  if (!backend.empty()) {
    series.label += fmt::format(" ({}, {})", backend, timing);
  }
  series.colour = kPalette.at(index % kPalette.size());
  series.marker = in_place ? Marker::Square : Marker::Circle;
  for (const auto& entry : entries) {
    series.points.push_back({entry.second->size_bytes, entry.second->busbw_GBps});
  }
  std::stable_sort(series.points.begin(), series.points.end(),
                   [](const PlotPoint& a, const PlotPoint& b) { return a.size_bytes < b.size_bytes; });
  return series;
}

// Each run's peak(s) in this section, as dashed lines in the colour of the run's first series.
void add_peak_lines(Plot& plot, const std::map<SeriesKey, Entries>& series, const std::vector<std::string>& names) {
  std::map<std::size_t, std::set<double>> peaks;
  std::map<std::size_t, std::string> colours;
  std::size_t index = 0;
  for (const auto& [key, entries] : series) {
    const std::size_t run = std::get<0>(key);
    colours.try_emplace(run, plot.series.at(index++).colour);
    for (const auto& entry : entries) {
      const auto& peak = entry.second->peak_GBps;
      if (peak && std::isfinite(*peak) && *peak > 0.0) {
        peaks[run].insert(*peak);
      }
    }
  }
  for (const auto& [run, values] : peaks) {
    for (const double value : values) {
      plot.lines.push_back({value, fmt::format("peak {:g} GB/s ({})", value, names[run]), colours.at(run)});
    }
  }
}

std::string plot_section(const RowKey& key, const Entries& entries, const std::vector<std::string>& names) {
  const auto series = series_entries(entries, mixes_modes(entries));
  if (series.empty()) {
    return {};
  }
  Plot plot;
  plot.title = "busbw against size: " + describe_group(key);
  plot.x_label = "message size (log2 scale; 1 KiB = 1024 B)";
  plot.y_label = "busbw (GB/s)";
  plot.unit = "GB/s";
  for (const auto& [series_key, series_rows] : series) {
    plot.series.push_back(make_series(series_key, series_rows, names, plot.series.size()));
  }
  add_peak_lines(plot, series, names);
  return fmt::format("<section class=\"plot-section\">\n<h3>{}</h3>\n{}</section>\n", esc(describe_group(key)),
                     render_svg(plot));
}

std::string plots(const std::vector<LoadedRun>& runs, const std::vector<std::string>& names) {
  const Grouped grouped = group_results(runs, plot_key, false);
  std::string out = "<h2>Bus bandwidth against size</h2>\n";
  std::vector<std::string> not_plotted;
  for (const auto& key : grouped.order) {
    const std::string section = plot_section(key.second, grouped.entries.at(key), names);
    if (section.empty()) {
      not_plotted.push_back("<li>" + esc(describe_group(key.second)) + "</li>");
    }
    out += section;
  }
  if (!not_plotted.empty()) {
    out += "<p class=\"note\">Not plotted (no result with status ok; see the tables):</p>\n<ul class=\"not-plotted\">" +
           join(not_plotted, "\n") + "</ul>\n";
  }
  return out;
}

// ---- result tables ----

// Rates span from MB/s on a laptop to TB/s: keep about four significant digits without an exponent.
std::string format_rate(double gbps) {
  const double magnitude = std::abs(gbps);
  const int digits = magnitude >= 100.0 ? 1 : magnitude >= 1.0 ? 2 : magnitude >= 0.01 ? 4 : 6;
  return format_number(gbps, digits);
}

std::string placement_cells(const CaseResult* r) {
  if (r == nullptr) {
    return R"(<td class="none" colspan="7">not run</td>)";
  }
  const bool ok = r->status == CaseStatus::Ok;
  const auto time_us = [&](double Summary::*field) -> std::optional<double> {
    return r->time ? std::optional<double>((*r->time).*field * kUs) : std::nullopt;
  };
  std::string status(name(r->status));
  if (!ok && !r->reason.empty()) {
    status += ": " + r->reason;
  }
  return fmt::format(
      "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
      "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"{}\">{}</td>",
      format_number(time_us(&Summary::p50), 2), format_number(time_us(&Summary::p95), 2),
      ok ? format_rate(r->algbw_GBps) : "-", ok ? format_rate(r->busbw_GBps) : "-", format_number(r->pct_of_peak, 1),
      r->wrong_elements ? std::to_string(*r->wrong_elements) : "-", ok ? "status-ok" : "status-bad", esc(status));
}

struct TableRow {
  const CaseResult* first = nullptr;                // size, count, dtype come from here
  std::array<const CaseResult*, 2> by_placement{};  // [out-of-place, in-place]
};

std::vector<TableRow> table_rows(const Entries& entries) {
  std::vector<TableRow> rows;
  std::map<std::uint64_t, std::size_t> row_of_size;
  for (const auto& entry : entries) {
    const CaseResult* r = entry.second;
    const std::size_t slot = r->spec.in_place ? 1 : 0;
    auto it = row_of_size.find(r->size_bytes);
    if (it == row_of_size.end() || rows[it->second].by_placement.at(slot) != nullptr) {
      rows.push_back({r, {}});
      it = row_of_size.insert_or_assign(r->size_bytes, rows.size() - 1).first;
    }
    rows[it->second].by_placement.at(slot) = r;
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const TableRow& a, const TableRow& b) { return a.first->size_bytes < b.first->size_bytes; });
  return rows;
}

std::string table_header(const std::vector<std::size_t>& slots) {
  std::string top = R"(<tr><th rowspan="2">size</th><th rowspan="2">count</th><th rowspan="2">dtype</th>)";
  std::string bottom = "<tr>";
  for (const std::size_t slot : slots) {
    top += fmt::format("<th colspan=\"7\">{}</th>", placement_name(slot == 1));
    bottom +=
        "<th>p50 (µs)</th><th>p95 (µs)</th><th>algbw (GB/s)</th><th>busbw (GB/s)</th><th>% of peak</th>"
        "<th>wrong elements</th><th>status</th>";
  }
  return "<thead>" + top + "</tr>\n" + bottom + "</tr></thead>\n";
}

std::string group_meta(const Entries& entries) {
  std::set<std::string> hosts;
  std::set<std::string> bases;
  for (const auto& entry : entries) {
    hosts.insert(entry.second->group_hosts.begin(), entry.second->group_hosts.end());
    if (!entry.second->peak_basis.empty()) {
      bases.insert(entry.second->peak_basis);
    }
  }
  std::vector<std::string> parts;
  if (!hosts.empty()) {
    parts.push_back("hosts: " + esc(join(std::vector<std::string>(hosts.begin(), hosts.end()), ", ")));
  }
  if (!bases.empty()) {
    parts.push_back("peak: " + esc(join(std::vector<std::string>(bases.begin(), bases.end()), "; ")));
  }
  return parts.empty() ? std::string() : "<p class=\"meta\">" + join(parts, " · ") + "</p>\n";
}

std::string result_table(const RowKey& key, const Entries& entries, const std::string& run_name) {
  std::vector<std::size_t> slots;
  for (const std::size_t slot : {std::size_t{0}, std::size_t{1}}) {
    for (const auto& entry : entries) {
      if ((entry.second->spec.in_place ? 1U : 0U) == slot) {
        slots.push_back(slot);
        break;
      }
    }
  }
  std::string out =
      fmt::format("<section class=\"results\">\n<h3>{} — {}</h3>\n", esc(run_name), esc(describe_group(key)));
  out += group_meta(entries);
  out += "<table class=\"results\">\n" + table_header(slots) + "<tbody>\n";
  for (const auto& row : table_rows(entries)) {
    out += fmt::format(R"(<tr><td class="num">{}</td><td class="num">{}</td><td>{}</td>)",
                       esc(format_size(row.first->size_bytes, SizeStyle::Binary)), row.first->spec.count,
                       esc(name(row.first->spec.dtype)));
    for (const std::size_t slot : slots) {
      out += placement_cells(row.by_placement.at(slot));
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n</section>\n";
}

std::string result_tables(const std::vector<LoadedRun>& runs, const std::vector<std::string>& names) {
  const Grouped grouped = group_results(runs, table_key, true);
  std::string out = "<h2>Results</h2>\n";
  for (const auto& key : grouped.order) {
    out += result_table(key.second, grouped.entries.at(key), names.at(key.first));
  }
  return out;
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

std::string render_html(const std::vector<LoadedRun>& runs, const HtmlOptions& options) {
  const std::vector<std::string> names = run_names(runs);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format("<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n", kContentSecurityPolicy);
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", esc(options.title), kStyle);
  out += fmt::format("<h1>{}</h1>\n", esc(options.title));
  out += fmt::format(
      "<p class=\"note\">{} run(s). Sizes are binary (1 KiB = 1024 B); rates are GB/s = 10<sup>9</sup> B/s. "
      "Times are per op, the slowest rank's, median (p50) and p95 over the samples.</p>\n",
      runs.size());
  out += runs_table(runs, names);
  out += evidence_sections(runs, names);
  out += detail::fleet_section(runs);
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
