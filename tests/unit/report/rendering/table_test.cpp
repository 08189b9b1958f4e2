#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "ccbench/report/renderer.hpp"
#include "ccbench/report/table.hpp"

namespace ccbench::report {
namespace {

const std::filesystem::path kRuns = std::filesystem::path(CCBENCH_REPORT_DATA) / "runs";

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

std::string render_tables(const std::vector<LoadedRun>& runs, Format format, bool colour) {
  return make_renderer(format, colour)->render(make_table_model(runs));
}

TEST(ReportTable, OneSectionPerGroup) {
  const auto runs = read_result_files({(kRuns / "sendrecv-pairs-np4.json").string()});
  const auto text = render_tables(runs, Format::Terminal, false);
  EXPECT_EQ(count(text, "group pair:0-1 (ranks 0,1 on vm)"), 1U);
  EXPECT_EQ(count(text, "group pair:2-3 (ranks 2,3 on vm)"), 1U);
  EXPECT_EQ(count(text, "\x1b["), 0U);
}

TEST(ReportTable, CsvAndJsonHoldEveryCase) {
  const auto runs = read_result_files({(kRuns / "allreduce-np4-a.json").string()});
  const auto cases = runs.front().doc.results.size();
  EXPECT_EQ(count(render_tables(runs, Format::Csv, false), "\n"), cases + 1);
  const auto j = nlohmann::json::parse(render_tables(runs, Format::Json, false));
  EXPECT_EQ(j.at("rows").size(), cases);
  EXPECT_EQ(j.at("rows")[0].at("benchmark"), "allreduce_bench");
  ASSERT_EQ(j.at("groups").size(), 1U);
  const auto& g = j.at("groups")[0];
  EXPECT_EQ(g.at("largest_size_bytes"), 524288);
  EXPECT_EQ(g.at("cases").at("ok"), cases);
  double best = 0.0;
  for (const auto& r : runs.front().doc.results) {
    best = std::max(best, r.busbw_GBps);
  }
  EXPECT_DOUBLE_EQ(g.at("max_busbw_GBps").get<double>(), best);
}

// A run with fabric evidence (the rdma tier guest's ib_write_bw_bench, tests/data/fabric): its findings in every
// form of the table; a run without (schema 1.0.0) has none, and its JSON no "fabric" key.
TEST(ReportTable, FabricFindingsInEveryForm) {
  const auto rxe = (std::filesystem::path(CCBENCH_REPORT_DATA) / "../fabric/rxe-ib_write_bw.json").string();
  const auto runs = read_result_files({rxe});
  const std::string finding =
      "ccbench-vm: error counters moved in 0.5 s: rxe0 port 1 completer_retry_err +6, rxe0 "
      "port 1 duplicate_request +176";
  EXPECT_EQ(count(render_tables(runs, Format::Terminal, false), "# fabric: " + finding + "\n"), 1U);
  EXPECT_EQ(count(render_tables(runs, Format::Markdown, false), "- fabric: " + finding + "\n"), 1U);
  const auto j = nlohmann::json::parse(render_tables(runs, Format::Json, false));
  EXPECT_EQ(j.at("schema_version"), "1.1.0");
  ASSERT_EQ(j.at("fabric").size(), 1U);
  EXPECT_EQ(j.at("fabric")[0].at("run"), "rxe-ib_write_bw");
  EXPECT_EQ(j.at("fabric")[0].at("findings"), nlohmann::json::array({finding}));
  const auto old = read_result_files({(kRuns / "allreduce-np4-a.json").string()});
  EXPECT_FALSE(nlohmann::json::parse(render_tables(old, Format::Json, false)).contains("fabric"));
  EXPECT_EQ(count(render_tables(old, Format::Terminal, false), "fabric"), 0U);
}

TEST(ReportTable, NotOkCasesShowStatusAndReason) {
  const auto runs = read_result_files({(kRuns / "timed-out.json").string()});
  const auto text = render_tables(runs, Format::Terminal, true);
  EXPECT_NE(text.find("timed_out"), std::string::npos);
  EXPECT_NE(text.find("256 MiB out-of-place: timed_out: no progress for 0.3 s"), std::string::npos);
  EXPECT_NE(text.find("\x1b[31mtimed_out\x1b[0m"), std::string::npos);  // colour only when asked
}

TEST(ReportTable, HostileNamesAreDefused) {
  const auto runs = read_result_files({(kRuns / "hostile-names.json").string()});
  const auto md = render_tables(runs, Format::Markdown, false);
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_NE(md.find("&lt;script&gt;"), std::string::npos);
  const auto csv = render_tables(runs, Format::Csv, false);
  EXPECT_NE(csv.find("\"<img src=x onerror=alert(1)> & \"\"quotes\"\"\""), std::string::npos);
}

TEST(ReportTable, PeakShownWhenKnown) {
  const auto runs = read_result_files({(kRuns / "allreduce-np2-peak20.json").string()});
  EXPECT_NE(render_tables(runs, Format::Terminal, false).find("peak 20.0 GB/s (--peak-GBps given on the command line)"),
            std::string::npos);
}

// --junit is accept's and fleet's: a table has no test cases, and asking for them is a programming error.
TEST(ReportTable, JunitRendersNoTable) {
  const auto runs = read_result_files({(kRuns / "allreduce-np4-a.json").string()});
  EXPECT_THROW((void)render_tables(runs, Format::Junit, false), std::logic_error);
}

}  // namespace
}  // namespace ccbench::report
