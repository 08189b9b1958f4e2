// The fleet section of the web page: a host x host heatmap (SVG, one cell per pair, its value in a
// <title>, the BAD HOST's row and column and each BAD LINK's cells outlined) beside the per-pair table.
// A fleet of more hosts than kMaxCells draws its heatmap as one image (a pixel per pair, PNG) under the
// same outlines, and lists its LOW pairs only: 1,024 hosts are half a million pairs.
#include "fleet_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <unordered_map>

#include "ccbench/report/fleet.hpp"
#include "ccbench/report/text.hpp"
#include "ccbench/report/verdict_text.hpp"
#include "png_image.hpp"

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
constexpr int kMaxCells = 40;                   // hosts per lane drawn cell by cell; more: one image
constexpr int kRasterSide = 800;                // px: the image's side on the page

struct Rgb {
  double r, g, b;
};
constexpr std::array<Rgb, 3> kStops = {{{215, 48, 39}, {254, 224, 139}, {26, 152, 80}}};  // red, yellow, green
constexpr Rgb kDiagonal = {217, 217, 217};

std::string esc(std::string_view text) { return html_escape(text); }

// Red at kScaleLo, yellow at the LOW line (1 - threshold), green at 1 and above.
Rgb rgb_of(double score, double low_line) {
  const double s = std::clamp(score, kScaleLo, 1.0);
  const auto mix = [](const Rgb& a, const Rgb& b, double t) {
    return Rgb{std::round(a.r + (b.r - a.r) * t), std::round(a.g + (b.g - a.g) * t), std::round(a.b + (b.b - a.b) * t)};
  };
  if (s <= low_line) {
    return mix(kStops[0], kStops[1], (s - kScaleLo) / std::max(low_line - kScaleLo, 1e-9));
  }
  return mix(kStops[1], kStops[2], (s - low_line) / std::max(1.0 - low_line, 1e-9));
}

std::string colour_of(double score, double low_line) {
  const Rgb c = rgb_of(score, low_line);
  return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(c.r), static_cast<int>(c.g), static_cast<int>(c.b));
}

/// A fleet too large for a cell per pair: one pixel per pair, as a PNG the page shows scaled up.
std::string raster_cells(const FleetVerdict& v, int lane, const std::unordered_map<std::string, int>& index, int n) {
  const double low_line = 1.0 - v.threshold;
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(n) * static_cast<std::size_t>(n) * 3);
  const auto put = [&](int row, int col, const Rgb& c) {
    const std::size_t at =
        (static_cast<std::size_t>(row) * static_cast<std::size_t>(n) + static_cast<std::size_t>(col)) * 3;
    rgb[at] = static_cast<std::uint8_t>(c.r);
    rgb[at + 1] = static_cast<std::uint8_t>(c.g);
    rgb[at + 2] = static_cast<std::uint8_t>(c.b);
  };
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      put(i, j, kDiagonal);  // the diagonal, and any pair the sweep did not reach
    }
  }
  for (const auto& p : v.pairs) {
    if (p.lane == lane) {
      const Rgb c = rgb_of(p.of_reference().value_or(0.0), low_line);
      put(index.at(p.host_a), index.at(p.host_b), c);
      put(index.at(p.host_b), index.at(p.host_a), c);
    }
  }
  return fmt::format(
      "<image class=\"heatmap-image\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" preserveAspectRatio=\"none\" "
      "style=\"image-rendering: pixelated\" href=\"data:image/png;base64,{}\"><title>{} hosts in name order: row and "
      "column i are the i-th host; the named hosts are labelled</title></image>\n",
      kLabels, kLabels, kRasterSide, kRasterSide, base64(png_rgb(n, n, rgb)), n);
}

std::string cells(const FleetVerdict& v, int lane, const std::vector<std::string>& hosts,
                  const std::unordered_map<std::string, int>& index) {
  const double low_line = 1.0 - v.threshold;
  std::string out;
  const int n = static_cast<int>(hosts.size());
  for (int i = 0; i < n; ++i) {
    out += fmt::format("<rect class=\"diagonal\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n",
                       kLabels + i * kCell, kLabels + i * kCell, kCell, kCell, kMissing);
  }
  for (const auto& p : v.pairs) {
    if (p.lane != lane) {
      continue;
    }
    const int a = index.at(p.host_a);
    const int b = index.at(p.host_b);
    const std::string fill = colour_of(p.of_reference().value_or(0.0), low_line);
    const std::string verdict = p.verdict();
    const std::string title =
        p.value ? fmt::format("{}: {:.4g} {} ({:.0f}% of the reference), {}", pair_name(p.host_a, p.host_b), *p.value,
                              v.unit, 100.0 * p.score, verdict)
                : fmt::format("{}: {} ({})", pair_name(p.host_a, p.host_b), p.status, verdict);
    for (const auto& [row, col] : {std::pair{a, b}, std::pair{b, a}}) {
      out += fmt::format(
          "<rect class=\"cell{}\" data-a=\"{}\" data-b=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
          "fill=\"{}\"><title>{}</title></rect>\n",
          p.low ? " low" : "", esc(hosts[static_cast<std::size_t>(row)]), esc(hosts[static_cast<std::size_t>(col)]),
          kLabels + col * kCell, kLabels + row * kCell, kCell, kCell, fill, esc(title));
    }
  }
  return out;
}

std::string heatmap(const FleetVerdict& v, int lane) {
  std::vector<std::string> hosts;
  for (const auto& h : v.hosts) {
    if (h.lane == lane) {
      hosts.push_back(h.name);
    }
  }
  std::unordered_map<std::string, int> index;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    index.emplace(hosts[i], static_cast<int>(i));
  }
  const int n = static_cast<int>(hosts.size());
  const bool raster = n > kMaxCells;
  const double cell = raster ? static_cast<double>(kRasterSide) / n : kCell;
  const int grid = raster ? kRasterSide : n * kCell;
  const int legend_w = std::max(grid, kMinLegend);
  const int width = kLabels + legend_w + 30;
  const int height = kLabels + grid + kLegend;
  const double low_line = 1.0 - v.threshold;
  std::string out = fmt::format(
      "<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"{} of every pair of hosts against the fleet's reference\">\n",
      width, height, width, height, esc(v.metric));
  const auto label = [&](int i) {
    const auto& name = hosts[static_cast<std::size_t>(i)];
    const double middle = kLabels + (i + 0.5) * cell;
    return fmt::format(
        "<text class=\"row-label\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n"
        "<text class=\"col-label\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"start\" transform=\"rotate(-45 {:.1f} {})\">{}"
        "</text>\n",
        kLabels - 6, middle + 4, esc(name), middle, kLabels - 6, middle, kLabels - 6, esc(name));
  };
  for (int i = 0; i < n; ++i) {
    if (!raster) {
      out += label(i);
    }
  }
  out += raster ? raster_cells(v, lane, index, n) : cells(v, lane, hosts, index);
  for (const auto& h : v.hosts) {  // a BAD HOST: its row and its column (and its name, on a raster)
    if (h.lane != lane || !h.bad) {
      continue;
    }
    const int i = index.at(h.name);
    if (raster) {
      out += label(i);
    }
    const double inset = raster ? 0.0 : 2.0;
    for (const auto& [x, y, w, hh] :
         {std::array{kLabels + inset, kLabels + i * cell + inset, grid - 2 * inset, cell - 2 * inset},
          std::array{kLabels + i * cell + inset, kLabels + inset, cell - 2 * inset, grid - 2 * inset}}) {
      out += fmt::format(
          "<rect class=\"flag-host\" data-host=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"><title>BAD HOST {}</title></rect>\n",
          esc(h.name), x, y, w, hh, kFlagColour, raster ? 1 : 4, esc(h.name));
    }
  }
  for (const FleetPair* p : v.bad_links()) {  // a BAD LINK: its two cells
    if (p->lane != lane) {
      continue;
    }
    const int a = index.at(p->host_a);
    const int b = index.at(p->host_b);
    const double inset = raster ? -1.0 : 2.0;  // on a raster, a frame around the pixel so that it shows
    for (const auto& [row, col] : {std::pair{a, b}, std::pair{b, a}}) {
      out += fmt::format(
          "<rect class=\"flag-link\" data-a=\"{}\" data-b=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
          "height=\"{:.1f}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"><title>BAD LINK {}</title></rect>\n",
          esc(p->host_a), esc(p->host_b), kLabels + col * cell + inset, kLabels + row * cell + inset, cell - 2 * inset,
          cell - 2 * inset, kFlagColour, raster ? 1 : 4, esc(pair_name(p->host_a, p->host_b)));
    }
  }
  // The legend: the scale as 32 swatches from kScaleLo to kScaleHi, the LOW line marked.
  const int legend_y = kLabels + grid + 22;
  constexpr int kSwatches = 32;
  const double swatch = static_cast<double>(legend_w) / kSwatches;
  out += "<g class=\"legend\">\n";
  for (int k = 0; k < kSwatches; ++k) {
    const double score = kScaleLo + (kScaleHi - kScaleLo) * (k + 0.5) / kSwatches;
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"12\" fill=\"{}\"/>\n",
                       kLabels + k * swatch, legend_y, swatch + 0.5, colour_of(score, low_line));
  }
  const auto tick = [&](double score, const std::string& text) {
    const double x = kLabels + (score - kScaleLo) / (kScaleHi - kScaleLo) * legend_w;
    return fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#333\"/><text x=\"{0:.1f}\" y=\"{3}\" "
        "text-anchor=\"middle\" font-size=\"11\">{4}</text>\n",
        x, legend_y - 3, legend_y + 15, legend_y + 28, esc(text));
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
  const bool all = v.pairs.size() <= kFleetPairsListed;
  std::size_t low = 0;
  for (const auto& p : v.pairs) {
    low += p.low ? 1U : 0U;
  }
  std::string out = all ? std::string{}
                        : fmt::format(
                              "<p class=\"note\">The {} LOW pairs of {} (ccbench-report fleet --format csv "
                              "lists every pair).</p>\n",
                              low, v.pairs.size());
  out += fmt::format(
      "<table class=\"fleet-pairs\">\n<thead><tr><th>pair</th><th>ranks</th><th>{} ({})</th><th>of ref</th>"
      "<th>verdict</th></tr></thead>\n<tbody>\n",
      esc(v.metric), esc(v.unit));
  for (const auto& p : v.pairs) {
    if (!all && !p.low) {
      continue;
    }
    const std::string verdict = p.verdict();
    out += fmt::format(
        "<tr><td>{}{}</td><td>{}-{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"{}\">{}</td>"
        "</tr>\n",
        esc(pair_name(p.host_a, p.host_b)), esc(lane_suffix(p.lane, v.lanes)), p.rank_a, p.rank_b,
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

std::string fleet_section(const std::optional<FleetVerdict>& verdict) {
  if (!verdict) {
    return "";
  }
  const FleetVerdict& v = *verdict;
  std::string out = v.grouped() ? "<h2>Fleet: groups of hosts</h2>\n" : "<h2>Fleet: every pair of hosts</h2>\n";
  out += fmt::format("<p class=\"note\">{}, size {} {}. Rule: {}.</p>\n", esc(v.benchmark),
                     format_size(v.size_bytes, SizeStyle::Binary), v.in_place ? "in-place" : "out-of-place",
                     esc(v.rule()));
  out += fmt::format("<p class=\"note\">{}</p>\n", esc(fleet_reference_text(v)));
  out += "<ul class=\"fleet-verdict\">\n";
  for (const auto& line : fleet_verdict_lines(v)) {
    out += fmt::format("<li class=\"status-bad\">{}</li>\n", esc(line));
  }
  if (!v.anything_named()) {
    out += fmt::format("<li class=\"status-ok\">nothing named: {} {} within {:g}% of the reference</li>\n",
                       v.grouped() ? v.groups.size() : v.pairs.size(), v.grouped() ? "groups" : "pairs",
                       100.0 * v.threshold);
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
