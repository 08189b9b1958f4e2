#pragma once
// trend's printers: terminal and Markdown (every series of a history of up to 60, else those that moved, changed
// software or could not be judged; the software changes, the hosts named, the verdict line), JSON (schema
// ccbench.report.trend 1.0.0: every series with its points), and a web page with an SVG plot per series shown. They
// word what judge_trend decided and decide nothing.
#include <string>

#include "ccbench/report/trend.hpp"

namespace ccbench::report {

/// `markdown`: a Markdown table instead of aligned text.
std::string render_trend_text(const TrendVerdict& v, bool markdown);
std::string render_trend_json(const TrendVerdict& v);
/// The page: the verdict, then per series (every one when there are at most 60; else those that drifted, changed
/// software or were not judged, the first 60) its figure over
/// its runs, the change point and each software change marked.
std::string render_trend_html(const TrendVerdict& v, const std::string& title);

}  // namespace ccbench::report
