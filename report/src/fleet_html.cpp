// The fleet section of the web page: a host x host heatmap (SVG, one cell per pair, its value in a
// <title>, the BAD HOST's row and column and each BAD LINK's cells outlined) beside the per-pair table.
#include "fleet_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "ccbench/report/fleet.hpp"

namespace ccbench::report::detail {

namespace {

constexpr int kCell = 44;         // px per cell
constexpr int kLabels = 110;      // px for the host names left of and above the grid
constexpr int kLegend = 70;       // px below the grid for the colour scale
constexpr int kMinLegend = 340;   // px: the scale's width at least
constexpr double kScaleLo = 0.4;  // the colour scale's ends, as fractions of the reference
constexpr double kScaleHi = 1.2;
constexpr const char* kFlagColour = "#c000c0";  // outlines; known to the chromium test
constexpr const char* kMissing = "#d9d9d9";     // the diagonal

struct Rgb {
  double r, g, b;
};
constexpr std::array<Rgb, 3> kStops = {{{215, 48, 39}, {254, 224, 139}, {26, 152, 80}}};  // red, yellow, green

std::string esc(std::string_view text) { return html_escape(text); }

// Red at kScaleLo, yellow at the LOW line (1 - threshold), green at 1 and above.
std::string colour_of(double score, double low_line) {
  const double s = std::clamp(score, kScaleLo, 1.0);
  const auto mix = [](const Rgb& a, const Rgb& b, double t) {
    return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(std::lround(a.r + (b.r - a.r) * t)),
                       static_cast<int>(std::lround(a.g + (b.g - a.g) * t)),
                       static_cast<int>(std::lround(a.b + (b.b - a.b) * t)));
  };
  if (s <= low_line) {
    return mix(kStops[0], kStops[1], (s - kScaleLo) / std::max(low_line - kScaleLo, 1e-9));
  }
  return mix(kStops[1], kStops[2], (s - low_line) / std::max(1.0 - low_line, 1e-9));
}

std::string heatmap(const FleetVerdict& v, int lane) {
  std::vector<std::string> hosts;
  for (const auto& h : v.hosts) {
    if (h.lane == lane) {
      hosts.push_back(h.name);
    }
  }
  const auto index = [&](const std::string& name) {
    return static_cast<int>(std::find(hosts.begin(), hosts.end(), name) - hosts.begin());
  };
  const int n = static_cast<int>(hosts.size());
  const int legend_w = std::max(n * kCell, kMinLegend);
  const int width = kLabels + legend_w + 30;
  const int height = kLabels + n * kCell + kLegend;
  const double low_line = 1.0 - v.threshold;
  std::string out = fmt::format(
      "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"{} of every pair of hosts against the fleet's reference\">\n",
      width, height, width, height, esc(v.metric));
  for (int i = 0; i < n; ++i) {
    const auto& name = hosts[static_cast<std::size_t>(i)];
    out += fmt::format("<text class=\"row-label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLabels - 6,
                       kLabels + i * kCell + kCell / 2 + 4, esc(name));
    out += fmt::format(
        "<text class=\"col-label\" x=\"{}\" y=\"{}\" text-anchor=\"start\" transform=\"rotate(-45 {} {})\">{}</text>\n",
        kLabels + i * kCell + kCell / 2, kLabels - 6, kLabels + i * kCell + kCell / 2, kLabels - 6, esc(name));
    out += fmt::format("<rect class=\"diagonal\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n",
                       kLabels + i * kCell, kLabels + i * kCell, kCell, kCell, kMissing);
  }
  for (const auto& p : v.pairs) {
    if (p.lane != lane) {
      continue;
    }
    const int a = index(p.host_a);
    const int b = index(p.host_b);
    const std::string fill = colour_of(p.of_reference().value_or(0.0), low_line);
    const std::string verdict = p.verdict();
    const std::string title = p.value ? fmt::format("{} - {}: {:.4g} {} ({:.0f}% of the reference), {}", p.host_a,
                                                    p.host_b, *p.value, v.unit, 100.0 * p.score, verdict)
                                      : fmt::format("{} - {}: {} ({})", p.host_a, p.host_b, p.status, verdict);
    for (const auto& [row, col] : {std::pair{a, b}, std::pair{b, a}}) {
      out += fmt::format(
          "<rect class=\"cell{}\" data-a=\"{}\" data-b=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
          "fill=\"{}\"><title>{}</title></rect>\n",
          p.low ? " low" : "", esc(hosts[static_cast<std::size_t>(row)]), esc(hosts[static_cast<std::size_t>(col)]),
          kLabels + col * kCell, kLabels + row * kCell, kCell, kCell, fill, esc(title));
    }
  }
  for (const auto& h : v.hosts) {  // a BAD HOST: its row and its column
    if (h.lane != lane || !h.bad) {
      continue;
    }
    const int i = index(h.name);
    out += fmt::format(
        "<rect class=\"flag-host\" data-host=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
        "stroke=\"{}\" stroke-width=\"4\"><title>BAD HOST {}</title></rect>\n",
        esc(h.name), kLabels + 2, kLabels + i * kCell + 2, n * kCell - 4, kCell - 4, kFlagColour, esc(h.name));
    out += fmt::format(
        "<rect class=\"flag-host\" data-host=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
        "stroke=\"{}\" stroke-width=\"4\"><title>BAD HOST {}</title></rect>\n",
        esc(h.name), kLabels + i * kCell + 2, kLabels + 2, kCell - 4, n * kCell - 4, kFlagColour, esc(h.name));
  }
  for (const FleetPair* p : v.bad_links()) {  // a BAD LINK: its two cells
    if (p->lane != lane) {
      continue;
    }
    const int a = index(p->host_a);
    const int b = index(p->host_b);
    for (const auto& [row, col] : {std::pair{a, b}, std::pair{b, a}}) {
      out += fmt::format(
          "<rect class=\"flag-link\" data-a=\"{}\" data-b=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
          "fill=\"none\" stroke=\"{}\" stroke-width=\"4\"><title>BAD LINK {} - {}</title></rect>\n",
          esc(p->host_a), esc(p->host_b), kLabels + col * kCell + 2, kLabels + row * kCell + 2, kCell - 4, kCell - 4,
          kFlagColour, esc(p->host_a), esc(p->host_b));
    }
  }
  // The legend: the scale as 32 swatches from kScaleLo to kScaleHi, the LOW line marked.
  const int legend_y = kLabels + n * kCell + 22;
  constexpr int kSwatches = 32;
  const double swatch = static_cast<double>(legend_w) / kSwatches;
  out += "<g class=\"legend\">\n";
  for (int k = 0; k < kSwatches; ++k) {
    const double score = kScaleLo + (kScaleHi - kScaleLo) * (k + 0.5) / kSwatches;
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"12\" fill=\"{}\"/>\n",
                       kLabels + k * swatch, legend_y, swatch + 0.5, colour_of(score, low_line));
  }
  const auto tick = [&](double score, const std::string& label) {
    const double x = kLabels + (score - kScaleLo) / (kScaleHi - kScaleLo) * legend_w;
    return fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#333\"/><text x=\"{0:.1f}\" y=\"{3}\" "
        "text-anchor=\"middle\" font-size=\"11\">{4}</text>\n",
        x, legend_y - 3, legend_y + 15, legend_y + 28, esc(label));
  };
  out += tick(kScaleLo, fmt::format("{:.0f}%", 100 * kScaleLo));
  out += tick(low_line, fmt::format("{:.0f}%", 100 * low_line));
  out += tick(1.0, "100%");
  out += tick(kScaleHi, fmt::format("{:.0f}%", 100 * kScaleHi));
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\">{} against the reference{}; LOW below {:.0f}%</text>\n",
                     kLabels, legend_y - 6, esc(v.metric), v.higher_is_better ? "" : " (reference / latency)",
                     100 * low_line);
  out += "</g>\n</svg>\n";
  return out;
}

std::string pair_table(const FleetVerdict& v) {
  std::string out = fmt::format(
      "<table class=\"fleet-pairs\">\n<thead><tr><th>pair</th><th>ranks</th><th>{} ({})</th><th>of ref</th>"
      "<th>verdict</th></tr></thead>\n<tbody>\n",
      esc(v.metric), esc(v.unit));
  for (const auto& p : v.pairs) {
    const std::string verdict = p.verdict();
    out += fmt::format(
        "<tr><td>{}-{}{}</td><td>{}-{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"{}\">{}</td>"
        "</tr>\n",
        esc(p.host_a), esc(p.host_b), esc(lane_suffix(p.lane, v.lanes)), p.rank_a, p.rank_b,
        p.value ? fmt::format("{:.4g}", *p.value) : esc(p.status),
        p.value ? fmt::format("{:.0f}%", 100.0 * p.score) : std::string{"-"}, p.low ? "status-bad" : "status-ok",
        esc(verdict));
  }
  return out + "</tbody>\n</table>\n";
}

std::string group_table(const FleetVerdict& v) {
  std::string out = fmt::format(
      "<table class=\"fleet-groups\">\n<thead><tr><th>group</th><th>hosts</th><th>{} ({})</th><th>of ref</th>"
      "<th>verdict</th></tr></thead>\n<tbody>\n",
      esc(v.metric), esc(v.unit));
  for (const auto& g : v.groups) {
    const std::string verdict = g.verdict();
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"{}\">{}</td></tr>\n",
        esc(g.id), esc(fmt::format("{}", fmt::join(g.hosts, ", "))),
        g.value ? fmt::format("{:.4g}", *g.value) : esc(g.status),
        g.value ? fmt::format("{:.0f}%", 100.0 * g.score) : std::string{"-"}, g.low ? "status-bad" : "status-ok",
        esc(verdict));
  }
  return out + "</tbody>\n</table>\n";
}

}  // namespace

std::string fleet_section(const std::vector<LoadedRun>& runs) {
  FleetVerdict v;
  try {
    v = evaluate_fleet(runs, FleetOptions{});
  } catch (const UsageError&) {
    return "";  // not one --all-pairs sweep over 3 hosts or more: no fleet section
  }
  std::string out = v.grouped() ? "<h2>Fleet: groups of hosts</h2>\n" : "<h2>Fleet: every pair of hosts</h2>\n";
  out += fmt::format("<p class=\"note\">{}, size {} {}. Rule: {}.</p>\n", esc(v.benchmark),
                     format_size(v.size_bytes, SizeStyle::Binary), v.in_place ? "in-place" : "out-of-place",
                     esc(v.rule()));
  const auto hosts = v.bad_hosts();
  const auto links = v.bad_links();
  out += "<ul class=\"fleet-verdict\">\n";
  for (const FleetHost* h : hosts) {
    out += fmt::format("<li class=\"status-bad\">BAD HOST {}{}: {} of {} {} LOW</li>\n", esc(h->name),
                       esc(lane_suffix(h->lane, v.lanes)), h->low, h->pairs, v.grouped() ? "groups" : "pairs");
  }
  for (const FleetPair* p : links) {
    out += fmt::format("<li class=\"status-bad\">BAD LINK {}-{}{}: {:.0f}% of the reference</li>\n", esc(p->host_a),
                       esc(p->host_b), esc(lane_suffix(p->lane, v.lanes)), 100.0 * p->score);
  }
  if (!v.anything_named()) {
    out += fmt::format("<li class=\"status-ok\">nothing named: {} pairs within {:g}% of the reference</li>\n",
                       v.pairs.size(), 100.0 * v.threshold);
  }
  for (const FleetGroup* g : v.low_groups()) {
    out += fmt::format("<li class=\"status-bad\">LOW GROUP {} ({}): {:.0f}% of the reference</li>\n", esc(g->id),
                       esc(fmt::format("{}", fmt::join(g->hosts, ", "))), 100.0 * g->score);
  }
  if (v.grouped()) {
    return out + "</ul>\n" + group_table(v);
  }
  out += "</ul>\n<div class=\"fleet\">\n";
  for (int lane = 0; lane < v.lanes; ++lane) {
    const auto& ref = v.reference[static_cast<std::size_t>(lane)];
    out += fmt::format("<figure>\n{}<figcaption>{}reference {}</figcaption>\n</figure>\n", heatmap(v, lane),
                       v.lanes > 1 ? fmt::format("local rank {}: ", lane) : std::string{},
                       ref ? fmt::format("{:.4g} {}", *ref, esc(v.unit)) : std::string{"none"});
  }
  return out + pair_table(v) + "</div>\n";
}

}  // namespace ccbench::report::detail
