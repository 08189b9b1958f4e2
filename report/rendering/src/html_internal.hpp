#pragma once
// What html.cpp (the page) and html_results.cpp (its plots and results tables) share.
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/report/input.hpp"
#include "ccbench/report/text.hpp"

namespace ccbench::report::detail {

inline std::string esc(std::string_view text) { return html_escape(text); }

inline std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const auto& part : parts) {
    out += (out.empty() ? "" : std::string(separator)) + part;
  }
  return out;
}

/// A page's start: doctype, the Content-Security-Policy (no script, no fetch), the style, the title and its <h1>.
std::string page_open(std::string_view title);

/// The "Bus bandwidth against size" section: one plot per group of results across runs, and the groups not plotted.
std::string plots(const std::vector<LoadedRun>& runs, const std::vector<std::string>& names);

/// The "Results" section: one table per run and group of results.
std::string result_tables(const std::vector<LoadedRun>& runs, const std::vector<std::string>& names);

}  // namespace ccbench::report::detail
