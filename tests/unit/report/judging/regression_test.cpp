// ccbench-report regression on folders laid out as regression.sh stores a label (NAME.json results and
// commands.tsv), made of the real runs under tests/data/report/runs: each verdict and exit code.
#include "ccbench/report/regression.hpp"

#include "ccbench/report/renderer.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "ccbench/errors.hpp"

namespace ccbench::report {
namespace {

namespace fs = std::filesystem;
fs::path runs() { return fs::path(CCBENCH_REPORT_DATA) / "runs"; }

/// A stored label: `results` are (NAME, fixture file) copied in as NAME.json; `commands` the lines of
/// commands.tsv (NAME, exit code); none: no commands.tsv.
class Label {
 public:
  Label(const fs::path& dir, const std::vector<std::pair<std::string, std::string>>& results,
        const std::vector<std::pair<std::string, int>>& commands)
      : m_dir(dir) {
    fs::create_directories(dir);
    for (const auto& [name, fixture] : results) {
      fs::copy_file(runs() / fixture, dir / (name + ".json"));
    }
    if (!commands.empty()) {
      std::ofstream tsv(dir / "commands.tsv");
      for (const auto& [name, exit] : commands) {
        tsv << name << '\t' << exit << '\t' << name << " --backend mpi -c 1\n";
      }
    }
  }
  [[nodiscard]] const fs::path& dir() const { return m_dir; }

 private:
  fs::path m_dir;
};

/// A folder of its own for each test, removed after it.
class Regression : public ::testing::Test {
 protected:
  void SetUp() override {
    m_root = fs::temp_directory_path() / ("ccbench-regression-test-" + std::to_string(::getpid()));
    fs::remove_all(m_root);
  }
  void TearDown() override { fs::remove_all(m_root); }
  static RegressionVerdict run(const Label& base, const Label& cand) {
    return compare_run_folders(base.dir(), cand.dir(), CompareOptions{}, kDefaultMaxFileBytes);
  }
  [[nodiscard]] const fs::path& root() const { return m_root; }

 private:
  fs::path m_root;
};

TEST_F(Regression, TheSameRunsAreNoRegression) {
  const Label a(root() / "a", {{"allreduce_bench", "allreduce-np4-a.json"}}, {{"allreduce_bench", 0}});
  const Label b(root() / "b", {{"allreduce_bench", "allreduce-np4-a.json"}}, {{"allreduce_bench", 0}});
  CompareOptions noise;  // one launch a side: judged only on the operator's figure for the launches' variation
  noise.launch_noise = 0.01;
  const auto v = compare_run_folders(a.dir(), b.dir(), noise, kDefaultMaxFileBytes);
  EXPECT_EQ(v.exit_code(), 0);
  ASSERT_EQ(v.benches.size(), 1U);
  ASSERT_TRUE(v.benches[0].comparison);
  const auto rows = v.benches[0].comparison->rows.size();
  EXPECT_GT(rows, 0U);
  EXPECT_EQ(v.text(), fmt::format("no regression (0 SLOWER, 0 FAILED rows in 1 benches; all {} rows judged)", rows));
  EXPECT_EQ(v.label_a, "a");
}

// Issue 36: one launch a side cannot tell a change from the launches' own variation.
TEST_F(Regression, OneLaunchASideIsNoVerdict) {
  const Label a(root() / "a", {{"allreduce_bench", "allreduce-np4-a.json"}}, {{"allreduce_bench", 0}});
  const Label b(root() / "b", {{"allreduce_bench", "allreduce-np4-b.json"}}, {{"allreduce_bench", 0}});
  const auto v = run(a, b);
  EXPECT_EQ(v.exit_code(), 2);
  EXPECT_EQ(v.launches_a, 1U);
  EXPECT_EQ(v.judged, 0U);
  EXPECT_NE(v.text().find("NO VERDICT (none of the "), std::string::npos) << v.text();
  EXPECT_NE(v.text().find("1 launch a side: a change cannot be told from the launches' own variation"),
            std::string::npos)
      << v.text();
}

// Two real runs of one configuration as launches of each side, in both orders: an A/A of real launches.
TEST_F(Regression, LaunchFoldersAreLaunches) {
  const Label a1(root() / "a" / "launch-1", {{"allreduce_bench", "allreduce-np4-a.json"}}, {{"allreduce_bench", 0}});
  const Label a2(root() / "a" / "launch-2", {{"allreduce_bench", "allreduce-np4-b.json"}}, {{"allreduce_bench", 0}});
  const Label b1(root() / "b" / "launch-1", {{"allreduce_bench", "allreduce-np4-b.json"}}, {{"allreduce_bench", 0}});
  const Label b2(root() / "b" / "launch-2", {{"allreduce_bench", "allreduce-np4-a.json"}}, {{"allreduce_bench", 0}});
  CompareOptions options;
  options.aa = true;
  auto v = compare_run_folders(root() / "a", root() / "b", options, kDefaultMaxFileBytes);
  EXPECT_EQ(v.launches_a, 2U);
  EXPECT_EQ(v.launches_b, 2U);
  EXPECT_EQ(v.slower, 0U);
  EXPECT_NE(v.exit_code(), 1) << v.text();
  const std::string text = make_renderer(Format::Terminal, false)->render(v);
  EXPECT_NE(text.find("2 launches a side"), std::string::npos) << text;
  EXPECT_NE(text.find("A/A (the same software on both sides): 0 false alarm(s)"), std::string::npos) << text;
  // A launch of the candidate without the bench's result: FAILED, naming the launch and its log.
  fs::remove(b2.dir() / "allreduce_bench.json");
  v = compare_run_folders(root() / "a", root() / "b", options, kDefaultMaxFileBytes);
  EXPECT_EQ(v.exit_code(), 1);
  EXPECT_EQ(v.names(BenchRegression::State::NoResult), std::vector<std::string>{"allreduce_bench"});
  EXPECT_EQ(v.benches.at(0).why, "launch 2 of 2 has none");
  EXPECT_EQ(v.benches.at(0).log, b2.dir() / "logs" / "allreduce_bench.log");
  // Pairs need as many launches a side; launches are numbered from 1 without a gap.
  const Label b3(root() / "b" / "launch-3", {{"allreduce_bench", "allreduce-np4-a.json"}}, {});
  options.paired = true;
  EXPECT_THROW(compare_run_folders(root() / "a", root() / "b", options, kDefaultMaxFileBytes), UsageError);
  fs::rename(b2.dir(), root() / "b" / "old");
  EXPECT_THROW(compare_run_folders(root() / "a", root() / "b", CompareOptions{}, kDefaultMaxFileBytes), UsageError);
}

TEST_F(Regression, ABenchWithoutResultIsAFailedRegression) {
  const Label a(root() / "a",
                {{"allreduce_bench", "allreduce-np4-a.json"}, {"sendrecv_bench", "sendrecv-pairs-np4.json"}},
                {{"allreduce_bench", 0}, {"sendrecv_bench", 0}});
  const Label b(root() / "b", {{"allreduce_bench", "allreduce-np4-a.json"}},
                {{"allreduce_bench", 0}, {"sendrecv_bench", 1}});
  const auto v = run(a, b);
  EXPECT_EQ(v.exit_code(), 1);
  EXPECT_EQ(v.text(), "REGRESSION (0 SLOWER, 1 FAILED, 0 MISSING rows)");
  EXPECT_EQ(v.failed_benches(), std::vector<std::string>{"sendrecv_bench (exit 1)"});
  EXPECT_EQ(v.names(BenchRegression::State::NoResult), std::vector<std::string>{"sendrecv_bench"});
  const std::string text = make_renderer(Format::Terminal, false)->render(v);
  EXPECT_NE(text.find("sendrecv_bench           FAILED: no result in b (see "), std::string::npos) << text;
  EXPECT_NE(text.find("verdict: REGRESSION (0 SLOWER, 1 FAILED, 0 MISSING rows); exit 1\n"), std::string::npos);
}

TEST_F(Regression, ABaselineWithoutTheBenchIsReportedNotIgnored) {
  const Label a(root() / "a", {{"allreduce_bench", "allreduce-np4-a.json"}, {"allgather_bench", "allgather-np4.json"}},
                {});
  const Label b(root() / "b",
                {{"allreduce_bench", "allreduce-np4-a.json"}, {"sendrecv_bench", "sendrecv-pairs-np4.json"}},
                {{"allreduce_bench", 0}, {"sendrecv_bench", 0}});
  CompareOptions noise;
  noise.launch_noise = 0.01;
  const auto v = compare_run_folders(a.dir(), b.dir(), noise, kDefaultMaxFileBytes);
  EXPECT_EQ(v.exit_code(), 0);
  EXPECT_EQ(v.text(), fmt::format("no regression in the 1 benches compared (all {} rows judged); 1 not compared "
                                  "(missing in a)",
                                  v.rows));
  EXPECT_EQ(v.only_in_base, std::vector<std::string>{"allgather_bench"});
  const std::string text = make_renderer(Format::Terminal, false)->render(v);
  EXPECT_NE(text.find("sendrecv_bench           MISSING in a: not compared"), std::string::npos) << text;
  EXPECT_NE(text.find("baseline a lacks 1 bench(es) of the suite: sendrecv_bench"), std::string::npos) << text;
  EXPECT_NE(text.find("only in a (not in the suite now): allgather_bench"), std::string::npos) << text;
}

TEST_F(Regression, NoRowInCommonIsNoVerdictAndATimeoutWins) {
  const Label a(root() / "a", {{"allreduce_bench", "allgather-np4.json"}}, {});
  const Label b(root() / "b", {{"allreduce_bench", "allreduce-np4-a.json"}}, {});
  auto v = run(a, b);
  EXPECT_EQ(v.exit_code(), 2);
  EXPECT_EQ(v.benches.at(0).state, BenchRegression::State::NoVerdict);
  EXPECT_NE(v.benches.at(0).why.find("no row in common"), std::string::npos) << v.benches.at(0).why;
  const Label c(root() / "c", {{"allreduce_bench", "allreduce-np4-a.json"}, {"reduce_bench", "timed-out.json"}},
                {{"allreduce_bench", 0}, {"reduce_bench", 3}});
  v = run(b, c);
  EXPECT_EQ(v.exit_code(), 3);
  EXPECT_EQ(v.timed_out(), std::vector<std::string>{"reduce_bench"});
}

TEST_F(Regression, JsonHoldsTheCountsCompareGives) {
  const Label a(root() / "a", {{"allreduce_bench", "allreduce-np4-a.json"}}, {});
  const Label b(root() / "b", {{"allreduce_bench", "allreduce-np4-b.json"}}, {});
  const auto v = run(a, b);
  const auto doc = nlohmann::json::parse(make_renderer(Format::Json, false)->render(v));
  EXPECT_EQ(doc.at("schema"), "ccbench.report.regression");
  EXPECT_EQ(doc.at("exit"), v.exit_code());
  const Comparison& c = *v.benches.at(0).comparison;
  EXPECT_EQ(doc.at("benches").at(0).at("counts").at("rows"), c.rows.size());
  EXPECT_EQ(doc.at("totals").at("slower"), v.slower);
  EXPECT_EQ(doc.at("benches").at(0).at("regression"), c.any_regression() || c.any_missing());
}

TEST_F(Regression, AFolderThatIsNoneIsOneLine) {
  const Label a(root() / "a", {{"allreduce_bench", "allreduce-np4-a.json"}}, {});
  EXPECT_THROW(compare_run_folders(a.dir(), root() / "nosuch", CompareOptions{}, kDefaultMaxFileBytes), UsageError);
}

// The evidence rule (issue 35): nothing run is no verdict, never "no regression".
TEST_F(Regression, AnEmptyCandidateIsNoVerdictNeverNoRegression) {
  const Label a(root() / "a", {{"allreduce_bench", "allreduce-np4-a.json"}}, {{"allreduce_bench", 0}});
  const Label empty(root() / "empty", {}, {});
  auto v = run(a, empty);
  EXPECT_EQ(v.exit_code(), 2);
  EXPECT_EQ(v.text(), "NO VERDICT (empty holds no result and no bench in commands.tsv: the suite produced nothing)");
  std::ofstream(empty.dir() / "commands.tsv").close();  // an empty commands.tsv: the same
  EXPECT_EQ(run(a, empty).exit_code(), 2);
  const Label none(root() / "none", {}, {});
  v = run(none, empty);  // two empty folders
  EXPECT_EQ(v.exit_code(), 2);
  const std::string text = make_renderer(Format::Terminal, false)->render(v);
  EXPECT_NE(text.find("verdict: NO VERDICT (empty holds no result"), std::string::npos) << text;
}

TEST_F(Regression, ADanglingSymlinkIsAbsentAsAMissingFileIs) {
  const Label a(root() / "a",
                {{"allreduce_bench", "allreduce-np4-a.json"}, {"sendrecv_bench", "sendrecv-pairs-np4.json"}},
                {{"allreduce_bench", 0}, {"sendrecv_bench", 0}});
  const Label b(root() / "b", {{"allreduce_bench", "allreduce-np4-a.json"}},
                {{"allreduce_bench", 0}, {"sendrecv_bench", 0}});
  const auto missing = run(a, b);
  fs::create_symlink(root() / "nowhere.json", b.dir() / "sendrecv_bench.json");
  const auto dangling = run(a, b);
  EXPECT_EQ(missing.exit_code(), 1);
  EXPECT_EQ(dangling.exit_code(), 1);
  EXPECT_EQ(dangling.text(), missing.text());
  EXPECT_EQ(dangling.names(BenchRegression::State::NoResult), std::vector<std::string>{"sendrecv_bench"});
  const std::string text = make_renderer(Format::Terminal, false)->render(dangling);
  EXPECT_NE(text.find("sendrecv_bench           FAILED: no result in b (" + (b.dir() / "sendrecv_bench.json").string() +
                      " is a dangling symlink; see "),
            std::string::npos)
      << text;
  // In the baseline: absent alike, MISSING there, not compared.
  fs::remove(a.dir() / "sendrecv_bench.json");
  fs::create_symlink(root() / "nowhere.json", a.dir() / "sendrecv_bench.json");
  fs::remove(b.dir() / "sendrecv_bench.json");  // the symlink itself (copying over it would write its target)
  fs::copy_file(runs() / "sendrecv-pairs-np4.json", b.dir() / "sendrecv_bench.json");
  EXPECT_EQ(run(a, b).names(BenchRegression::State::NotInBase), std::vector<std::string>{"sendrecv_bench"});
}

TEST_F(Regression, AForeignJsonInAFolderIsNoVerdictAsCompareRefusesIt) {
  const Label a(root() / "a", {{"allreduce_bench", "allreduce-np4-a.json"}}, {{"allreduce_bench", 0}});
  const Label b(root() / "b", {{"allreduce_bench", "allreduce-np4-a.json"}}, {{"allreduce_bench", 0}});
  std::ofstream(b.dir() / "notes.json") << R"({"hello": "world"})";
  auto v = run(a, b);
  EXPECT_EQ(v.exit_code(), 2);
  EXPECT_NE(v.text().find("NO VERDICT (" + (b.dir() / "notes.json").string()), std::string::npos) << v.text();
  fs::remove(b.dir() / "notes.json");
  std::ofstream(a.dir() / "notes.json") << "[]";
  v = run(a, b);
  EXPECT_EQ(v.exit_code(), 2);
  EXPECT_NE(v.text().find((a.dir() / "notes.json").string()), std::string::npos) << v.text();
}

}  // namespace
}  // namespace ccbench::report
