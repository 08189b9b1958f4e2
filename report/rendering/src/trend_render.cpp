// trend's printers (trend_render.hpp): text and Markdown, JSON, and the page with its SVG plots.
#include "ccbench/report/trend_render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "ccbench/report/text.hpp"
#include "html_internal.hpp"
#include "svg_plot.hpp"

namespace ccbench::report {

namespace {

constexpr std::size_t kPlotsShown = 60;

std::string pct(double share) { return fmt::format("{:+.1f}%", share * 100); }

/// The test, as every format says it.
std::string method(const TrendVerdict& v) {
  const double alpha = v.options.alarm_rate / static_cast<double>(std::max<std::size_t>(1, v.stretches_tested));
  return fmt::format(
      "Pettitt's change-point test (Pettitt 1979) on each series' busbw, cut where its software changed; drift: "
      "p < {:.3g} ({}% over {} stretch(es), Bonferroni) and the medians either side more than {}% apart",
      alpha, v.options.alarm_rate * 100, v.stretches_tested, v.options.threshold * 100);
}

std::string verdict_word(const TrendVerdict& v) {
  const auto stale =
      std::find_if(v.ruling.gaps.begin(), v.ruling.gaps.end(), [](const Gap& g) { return g.lack == Lack::Stale; });
  if (stale != v.ruling.gaps.end()) {
    return fmt::format("NO VERDICT ({})", printable(stale->what));  // nothing is drawn on stale evidence
  }
  if (!v.hosts.empty()) {
    std::vector<std::string> names;
    for (const auto& h : v.hosts) {
      names.push_back(printable(h.host));
    }
    return fmt::format("DRIFT ({} host(s): {})", names.size(), fmt::join(names, ", "));
  }
  if (v.fleet_shift) {
    return "DRIFT (every host moved together, with no software change recorded: the fleet, not a host)";
  }
  if (v.drifted_series > 0) {
    return fmt::format("DRIFT ({} series, DRIFT above; no host whose every judged series moved)", v.drifted_series);
  }
  if (v.ruling.ruling == Ruling::NoVerdict) {
    return fmt::format("NO VERDICT ({})", printable(v.ruling.gaps.front().what));
  }
  return "no drift";
}

/// The series a reader must see: any that drifted, changed software, or could not be judged.
bool shown(const SeriesTrend& s) { return s.drifted() || !s.software_changes.empty() || !s.judged(); }

std::string series_state(const SeriesTrend& s) {
  for (const auto& st : s.stretches) {
    if (st.verdict == StretchVerdict::Drift) {
      const auto& p = *s.points[st.onset].run;
      return fmt::format("DRIFT {} from run {} ({}, {}), p {:.2g}", pct(st.moved), st.onset + 1, printable(p.label),
                         p.started_utc, st.p_value);
    }
  }
  if (!s.judged()) {
    const auto& st = s.stretches.back();
    return fmt::format("NOT JUDGED: {} run(s), {} needed", st.runs, st.needed_runs);
  }
  return "steady";
}

}  // namespace

std::string render_trend_text(const TrendVerdict& v, bool markdown) {
  std::string out = fmt::format("# trend: {} series; {}\n", v.series.size(), method(v));
  std::size_t steady = 0;
  if (markdown) {
    out += "\n| series | runs | state | software changes |\n|---|---|---|---|\n";
  }
  for (const auto& s : v.series) {
    if (!shown(s) && v.series.size() > kPlotsShown) {
      ++steady;
      continue;
    }
    std::vector<std::string> changes;
    for (const auto& c : s.software_changes) {
      changes.push_back(fmt::format("run {}: {} -> {}{}", c.at + 1, printable(c.was), printable(c.now),
                                    c.moved ? fmt::format(" ({})", pct(*c.moved)) : ""));
    }
    if (markdown) {
      out +=
          fmt::format("| {} | {} | {} | {} |\n", markdown_escape(s.series), s.points.size(),
                      markdown_escape(series_state(s)), markdown_escape(fmt::format("{}", fmt::join(changes, "; "))));
    } else {
      out += fmt::format("{}  {} runs  {}\n", printable(s.series), s.points.size(), series_state(s));
      for (const auto& c : changes) {
        out += fmt::format("    software changed at {}\n", c);
      }
    }
  }
  if (steady > 0) {
    out += fmt::format("{}{} series steady (not listed)\n", markdown ? "\n" : "", steady);
  }
  for (const auto& f : v.software) {
    out += fmt::format(
        "SOFTWARE CHANGE: {} -> {} from {}, in {} series{}: a change of software, not drift\n", printable(f.was),
        printable(f.now), f.first_utc, f.series,
        f.median_moved ? fmt::format(", the figure moved {} (median over them)", pct(*f.median_moved)) : "");
  }
  for (const auto& h : v.hosts) {
    out += fmt::format("DRIFT {}: {} from {} (run {}, {}); every judged series of it moved, software unchanged there\n",
                       printable(h.host), pct(h.moved), printable(h.onset_label), printable(h.onset_run), h.onset_utc);
  }
  if (v.duplicate_runs > 0) {
    out += fmt::format("{} point(s) left out: a run already in its series (the same run id in another file)\n",
                       v.duplicate_runs);
  }
  for (const auto& p : v.problems) {
    out += fmt::format("{}: {}: {}\n", p.unreadable ? "UNREADABLE" : "not a result", printable(p.path),
                       printable(p.message));
  }
  std::size_t unjudged = 0;
  for (const auto& g : v.ruling.gaps) {
    if (g.lack == Lack::Unjudgeable) {
      ++unjudged;  // a series too short: listed above, NOT JUDGED
    } else {
      out += fmt::format("not judged ({}): {}\n", name(g.lack), printable(g.what));
    }
  }
  if (unjudged > 0) {
    out += fmt::format("{} series not judged: too few runs on their latest software (NOT JUDGED above)\n", unjudged);
  }
  return out + fmt::format("verdict: {}{}\n", verdict_word(v),
                           v.ruling.ruling == Ruling::Overridden ? " (--partial: the series above not judged)" : "");
}

std::string render_trend_json(const TrendVerdict& v) {
  using nlohmann::json;
  json series = json::array();
  for (const auto& s : v.series) {
    json points = json::array();
    for (const auto& p : s.points) {
      points.push_back({{"run_id", p.run->run_id},
                        {"started_utc", p.run->started_utc},
                        {"label", p.run->label},
                        {"path", p.run->path},
                        {"busbw_GBps", p.value ? json(*p.value) : json(nullptr)}});
    }
    json stretches = json::array();
    for (const auto& st : s.stretches) {
      stretches.push_back({{"first_run", st.first + 1},
                           {"runs", st.runs},
                           {"verdict", name(st.verdict)},
                           {"change_run", st.change + 1},
                           {"onset_run", st.onset + 1},
                           {"p_value", st.p_value},
                           {"alpha", st.alpha},
                           {"before_median_GBps", st.before_median},
                           {"after_median_GBps", st.after_median},
                           {"moved_ratio", st.moved},
                           {"needed_runs", st.needed_runs}});
    }
    json changes = json::array();
    for (const auto& c : s.software_changes) {
      changes.push_back({{"run", c.at + 1},
                         {"started_utc", c.started_utc},
                         {"was", c.was},
                         {"now", c.now},
                         {"moved_ratio", c.moved ? json(*c.moved) : json(nullptr)}});
    }
    series.push_back({{"series", s.series},
                      {"bench", s.bench},
                      {"hosts", s.hosts},
                      {"row", s.row},
                      {"drift", s.drifted()},
                      {"judged", s.judged()},
                      {"points", points},
                      {"stretches", stretches},
                      {"software_changes", changes}});
  }
  json hosts = json::array();
  for (const auto& h : v.hosts) {
    hosts.push_back({{"host", h.host},
                     {"series", h.series},
                     {"onset_utc", h.onset_utc},
                     {"onset_label", h.onset_label},
                     {"onset_run_id", h.onset_run},
                     {"moved_ratio", h.moved}});
  }
  json software = json::array();
  for (const auto& f : v.software) {
    software.push_back({{"was", f.was},
                        {"now", f.now},
                        {"first_utc", f.first_utc},
                        {"series", f.series},
                        {"median_moved_ratio", f.median_moved ? json(*f.median_moved) : json(nullptr)}});
  }
  json problems = json::array();
  for (const auto& p : v.problems) {
    problems.push_back({{"path", p.path}, {"unreadable", p.unreadable}, {"message", p.message}});
  }
  json gaps = json::array();
  for (const auto& g : v.ruling.gaps) {
    gaps.push_back({{"lack", name(g.lack)}, {"what", g.what}});
  }
  const json doc = {{"schema", "ccbench.report.trend"},
                    {"schema_version", "1.0.0"},
                    {"test", "pettitt"},
                    {"method", method(v)},
                    {"threshold_ratio", v.options.threshold},
                    {"alarm_rate", v.options.alarm_rate},
                    {"stretches_tested", v.stretches_tested},
                    {"verdict", verdict_word(v)},
                    {"exit_code", v.exit_code()},
                    {"drift_hosts", hosts},
                    {"fleet_shift", v.fleet_shift},
                    {"software_changes", software},
                    {"problems", problems},
                    {"not_judged", gaps},
                    {"series", series}};
  return doc.dump(2) + "\n";
}

namespace {

/// One series' figure over its runs: x the run (1..n), y busbw from 0; its change point (red) and software changes
/// (blue) as dashed vertical lines.
std::string trend_svg(const SeriesTrend& s) {
  constexpr double kW = 640;
  constexpr double kH = 240;
  constexpr double kLeft = 60;
  constexpr double kRight = 20;
  constexpr double kTop = 20;
  constexpr double kBottom = 40;
  double top = 0;
  for (const auto& p : s.points) {
    top = std::max(top, p.value.value_or(0));
  }
  const auto ticks = nice_ticks(top > 0 ? top : 1, 5);
  const double ymax = ticks.empty() ? 1 : ticks.back();
  const std::size_t n = s.points.size();
  const auto x = [&](std::size_t i) {
    return kLeft + (n <= 1 ? 0.5 : static_cast<double>(i) / static_cast<double>(n - 1)) * (kW - kLeft - kRight);
  };
  const auto y = [&](double v) { return kTop + (1 - v / ymax) * (kH - kTop - kBottom); };
  std::string out = fmt::format(
      "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "role=\"img\"><title>{2}</title>\n",
      kW, kH, detail::esc(s.series));
  for (const double t : ticks) {
    out += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/><text x=\"{3}\" y=\"{4:.1f}\" "
        "text-anchor=\"end\">{5:g}</text>\n",
        kLeft, kW - kRight, y(t), kLeft - 4, y(t) + 4, t);
  }
  out += fmt::format(
      "<text class=\"axis-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">run (1 to {}, by start)</text>\n"
      "<text class=\"axis-label\" x=\"12\" y=\"{}\" transform=\"rotate(-90 12 {})\" text-anchor=\"middle\">busbw "
      "(GB/s)</text>\n",
      (kLeft + kW - kRight) / 2, kH - 8, n, kH / 2, kH / 2);
  const auto mark = [&](std::size_t i, std::string_view colour, const std::string& what) {
    return fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"{3}\" stroke-dasharray=\"4 3\"><title>{4}"
        "</title></line>\n",
        x(i), kTop, kH - kBottom, colour, detail::esc(what));
  };
  for (const auto& c : s.software_changes) {
    out += mark(c.at, "#1f5fbf", fmt::format("software: {} -> {}", c.was, c.now));
  }
  for (const auto& st : s.stretches) {
    if (st.verdict == StretchVerdict::Drift) {
      out += mark(st.onset, "#b00020", fmt::format("drift from run {}: {}", st.onset + 1, pct(st.moved)));
    }
  }
  std::string path;
  for (std::size_t i = 0; i < n; ++i) {
    if (!s.points[i].value) {
      continue;
    }
    const double v = *s.points[i].value;
    path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", x(i), y(v));
    out += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#333\"><title>run {}: {} {:.4g} GB/s"
        "</title></circle>\n",
        x(i), y(v), i + 1, detail::esc(s.points[i].run->label), v);
  }
  out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#333\"/>\n</svg>\n", path);
  return out;
}

}  // namespace

std::string render_trend_html(const TrendVerdict& v, const std::string& title) {
  std::string out = detail::page_open(title);
  out += fmt::format("<p class=\"note\">{}</p>\n<pre>{}</pre>\n", detail::esc(method(v)),
                     detail::esc(render_trend_text(v, false)));
  std::size_t plotted = 0;
  std::size_t left = 0;
  for (const auto& s : v.series) {
    if (!shown(s) && v.series.size() > kPlotsShown) {
      continue;
    }
    if (plotted == kPlotsShown) {
      ++left;
      continue;
    }
    ++plotted;
    out += fmt::format("<h3>{}</h3>\n<p class=\"meta\">{}</p>\n", detail::esc(s.series), detail::esc(series_state(s)));
    out += trend_svg(s);
  }
  if (left > 0) {
    out += fmt::format("<p class=\"note\">{} more series not plotted (JSON has them all).</p>\n", left);
  }
  return out + "</body>\n</html>\n";
}

}  // namespace ccbench::report
