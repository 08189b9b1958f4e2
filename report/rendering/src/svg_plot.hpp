#pragma once
// An inline SVG line plot for the HTML page: y (linear, from 0) against a size in bytes (log2 x axis).
// Every string handed in here is raw text; the renderer escapes it wherever it is written.
#include <cstdint>
#include <string>
#include <vector>

namespace ccbench::report {

enum class Marker { Circle, Square };

struct PlotPoint {
  std::uint64_t size_bytes = 0;
  double value = 0.0;
};

struct PlotSeries {
  std::string label;   // legend text
  std::string colour;  // "#rrggbb"
  Marker marker = Marker::Circle;
  std::vector<PlotPoint> points;  // drawn in the order given (sort by size first)
};

/// A dashed horizontal line across the plot (a peak), labelled at its right end.
struct PlotLine {
  double value = 0.0;
  std::string label;
  std::string colour;
};

struct Plot {
  std::string title;    // the SVG's <title> (accessible name)
  std::string y_label;  // "busbw (GB/s)"
  std::string x_label;  // "message size (log2 scale)"
  std::string unit;     // of the values, for the markers' tooltips: "GB/s"
  std::vector<PlotSeries> series;
  std::vector<PlotLine> lines;
};

/// Ticks from 0 to at least `max_value` at a 1/2/5 x 10^k step, about `target` of them.
std::vector<double> nice_ticks(double max_value, int target);

/// One <svg> element. Deterministic: the same plot gives the same bytes.
std::string render_svg(const Plot& plot);

}  // namespace ccbench::report
