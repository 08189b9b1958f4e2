// The sections of the HTML report that show the results themselves: the plots of busbw against size and the
// results tables, with the grouping of results they share. The page around them is html.cpp's.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "ccbench/collective.hpp"
#include "ccbench/report/rows.hpp"
#include "ccbench/report/text.hpp"
#include "html_internal.hpp"
#include "svg_plot.hpp"

namespace ccbench::report::detail {

namespace {

// Series colours (Tableau 10): distinct, and known to the chromium test, which counts their pixels.
constexpr std::array<const char*, 10> kPalette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

constexpr double kUs = 1e6;

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

}  // namespace

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

namespace {

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

}  // namespace

std::string result_tables(const std::vector<LoadedRun>& runs, const std::vector<std::string>& names) {
  const Grouped grouped = group_results(runs, table_key, true);
  std::string out = "<h2>Results</h2>\n";
  for (const auto& key : grouped.order) {
    out += result_table(key.second, grouped.entries.at(key), names.at(key.first));
  }
  return out;
}

}  // namespace ccbench::report::detail
