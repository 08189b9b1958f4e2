#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "ccbench/report/input.hpp"
#include "ccbench/report/openmetrics.hpp"

namespace ccbench::report {
namespace {

std::string run_file(const std::string& name) { return std::string(CCBENCH_REPORT_DATA) + "/runs/" + name; }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    out.push_back(line);
  }
  return out;
}

/// The text format's sample line: name, optional {label="value",...} with escaped values, a number.
const char* const kSample =
    (R"re(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})? ([-+0-9.eE]+|NaN|[+-]Inf))re");

/// Checks the exposition's syntax line by line: every family's HELP then TYPE gauge, once, before its samples;
/// every sample of a family announced; no series twice; `# EOF` last. Returns the series by family.
std::map<std::string, std::size_t> checked(const Exposition& e) {
  std::map<std::string, std::size_t> series;
  std::set<std::string> seen;
  std::string family;
  const std::regex sample(kSample);
  const auto lines = lines_of(e.text);
  EXPECT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(), "# EOF");
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string& line = lines[i];
    std::smatch m;
    if (line.starts_with("# HELP ")) {
      family = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_FALSE(series.contains(family)) << "a second HELP for " << family;
      series[family] = 0;
      EXPECT_EQ(lines.at(i + 1), "# TYPE " + family + " gauge");
      ++i;
    } else if (std::regex_match(line, m, sample)) {
      EXPECT_EQ(m[1].str(), family) << line;
      EXPECT_TRUE(seen.insert(line.substr(0, line.rfind(' '))).second) << "series twice: " << line;
      ++series[family];
    } else {
      ADD_FAILURE() << "not a line of the text format: " << line;
    }
  }
  std::size_t total = 0;
  for (const auto& [name, n] : series) {
    EXPECT_GT(n, 0U) << name << " announced without a sample";
    total += n;
  }
  EXPECT_EQ(total, e.series);
  EXPECT_EQ(series.size(), e.families);
  return series;
}

TEST(ReportOpenMetrics, FamilyNamesFollowPrometheusNaming) {
  std::set<std::string_view> names;
  const std::regex name("ccbench_[a-z0-9_]+");
  const std::regex reserved("_(total|count|sum|bucket|info|created)$");  // counters', histograms', info's
  const std::regex abbreviation("_(ms|us|ns|sec|gbs|gb|mb|kb|percent|pct|bits)(_|$)");
  const std::regex type("_(counter|gauge|histogram|summary|untyped)(_|$)");  // promtool: no type in the name
  for (const auto& f : metric_families()) {
    const std::string n(f.name);
    EXPECT_TRUE(names.insert(f.name).second) << n << " twice";
    EXPECT_TRUE(std::regex_match(n, name)) << n;
    EXPECT_FALSE(std::regex_search(n, reserved)) << n << ": a gauge with a reserved suffix";
    EXPECT_FALSE(std::regex_search(n, abbreviation)) << n << ": a unit that is not a base unit";
    EXPECT_FALSE(std::regex_search(n, type)) << n << ": a type in the name";
    if (n.find("bandwidth") != std::string::npos) {
      EXPECT_TRUE(n.ends_with("_bytes_per_second") || n.ends_with("_ratio")) << n;
    }
    if (n.find("time") != std::string::npos || n.find("interval") != std::string::npos) {
      EXPECT_TRUE(n.ends_with("_seconds")) << n;
    }
    EXPECT_TRUE(!f.help.empty() && f.help.back() == '.') << n << ": HELP '" << f.help << "'";
  }
}

TEST(ReportOpenMetrics, LabelValuesAreEscaped) {
  EXPECT_EQ(escape_label_value("plain-host_1.x"), "plain-host_1.x");
  EXPECT_EQ(escape_label_value("a\\b\"c\nd"), R"(a\\b\"c\nd)");
  EXPECT_EQ(escape_label_value("µs <b>"), "µs <b>");  // UTF-8 and markup stay as they are

  auto run = read_result_file(run_file("allreduce-np2-peak10.json"));
  for (auto& r : run.doc.results) {
    r.group_hosts = {"quote\"back\\slash\nnew line"};
  }
  ExportInput in;
  in.runs.push_back(std::move(run));
  const auto e = render_openmetrics(in);
  checked(e);
  EXPECT_NE(e.text.find(R"(node="quote\"back\\slash\nnew line")"), std::string::npos);
}

TEST(ReportOpenMetrics, ResultsGiveEveryFigureOncePerRow) {
  ExportInput in;
  in.runs.push_back(read_result_file(run_file("allreduce-np2-peak10.json")));
  const auto rows = in.runs.front().doc.results.size();
  const auto e = render_openmetrics(in);
  const auto series = checked(e);
  EXPECT_EQ(series.at("ccbench_case_status"), rows);
  EXPECT_EQ(series.at("ccbench_bus_bandwidth_peak_ratio"), series.at("ccbench_bus_bandwidth_bytes_per_second"));
  EXPECT_EQ(series.at("ccbench_exec_time_p95_seconds"), series.at("ccbench_exec_time_median_seconds"));
  EXPECT_EQ(series.at("ccbench_run_timestamp_seconds"), 1U);
  EXPECT_EQ(e.replaced, 0U);
  // labels: never a run id, a path or a label of free text
  const auto& run = in.runs.front();
  EXPECT_EQ(e.text.find(run.doc.run.id), std::string::npos);
  EXPECT_EQ(e.text.find("allreduce-np2-peak10"), std::string::npos);
}

TEST(ReportOpenMetrics, ASeriesGivenTwiceKeepsTheLaterValue) {
  ExportInput in;
  in.runs.push_back(read_result_file(run_file("allreduce-np4-a.json")));
  const auto once = render_openmetrics(in);
  in.runs.push_back(read_result_file(run_file("allreduce-np4-b.json")));
  const auto twice = render_openmetrics(in);
  checked(twice);
  EXPECT_EQ(twice.series, once.series);
  EXPECT_EQ(twice.replaced, once.series);
  in.runs.erase(in.runs.begin());
  EXPECT_EQ(twice.text, render_openmetrics(in).text);  // b's values, a's order (the same)
}

TEST(ReportOpenMetrics, FabricDeltasPerHost) {
  ExportInput in;
  in.runs.push_back(read_result_file(std::string(CCBENCH_SOURCE_DIR) + "/tests/data/fabric/rxe-ib_write_bw.json"));
  ASSERT_FALSE(in.runs.front().doc.fabric.empty());
  std::size_t moved = 0;
  for (const auto& h : in.runs.front().doc.fabric) {
    moved += h.moved.size();
  }
  const auto series = checked(render_openmetrics(in));
  EXPECT_EQ(series.at("ccbench_fabric_moved"), moved);
  EXPECT_EQ(series.at("ccbench_fabric_reading_interval_seconds"), in.runs.front().doc.fabric.size());
}

TEST(ReportOpenMetrics, VerdictsAsStatesFiguresAndExpiry) {
  ExportInput in;
  ExportedAccept a{"h100-sxm-8gpu", "fail", {}, epoch_seconds("2026-12-01T00:00:00Z")};
  ExportedCheck busbw{"allreduce-16g", "busbw", "fail", 412e9, 460e9, 0.9, 0.95, std::nullopt};
  ExportedCheck wrong{"no-wrong", "no_wrong_elements", "pass", {}, {}, {}, {}, 0.0};
  a.checks = {busbw, wrong};
  in.accepts.push_back(a);
  ExportedFleet f;
  f.bench = "ib_write_lat_bench";
  f.size_bytes = 8;
  f.latency = true;
  f.verdict = "pass";
  f.level = {2.5};
  f.reference = {2.5};
  f.low = {false};
  f.hosts = {{"node1", 0, false, 3, 0, 1.0}};
  in.fleets.push_back(f);
  const auto e = render_openmetrics(in);
  const auto series = checked(e);
  EXPECT_EQ(series.at("ccbench_accept_verdict"), 4U);  // pass, fail, waived, warning: one of them 1
  EXPECT_NE(e.text.find(R"(ccbench_accept_verdict{profile="h100-sxm-8gpu",verdict="fail"} 1)"), std::string::npos);
  EXPECT_EQ(series.at("ccbench_accept_check_verdict"), 8U);
  EXPECT_NE(e.text.find(R"(ccbench_accept_valid_until_timestamp_seconds{profile="h100-sxm-8gpu"} 1796083200)"),
            std::string::npos);
  EXPECT_NE(e.text.find("ccbench_accept_check_min_bus_bandwidth_bytes_per_second{profile=\"h100-sxm-8gpu\","
                        "check=\"allreduce-16g\"} 460000000000"),
            std::string::npos);
  EXPECT_EQ(series.at("ccbench_accept_check_findings"), 1U);
  EXPECT_NE(
      e.text.find(R"(ccbench_fleet_level_seconds{bench="ib_write_lat_bench",size_bytes="8",local_rank="0"} 2.5e-06)"),
      std::string::npos);
  EXPECT_FALSE(series.contains("ccbench_fleet_level_bytes_per_second"));
}

TEST(ReportOpenMetrics, EpochSecondsReadsRfc3339) {
  EXPECT_EQ(epoch_seconds("1970-01-01T00:00:00Z"), 0.0);
  EXPECT_EQ(epoch_seconds("2026-11-22T07:38:06Z"), 1795333086.0);
  EXPECT_NEAR(*epoch_seconds("2026-11-22T07:38:06.916Z"), 1795333086.916, 1e-6);
  EXPECT_EQ(epoch_seconds("2026-11-22T08:38:06+01:00"), 1795333086.0);
  EXPECT_EQ(epoch_seconds("2026-11-22t02:38:06-05:00"), 1795333086.0);
  for (const char* bad :
       {"", "yesterday", "2026-11-22", "2026-11-22T07:38:06", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
        "2026-11-22T24:00:00Z", "2026-11-22T07:38:06.Z", "2026-11-22T07:38:06Z trailing", "2026-11-22T07:38:06+0100"}) {
    EXPECT_FALSE(epoch_seconds(bad)) << bad;
  }
}

}  // namespace
}  // namespace ccbench::report
