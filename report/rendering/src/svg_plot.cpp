#include "svg_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ccbench/report/text.hpp"

namespace ccbench::report {

namespace {

// Layout in SVG user units (= CSS pixels at the page's default zoom).
constexpr double kWidth = 760.0;
constexpr double kLeft = 78.0;       // room for the y tick labels and the y axis label
constexpr double kRight = 24.0;      // room after the last x tick label
constexpr double kTop = 28.0;        // room for a peak label at the top of the plot area
constexpr double kHeight = 300.0;    // of the plot area
constexpr double kInset = 12.0;      // between the plot area's sides and the first/last x position
constexpr double kLegendTop = 62.0;  // below the plot area
constexpr double kLegendRow = 18.0;
constexpr double kLabelGap = 13.0;  // the least vertical distance between two peak labels
constexpr int kYTicks = 5;
constexpr double kHeadroom = 1.05;  // the highest point or peak line stays off the plot's top edge
constexpr int kMaxXTicks = 10;
constexpr const char* kPlotBackground = "#f5f7fb";  // the chromium test finds the plot by this colour
constexpr const char* kAxisColour = "#444444";
constexpr const char* kGridColour = "#dde1e8";

// Maps data to SVG coordinates: x is log2 of the size, y is linear from 0 to the top tick.
struct Frame {
  double log_lo = 0.0;
  double log_hi = 1.0;
  double y_top = 1.0;
  [[nodiscard]] double x(double size_bytes) const {
    const double span = kWidth - kLeft - kRight - 2.0 * kInset;
    return kLeft + kInset + (std::log2(size_bytes) - log_lo) / (log_hi - log_lo) * span;
  }
  [[nodiscard]] double y(double value) const { return kTop + kHeight - value / y_top * kHeight; }
};

std::string num(double v) { return fmt::format("{:.1f}", v); }

// Decimal digits a tick label needs at this step (0.25 -> 2, 5 -> 0).
int tick_digits(double step) {
  int digits = 0;
  for (double s = step; digits < 12 && std::abs(s - std::round(s)) > 1e-9 * std::max(1.0, s); s *= 10.0) {
    ++digits;
  }
  return digits;
}

Frame make_frame(const Plot& plot, const std::vector<double>& y_ticks) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (const auto& series : plot.series) {
    for (const auto& p : series.points) {
      lo = std::min(lo, std::log2(static_cast<double>(p.size_bytes)));
      hi = std::max(hi, std::log2(static_cast<double>(p.size_bytes)));
    }
  }
  Frame frame;
  if (lo <= hi) {
    frame.log_lo = lo;
    frame.log_hi = hi;
  }
  if (frame.log_hi - frame.log_lo < 1e-9) {  // one size (or none): one binary order on each side
    frame.log_lo -= 1.0;
    frame.log_hi += 1.0;
  }
  frame.y_top = y_ticks.back();
  return frame;
}

// Powers of two inside the x range, at most kMaxXTicks of them; the range's ends when it holds none.
std::vector<std::uint64_t> x_ticks(const Frame& frame) {
  const auto first = static_cast<int>(std::ceil(frame.log_lo - 1e-9));
  const auto last = static_cast<int>(std::floor(frame.log_hi + 1e-9));
  const int step = std::max(1, (last - first + kMaxXTicks) / kMaxXTicks);
  std::vector<std::uint64_t> ticks;
  for (int e = std::max(first, 0); e <= last && e < 64; e += step) {
    ticks.push_back(std::uint64_t{1} << e);
  }
  if (ticks.empty()) {
    ticks.push_back(static_cast<std::uint64_t>(std::llround(std::exp2(frame.log_lo))));
    ticks.push_back(static_cast<std::uint64_t>(std::llround(std::exp2(frame.log_hi))));
  }
  return ticks;
}

void append_axes(std::string& out, const Plot& plot, const Frame& frame, const std::vector<double>& y_ticks) {
  const double right = kWidth - kRight;
  const double bottom = kTop + kHeight;
  out += fmt::format(R"(<rect class="plot-area" x="{}" y="{}" width="{}" height="{}" fill="{}"/>)", num(kLeft),
                     num(kTop), num(right - kLeft), num(kHeight), kPlotBackground);
  out += '\n';
  const int digits = tick_digits(y_ticks.size() > 1 ? y_ticks[1] - y_ticks[0] : 1.0);
  for (const double v : y_ticks) {
    const double y = frame.y(v);
    out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}"/>)", num(kLeft), num(y), num(right), num(y),
                       kGridColour);
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end" dominant-baseline="middle">{}</text>)",
                       num(kLeft - 6.0), num(y), format_number(v, digits));
    out += '\n';
  }
  for (const std::uint64_t size : x_ticks(frame)) {
    const double x = frame.x(static_cast<double>(size));
    out += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}"/>)", num(x), num(kTop), num(x), num(bottom),
                       kGridColour);
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", num(x), num(bottom + 16.0),
                       html_escape(format_size(size, SizeStyle::Binary)));
    out += '\n';
  }
  out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="{}"/>)", num(kLeft), num(kTop),
                     num(right - kLeft), num(kHeight), kAxisColour);
  out += fmt::format(R"(<text class="axis-label" x="{}" y="{}" text-anchor="middle">{}</text>)",
                     num((kLeft + right) / 2.0), num(bottom + 36.0), html_escape(plot.x_label));
  out += fmt::format(
      R"svg(<text class="axis-label" transform="rotate(-90)" x="{}" y="{}" text-anchor="middle">{}</text>)svg",
      num(-(kTop + kHeight / 2.0)), num(18.0), html_escape(plot.y_label));
  out += '\n';
}

void append_marker(std::string& out, const PlotSeries& series, double x, double y, const std::string& tip) {
  if (series.marker == Marker::Square) {
    out += fmt::format(R"(<rect x="{}" y="{}" width="7" height="7" fill="{}"><title>{}</title></rect>)", num(x - 3.5),
                       num(y - 3.5), series.colour, tip);
  } else {
    out += fmt::format(R"(<circle cx="{}" cy="{}" r="3.5" fill="{}"><title>{}</title></circle>)", num(x), num(y),
                       series.colour, tip);
  }
  out += '\n';
}

void append_series(std::string& out, const Plot& plot, const Frame& frame, const PlotSeries& series) {
  out += fmt::format(R"(<g class="series"><title>{}</title>)", html_escape(series.label));
  out += '\n';
  if (series.points.size() > 1) {
    std::string points;
    for (const auto& p : series.points) {
      points += fmt::format("{}{},{}", points.empty() ? "" : " ", num(frame.x(static_cast<double>(p.size_bytes))),
                            num(frame.y(p.value)));
    }
    out += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>)", points, series.colour);
    out += '\n';
  }
  for (const auto& p : series.points) {
    const std::string tip = html_escape(fmt::format("{}, {}: {:.4g} {}", series.label,
                                                    format_size(p.size_bytes, SizeStyle::Binary), p.value, plot.unit));
    append_marker(out, series, frame.x(static_cast<double>(p.size_bytes)), frame.y(p.value), tip);
  }
  out += "</g>\n";
}

void append_lines(std::string& out, const Plot& plot, const Frame& frame) {
  std::vector<double> label_ys;
  for (const auto& line : plot.lines) {
    const double y = frame.y(line.value);
    double label_y = y - 4.0;
    for (const double used : label_ys) {  // stack labels that would overlap (equal peaks)
      if (std::abs(label_y - used) < kLabelGap) {
        label_y = used - kLabelGap;
      }
    }
    label_ys.push_back(label_y);
    out += fmt::format(
        R"(<g class="peak"><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="1.5" stroke-dasharray="6 4"/>)",
        num(kLeft), num(y), num(kWidth - kRight), num(y), line.colour);
    out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end" fill="{}">{}</text></g>)", num(kWidth - kRight - 4.0),
                       num(label_y), line.colour, html_escape(line.label));
    out += '\n';
  }
}

void append_legend(std::string& out, const Plot& plot) {
  double y = kTop + kHeight + kLegendTop;
  for (const auto& series : plot.series) {
    out +=
        fmt::format(R"(<g class="legend-entry"><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2"/>)",
                    num(kLeft), num(y), num(kLeft + 28.0), num(y), series.colour);
    out += '\n';
    append_marker(out, series, kLeft + 14.0, y, html_escape(series.label));
    out += fmt::format(R"(<text x="{}" y="{}" dominant-baseline="middle">{}</text></g>)", num(kLeft + 36.0), num(y),
                       html_escape(series.label));
    out += '\n';
    y += kLegendRow;
  }
}

}  // namespace

std::vector<double> nice_ticks(double max_value, int target) {
  if (!std::isfinite(max_value) || max_value <= 0.0) {
    max_value = 1.0;
  }
  const double raw = max_value / std::max(target, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  const double step = (norm <= 1.0 ? 1.0 : norm <= 2.0 ? 2.0 : norm <= 5.0 ? 5.0 : 10.0) * magnitude;
  const auto count = static_cast<int>(std::ceil(max_value / step - 1e-9));
  std::vector<double> ticks;
  for (int i = 0; i <= std::max(count, 1); ++i) {
    ticks.push_back(i * step);
  }
  return ticks;
}

std::string render_svg(const Plot& plot) {
  double y_max = 0.0;
  for (const auto& series : plot.series) {
    for (const auto& p : series.points) {
      y_max = std::max(y_max, p.value);
    }
  }
  for (const auto& line : plot.lines) {
    y_max = std::max(y_max, line.value);
  }
  const std::vector<double> y_ticks = nice_ticks(y_max * kHeadroom, kYTicks);
  const Frame frame = make_frame(plot, y_ticks);
  const double height = kTop + kHeight + kLegendTop + kLegendRow * static_cast<double>(plot.series.size());
  std::string out = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {0} {1}" width="{0}" height="{1}" role="img">)",
      num(kWidth), num(height));
  out += fmt::format("\n<title>{}</title>\n", html_escape(plot.title));
  append_axes(out, plot, frame, y_ticks);
  append_lines(out, plot, frame);
  for (const auto& series : plot.series) {
    append_series(out, plot, frame, series);
  }
  append_legend(out, plot);
  out += "</svg>\n";
  return out;
}

}  // namespace ccbench::report
