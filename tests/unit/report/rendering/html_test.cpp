// The HTML page (ccbench-report html) on the real result files under tests/data/report/runs.
#include "ccbench/report/html.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "ccbench/report/input.hpp"
#include "ccbench/report/text.hpp"

namespace ccbench::report {
namespace {

std::vector<LoadedRun> load(const std::vector<std::string>& files) {
  std::vector<LoadedRun> runs;
  runs.reserve(files.size());
  for (const auto& file : files) {
    runs.push_back(read_result_file(std::string(CCBENCH_REPORT_DATA) + "/runs/" + file));
  }
  return runs;
}

std::string render(const std::vector<std::string>& files, const HtmlOptions& options = {}) {
  return render_html(load(files), options);
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Every match of `pattern`'s first group, in order.
std::vector<std::string> captures(const std::string& text, const std::string& pattern) {
  std::vector<std::string> found;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    found.push_back((*it)[1].str());
  }
  return found;
}

// The <svg> elements of the page, each as its text.
std::vector<std::string> svgs(const std::string& page) {
  std::vector<std::string> found;
  for (auto at = page.find("<svg"); at != std::string::npos; at = page.find("<svg", at + 1)) {
    found.push_back(page.substr(at, page.find("</svg>", at) - at));
  }
  return found;
}

std::vector<std::string> all_runs() {
  return {"allgather-np4.json",        "allreduce-np2-peak10.json", "allreduce-np2-peak20.json",
          "allreduce-np2-v1.0.0.json", "allreduce-np4-a.json",      "allreduce-np4-b.json",
          "hostile-names.json",        "sendrecv-pairs-np4.json",   "timed-out.json"};
}

TEST(HtmlPage, HostileNamesAreEscapedEverywhere) {
  const std::string page = render({"hostile-names.json"});
  EXPECT_EQ(lower(page).find("<script"), std::string::npos);
  EXPECT_EQ(lower(page).find("<img"), std::string::npos);
  // The hostname: in the runs table, the table's host line and the tooltips cannot hold it raw.
  EXPECT_GE(count(page, "&lt;script&gt;document.title=1&lt;/script&gt;"), 2U);
  // The label, which names the run in the runs table, the tables, and the SVG's legend and tooltips.
  const std::string label = "&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quotes&quot;";
  EXPECT_GE(count(page, label), 4U);
  ASSERT_EQ(svgs(page).size(), 1U);
  EXPECT_NE(svgs(page).front().find(label + " · out-of-place</text>"), std::string::npos);
}

// The fabric's findings of a run that has them (tests/data/fabric: the rdma tier guest's ib_write_bw_bench), in a
// section of their own; none for runs without.
TEST(HtmlPage, FabricFindingsHaveTheirSection) {
  const std::string page = render({"../../fabric/rxe-ib_write_bw.json"});
  EXPECT_EQ(count(page, "<h2>Fabric</h2>"), 1U);
  EXPECT_EQ(count(page,
                  "<li><b>rxe-ib_write_bw</b>: ccbench-vm: error counters moved in 0.5 s: rxe0 port 1 "
                  "completer_retry_err +6, rxe0 port 1 duplicate_request +176</li>"),
            1U);
  EXPECT_EQ(count(render({"allreduce-np4-a.json"}), "<h2>Fabric</h2>"), 0U);
}

TEST(HtmlPage, TitleIsEscaped) {
  HtmlOptions options;
  options.title = "</title><script>x</script> & co";
  const std::string page = render({"allreduce-np4-a.json"}, options);
  EXPECT_NE(page.find("<title>&lt;/title&gt;&lt;script&gt;x&lt;/script&gt; &amp; co</title>"), std::string::npos);
  EXPECT_NE(page.find("<h1>&lt;/title&gt;&lt;script&gt;x&lt;/script&gt; &amp; co</h1>"), std::string::npos);
  EXPECT_EQ(lower(page).find("<script"), std::string::npos);
}

TEST(HtmlPage, SelfContainedWithContentSecurityPolicy) {
  const std::string page = render(all_runs());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>\n", 0), 0U);
  EXPECT_NE(page.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                      "style-src 'unsafe-inline'; img-src data:"),
            std::string::npos);
  EXPECT_LT(page.find("Content-Security-Policy"), page.find("<style>"));  // in force before any content
  EXPECT_EQ(lower(page).find("<script"), std::string::npos);
  // Text and attribute values are escaped, so every '<' opens one of our tags: none may point elsewhere.
  const std::regex reference(R"(\s(src|href|xlink:href|action|data)\s*=)");
  for (const auto& tag : captures(page, "(<[^<>]*>)")) {
    EXPECT_FALSE(std::regex_search(lower(tag), reference)) << tag;
    EXPECT_EQ(lower(tag).find("url("), std::string::npos) << tag;
  }
  EXPECT_EQ(lower(page).find("@import"), std::string::npos);
  // "http" only in the CSP's http-equiv and the SVG namespace.
  const std::size_t http = count(lower(page), "http");
  EXPECT_EQ(http, count(page, "http-equiv=") + count(page, "xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_EQ(count(page, "http-equiv="), 1U);
}

TEST(HtmlPage, Deterministic) {
  const auto runs = load(all_runs());
  const std::string first = render_html(runs, {});
  const std::string second = render_html(load(all_runs()), {});
  EXPECT_EQ(first, second);
  EXPECT_GT(first.size(), 10000U);
}

TEST(HtmlPage, OneSvgPerPlottedSection) {
  // sendrecv --split pairs: two groups side by side, two plots.
  const std::string pairs = render({"sendrecv-pairs-np4.json"});
  EXPECT_EQ(count(pairs, "<svg"), 2U);
  EXPECT_EQ(count(pairs, "<section class=\"plot-section\">"), 2U);
  EXPECT_NE(pairs.find("group pair:0-1 (2 ranks)</h3>"), std::string::npos);
  EXPECT_NE(pairs.find("group pair:2-3 (2 ranks)</h3>"), std::string::npos);
  // Every file: world groups of 4 ranks (all_gather, all_reduce), of 2 (all_reduce np2 x 4 files, one of
  // them all timed out), of 1 (sendrecv, hostile) and the two pairs.
  const std::string all = render(all_runs());
  EXPECT_EQ(count(all, "<svg"), 6U);
  EXPECT_EQ(count(all, "</svg>"), 6U);
}

TEST(HtmlPage, PeakLineAndLabelWhenThePeakIsKnown) {
  const std::string page = render({"allreduce-np2-peak20.json"});
  ASSERT_EQ(svgs(page).size(), 1U);
  const std::string svg = svgs(page).front();
  EXPECT_EQ(count(svg, "<g class=\"peak\">"), 1U);
  EXPECT_EQ(count(svg, "stroke-dasharray"), 1U);
  EXPECT_NE(svg.find(">peak 20 GB/s (platform A (peak 20))</text>"), std::string::npos);
  // The y range holds the peak: busbw here is below 10 GB/s, yet a tick at 20 or above exists.
  double top_tick = 0.0;
  for (const auto& tick : captures(svg, R"(text-anchor="end" dominant-baseline="middle">([0-9.]+)</text>)")) {
    top_tick = std::max(top_tick, std::stod(tick));
  }
  EXPECT_GE(top_tick, 20.0);

  for (const auto* file : {"allreduce-np4-a.json", "hostile-names.json", "allreduce-np2-v1.0.0.json"}) {
    const std::string without = render({file});
    EXPECT_EQ(without.find("<g class=\"peak\">"), std::string::npos) << file;
    EXPECT_EQ(without.find("stroke-dasharray"), std::string::npos) << file;
    EXPECT_EQ(without.find(">peak "), std::string::npos) << file;
  }
}

TEST(HtmlPage, TwoPeaksInOnePlot) {
  const std::string page = render({"allreduce-np2-peak20.json", "allreduce-np2-peak10.json"});
  ASSERT_EQ(svgs(page).size(), 1U);
  const std::string svg = svgs(page).front();
  EXPECT_EQ(count(svg, "<g class=\"peak\">"), 2U);
  EXPECT_NE(svg.find(">peak 20 GB/s (platform A (peak 20))</text>"), std::string::npos);
  EXPECT_NE(svg.find(">peak 10 GB/s (platform B (peak 10))</text>"), std::string::npos);
  EXPECT_EQ(count(svg, "<g class=\"series\">"), 4U);
}

TEST(HtmlPage, RunsSharingAGroupAreOverlaid) {
  const std::string page = render({"allreduce-np4-a.json", "allreduce-np4-b.json"});
  ASSERT_EQ(svgs(page).size(), 1U);
  const std::string svg = svgs(page).front();
  EXPECT_EQ(count(svg, "<g class=\"series\">"), 4U);
  EXPECT_EQ(count(svg, "<polyline"), 4U);
  EXPECT_EQ(count(svg, "<g class=\"legend-entry\">"), 4U);
  for (const auto* series : {"base · out-of-place", "base · in-place", "rerun · out-of-place", "rerun · in-place"}) {
    EXPECT_NE(svg.find(std::string("<g class=\"series\"><title>") + series + "</title>"), std::string::npos) << series;
  }
  const auto colours = captures(svg, R"re(<polyline points="[^"]*" fill="none" stroke="(#[0-9a-f]{6})")re");
  EXPECT_EQ(std::set<std::string>(colours.begin(), colours.end()).size(), 4U);
  // Each run swept 8 B .. 512 KiB by 4 (9 sizes) in both placements: 36 markers, each with its tooltip.
  EXPECT_EQ(captures(svg, R"(<title>((base|rerun) · (out-of-place|in-place), [0-9]+ [KM]?i?B): )").size(), 36U);
  EXPECT_NE(svg.find("<title>base · out-of-place, 512 KiB: "), std::string::npos);
  // Two tables, one per run.
  EXPECT_EQ(count(page, "<table class=\"results\">"), 2U);
}

TEST(HtmlPage, TimedOutCaseIsInTheTableNotInThePlot) {
  const std::string alone = render({"timed-out.json"});
  EXPECT_EQ(count(alone, "<svg"), 0U);
  EXPECT_NE(alone.find("<td class=\"status-bad\">timed_out: no progress for 0.3 s (--timeout 0.3)</td>"),
            std::string::npos);
  EXPECT_NE(alone.find("<td class=\"num\">256 MiB</td><td class=\"num\">67108864</td><td>float32</td>"),
            std::string::npos);
  EXPECT_NE(alone.find("<ul class=\"not-plotted\"><li>all_reduce sum · float32 · allreduce_bench · group world "
                       "(2 ranks)</li></ul>"),
            std::string::npos);

  // Shares its plot with platform A's run (all_reduce float32, world of 2): only that run is drawn.
  const std::string shared = render({"allreduce-np2-peak20.json", "timed-out.json"});
  ASSERT_EQ(svgs(shared).size(), 1U);
  const std::string svg = svgs(shared).front();
  EXPECT_EQ(count(svg, "<g class=\"series\">"), 2U);
  EXPECT_EQ(svg.find("timeout"), std::string::npos);
  EXPECT_EQ(svg.find("256 MiB"), std::string::npos);
  EXPECT_NE(shared.find("<h3>timeout — all_reduce sum · float32"), std::string::npos);
  EXPECT_NE(shared.find("timed_out: no progress for 0.3 s"), std::string::npos);
}

TEST(HtmlPage, TablesQuoteTheResults) {
  const auto runs = load({"allreduce-np4-a.json"});
  const std::string page = render_html(runs, {});
  const auto& results = runs.front().doc.results;
  ASSERT_EQ(results.size(), 18U);
  for (const auto& r : results) {
    ASSERT_TRUE(r.time.has_value());
    EXPECT_NE(page.find("<td class=\"num\">" + format_number(r.time->p50 * 1e6, 2) + "</td>"), std::string::npos)
        << r.size_bytes;
    EXPECT_NE(page.find("<td class=\"num\">" + format_size(r.size_bytes, SizeStyle::Binary) + "</td>"),
              std::string::npos);
  }
  // Header: both placements, with units; 9 sizes, one row each, both placements checked (0 wrong elements).
  EXPECT_NE(page.find("<th colspan=\"7\">out-of-place</th><th colspan=\"7\">in-place</th>"), std::string::npos);
  EXPECT_NE(page.find("<th>busbw (GB/s)</th>"), std::string::npos);
  EXPECT_EQ(count(page, "<td class=\"status-ok\">ok</td>"), 18U);
  EXPECT_EQ(count(page, "<td class=\"num\">0</td><td class=\"status-ok\">"), 18U);
  EXPECT_NE(page.find("<p class=\"meta\">hosts: vm · peak: host memory: no spec for shared-memory copies</p>"),
            std::string::npos);
}

TEST(HtmlPage, RunsTableDescribesEachRun) {
  const std::string page = render({"allreduce-np4-a.json", "hostile-names.json", "allreduce-np2-v1.0.0.json"});
  EXPECT_NE(page.find("<tr><td>base</td><td class=\"file\">" +
                      html_escape(std::string(CCBENCH_REPORT_DATA) + "/runs/allreduce-np4-a.json") +
                      "</td><td>allreduce_bench</td><td>1.1.0</td><td>2026-11-22T07:38:05.352Z</td><td>vm</td>"
                      "<td class=\"num\">4</td><td>mpi</td><td>mpi: Open MPI v4.1.4<br>mpi_standard: 3.1</td>"
                      "<td>batch</td><td>0.1.0 (3dc8f3b50a6e-dirty)</td></tr>"),
            std::string::npos);
  EXPECT_NE(page.find("<td>1.0.0</td>"), std::string::npos);
  EXPECT_NE(page.find("<td>&lt;script&gt;document.title=1&lt;/script&gt;</td><td class=\"num\">1</td>"),
            std::string::npos);
}

}  // namespace
}  // namespace ccbench::report
