// ccbench-report accept: each check kind passing and failing on the real result files under
// tests/data/report/runs, naming of the failing group, the printers and JUnit XML. Thresholds are computed here
// from the data, never hard-coded measurements. Profiles are tested in accept_profile_test.cpp, the fabric checks
// in accept_fabric_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "accept_test_util.hpp"
#include "ccbench/report/accept.hpp"
#include "ccbench/report/renderer.hpp"

namespace ccbench::report {
namespace {

using accept_test::check_one;
using accept_test::find;
using accept_test::json;
using accept_test::kProfiles;
using accept_test::one_check;
using accept_test::run_of;

/// The smallest busbw of each group at `size` (both placements).
std::map<std::string, double> lowest_by_group(const LoadedRun& run, std::uint64_t size) {
  std::map<std::string, double> low;
  for (const auto& r : run.doc.results) {
    if (r.size_bytes == size) {
      const auto it = low.find(r.group_id);
      low[r.group_id] = it == low.end() ? r.busbw_GBps : std::min(it->second, r.busbw_GBps);
    }
  }
  return low;
}

/// How the printers write a rate: 1 decimal from 100 GB/s, 2 from 1 GB/s, else 3.
std::string gbps_text(double v) { return fmt::format("{:.{}f} GB/s", v, v >= 100 ? 1 : v >= 1 ? 2 : 3); }

// --- checks on real runs -------------------------------------------------------------------------

TEST(AcceptEvaluate, SmokeProfilePassesOnHostRun) {
  const auto runs = std::vector<LoadedRun>{run_of("allreduce-np4-a.json")};
  const auto outcomes = evaluate(load_profile(kProfiles / "mpi-host-smoke.json"), runs);
  EXPECT_TRUE(all_passed(outcomes));
  for (const auto& o : outcomes) {
    EXPECT_EQ(o.verdict, CheckVerdict::Pass) << o.id << ": " << o.detail;
    EXPECT_TRUE(o.culprit.empty()) << o.id;
  }
  const auto low = lowest_by_group(runs[0], 512 * 1024).at("world");
  EXPECT_EQ(find(outcomes, "allreduce-busbw-512k").measured, gbps_text(low));
}

TEST(AcceptEvaluate, SmokeProfileFailsOnTimedOutRunNamingOpSizeGroup) {
  const auto outcomes = evaluate(load_profile(kProfiles / "mpi-host-smoke.json"), {run_of("timed-out.json")});
  EXPECT_FALSE(all_passed(outcomes));
  const auto& timed_out = find(outcomes, "no-timed-out");
  EXPECT_EQ(timed_out.verdict, CheckVerdict::Fail);
  EXPECT_EQ(timed_out.culprit, "all_reduce float32 256 MiB out-of-place in group world (ranks 0,1 on vm)");
  EXPECT_NE(timed_out.detail.find("--timeout 0.3"), std::string::npos) << timed_out.detail;
  EXPECT_EQ(timed_out.measured, "1 of 1 rows");
  EXPECT_EQ(find(outcomes, "no-failed").verdict, CheckVerdict::Pass);
  const auto& bw = find(outcomes, "allreduce-busbw-512k");
  EXPECT_EQ(bw.verdict, CheckVerdict::Fail);
  EXPECT_EQ(bw.detail, "no result for allreduce_bench mpi at 512 KiB (sizes measured: 256 MiB)");
  EXPECT_EQ(find(outcomes, "no-wrong-elements").verdict, CheckVerdict::Fail);  // nothing was measured
}

TEST(AcceptEvaluate, GpuProfilesFailOnHostRunsBecauseNothingMatches) {
  const std::vector<LoadedRun> runs = {run_of("allreduce-np4-a.json"), run_of("sendrecv-pairs-np4.json")};
  for (const auto* file : {"h100-sxm-8gpu.json", "h800-sxm-8gpu.json"}) {
    const auto outcomes = evaluate(load_profile(kProfiles / file), runs);
    const auto& bw = find(outcomes, "allreduce-busbw-16g");
    EXPECT_EQ(bw.verdict, CheckVerdict::Fail) << file;
    EXPECT_NE(bw.detail.find("no result for allreduce_bench nccl"), std::string::npos) << bw.detail;
    EXPECT_NE(bw.detail.find("the input has: allreduce_bench mpi world of 4 ranks"), std::string::npos) << bw.detail;
    EXPECT_EQ(find(outcomes, "sendrecv-every-pair-1g").verdict, CheckVerdict::Fail) << file;
    EXPECT_EQ(find(outcomes, "no-wrong-elements").verdict, CheckVerdict::Pass) << file;
  }
}

TEST(AcceptEvaluate, PercentOfPeakWithUnknownPeakFails) {
  const auto o = check_one({{"id", "pct"},
                            {"kind", "busbw"},
                            {"select", {{"benchmark", "allreduce_bench"}}},
                            {"size", "512K"},
                            {"min_pct_of_peak", 1}},
                           {run_of("allreduce-np4-a.json")});
  EXPECT_EQ(o.verdict, CheckVerdict::Fail);
  EXPECT_EQ(o.measured,
            fmt::format("{}, peak unknown",
                        gbps_text(lowest_by_group(run_of("allreduce-np4-a.json"), 512 * 1024).at("world"))));
  EXPECT_NE(o.detail.find("peak unknown"), std::string::npos) << o.detail;
  EXPECT_EQ(o.culprit, "group world (ranks 0-3 on vm)");
}

TEST(AcceptEvaluate, PercentOfPeakWithKnownPeak) {
  const auto run = run_of("allreduce-np2-peak20.json");
  double low = 1e9;
  for (const auto& r : run.doc.results) {
    if (r.size_bytes == (1U << 20)) {
      ASSERT_TRUE(r.pct_of_peak);
      low = std::min(low, *r.pct_of_peak);
    }
  }
  json check = {{"id", "pct"},
                {"kind", "busbw"},
                {"select", {{"benchmark", "allreduce_bench"}}},
                {"size", "1M"},
                {"min_pct_of_peak", low * 0.99}};
  EXPECT_EQ(check_one(check, {run}).verdict, CheckVerdict::Pass);
  check["min_pct_of_peak"] = low * 1.01;
  const auto o = check_one(check, {run});
  EXPECT_EQ(o.verdict, CheckVerdict::Fail);
  EXPECT_EQ(o.measured, fmt::format("{:.1f}% of peak", low));
  EXPECT_NE(o.detail.find("of peak 20 GB/s <"), std::string::npos) << o.detail;
}

TEST(AcceptEvaluate, EveryPairCheckNamesTheFailingPair) {
  const auto run = run_of("sendrecv-pairs-np4.json");
  // The size where the two pairs differ most; the threshold halfway between their lowest rows.
  std::uint64_t size = 0;
  double gap = -1;
  for (const auto& r : run.doc.results) {
    const auto low = lowest_by_group(run, r.size_bytes);
    if (low.size() == 2 && std::abs(low.at("pair:0-1") - low.at("pair:2-3")) > gap) {
      gap = std::abs(low.at("pair:0-1") - low.at("pair:2-3"));
      size = r.size_bytes;
    }
  }
  ASSERT_GT(gap, 0.0);
  const auto low = lowest_by_group(run, size);
  const bool first_slower = low.at("pair:0-1") < low.at("pair:2-3");
  const std::string slow = first_slower ? "pair:0-1" : "pair:2-3";
  const std::string fast = first_slower ? "pair:2-3" : "pair:0-1";
  const json check = {{"id", "every-pair"},
                      {"kind", "busbw"},
                      {"select", {{"benchmark", "sendrecv_bench"}, {"group", "pair"}}},
                      {"size", size},
                      {"min_GBps", (low.at("pair:0-1") + low.at("pair:2-3")) / 2},
                      {"min_groups", 2}};
  const auto o = check_one(check, {run});
  EXPECT_EQ(o.verdict, CheckVerdict::Fail);
  const std::string ranks = slow == "pair:0-1" ? "0,1" : "2,3";
  EXPECT_EQ(o.culprit, fmt::format("group {} (ranks {} on vm)", slow, ranks));
  EXPECT_EQ(o.culprit.find(fast), std::string::npos);
  EXPECT_NE(o.detail.find(slow + " sendrecv float32"), std::string::npos) << o.detail;
  EXPECT_EQ(o.measured, gbps_text(std::min(low.at("pair:0-1"), low.at("pair:2-3"))));

  json below_both = check;
  below_both["min_GBps"] = std::min(low.at("pair:0-1"), low.at("pair:2-3")) * 0.99;
  EXPECT_EQ(check_one(below_both, {run}).verdict, CheckVerdict::Pass);
  below_both["min_groups"] = 4;  // 8 GPUs with --split pairs give 4 pairs; this run had 4 ranks
  const auto few = check_one(below_both, {run});
  EXPECT_EQ(few.verdict, CheckVerdict::Fail);
  EXPECT_NE(few.detail.find("found 2 groups (pair:0-1, pair:2-3), expected at least 4"), std::string::npos)
      << few.detail;
}

TEST(AcceptEvaluate, FiltersSelectPlacementAndGroupKind) {
  const auto run = run_of("allreduce-np4-a.json");
  double in_place = 0;
  for (const auto& r : run.doc.results) {
    if (r.size_bytes == 512 * 1024 && r.spec.in_place) {
      in_place = r.busbw_GBps;
    }
  }
  json check = {{"id", "a"},
                {"kind", "busbw"},
                {"select", {{"benchmark", "allreduce_bench"}, {"in_place", true}, {"op", "all_reduce"}}},
                {"size", "512K"},
                {"min_GBps", 0.001}};
  EXPECT_EQ(check_one(check, {run}).measured, gbps_text(in_place));
  check["select"]["group"] = "pair";
  const auto o = check_one(check, {run});
  EXPECT_EQ(o.verdict, CheckVerdict::Fail);
  EXPECT_NE(o.detail.find("the input has: allreduce_bench mpi world of 4 ranks"), std::string::npos) << o.detail;
}

TEST(AcceptEvaluate, WrongAndUnverifiedElements) {
  auto run = run_of("allreduce-np4-a.json");
  const json check = {{"id", "w"}, {"kind", "no_wrong_elements"}, {"require_checked", true}};
  EXPECT_EQ(check_one(check, {run}).verdict, CheckVerdict::Pass);

  auto unverified = run;
  for (auto& r : unverified.doc.results) {
    r.wrong_elements.reset();  // as a run without -c 1 writes it
  }
  const auto o = check_one(check, {unverified});
  EXPECT_EQ(o.verdict, CheckVerdict::Fail);
  EXPECT_NE(o.detail.find("run with -c 1"), std::string::npos) << o.detail;
  json lenient = check;
  lenient["require_checked"] = false;
  EXPECT_EQ(check_one(lenient, {unverified}).verdict, CheckVerdict::Pass);

  auto wrong = run;
  wrong.doc.results.at(3).wrong_elements = 7;
  wrong.doc.results.at(3).status = CaseStatus::Failed;  // what the runner records with wrong elements
  const auto w = check_one(check, {wrong});
  EXPECT_EQ(w.verdict, CheckVerdict::Fail);
  EXPECT_NE(w.culprit.find("in group world (ranks 0-3 on vm) (7 wrong)"), std::string::npos) << w.culprit;
  EXPECT_EQ(check_one({{"id", "f"}, {"kind", "no_failed"}}, {wrong}).verdict, CheckVerdict::Fail);
}

TEST(AcceptEvaluate, SeveralRunsAreNamedInDetails) {
  const std::vector<LoadedRun> runs = {run_of("allreduce-np4-a.json"), run_of("allreduce-np4-b.json")};
  const auto o = check_one({{"id", "a"},
                            {"kind", "busbw"},
                            {"select", {{"benchmark", "allreduce_bench"}}},
                            {"size", "512K"},
                            {"min_GBps", 1000}},
                           runs);
  EXPECT_EQ(o.verdict, CheckVerdict::Fail);
  EXPECT_NE(o.detail.find("4 of 4 rows fail"), std::string::npos) << o.detail;
  EXPECT_NE(o.detail.find("[" + runs[1].name() + "]"), std::string::npos) << o.detail;
}

// --- printers ------------------------------------------------------------------------------------

AcceptVerdict smoke_on(const std::string& file) {
  AcceptVerdict r{load_profile(kProfiles / "mpi-host-smoke.json"), {}, std::nullopt};
  r.outcomes = evaluate(r.profile, {run_of(file)});
  return r;
}

std::string last_line(const std::string& text) {
  const auto end = text.find_last_not_of('\n');
  return text.substr(text.rfind('\n', end) + 1, end - text.rfind('\n', end));
}

TEST(AcceptRender, TerminalTableEndsWithSummary) {
  const auto pass = smoke_on("allreduce-np4-a.json");
  const auto text = make_renderer(Format::Terminal, false)->render(pass);
  EXPECT_EQ(last_line(text), "4 checks: 4 passed, 0 failed");
  EXPECT_EQ(text.find("\x1b["), std::string::npos);
  EXPECT_NE(text.find("allreduce-busbw-512k  PASS"), std::string::npos) << text;
  const auto fail = smoke_on("timed-out.json");
  const auto coloured = make_renderer(Format::Terminal, true)->render(fail);
  EXPECT_EQ(last_line(coloured), "4 checks: 1 passed, 3 failed");
  EXPECT_NE(coloured.find("\x1b[1;31mFAIL\x1b[0m"), std::string::npos);
  EXPECT_NE(coloured.find("\x1b[32mPASS\x1b[0m"), std::string::npos);
}

TEST(AcceptRender, TerminalNeutralisesControlCharacters) {
  auto r = smoke_on("timed-out.json");
  r.outcomes[0].culprit = "host\x1b]0;owned\x07";
  const auto text = make_renderer(Format::Terminal, false)->render(r);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("host?]0;owned?"), std::string::npos);
}

TEST(AcceptRender, HostileHostnameIsEscapedInMarkdownAndJunit) {
  const Profile profile = one_check({{"id", "bw"},
                                     {"kind", "busbw"},
                                     {"select", {{"benchmark", "sendrecv_bench"}}},
                                     {"size", "1M"},
                                     {"min_GBps", 1e6}});
  const auto outcomes = evaluate(profile, {run_of("hostile-names.json")});
  ASSERT_NE(outcomes[0].culprit.find("<script>"), std::string::npos) << outcomes[0].culprit;
  const AcceptVerdict verdict{profile, outcomes, std::nullopt};
  const auto md = make_renderer(Format::Markdown, false)->render(verdict);
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_NE(md.find("&lt;script&gt;"), std::string::npos);
  EXPECT_EQ(last_line(md), "1 check: 0 passed, 1 failed");
  const auto xml = make_renderer(Format::Junit, false)->render(verdict);
  EXPECT_EQ(xml.find("<script>"), std::string::npos);
  EXPECT_NE(xml.find("&lt;script&gt;document.title=1&lt;/script&gt;"), std::string::npos);
}

TEST(AcceptRender, CsvQuotesAndJsonParses) {
  const auto r = smoke_on("timed-out.json");
  const auto csv = make_renderer(Format::Csv, false)->render(r);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "check,kind,verdict,measured,threshold,culprit,detail,source,level,next_step");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);
  EXPECT_NE(csv.find("\"all_reduce float32 256 MiB out-of-place in group world (ranks 0,1 on vm)\""), std::string::npos)
      << csv;
  const auto j = json::parse(make_renderer(Format::Json, false)->render(r));
  EXPECT_EQ(j.at("checks").size(), 4U);
  EXPECT_EQ(j.at("failed"), 3);
  EXPECT_EQ(j.at("verdict"), "fail");
  EXPECT_EQ(j.at("profile").at("id"), "mpi-host-smoke");
  EXPECT_EQ(j.at("checks")[1].at("id"), "no-timed-out");
  EXPECT_EQ(j.at("checks")[1].at("verdict"), "fail");
}

TEST(AcceptRender, JunitCountsNamesAndIsDeterministic) {
  const auto r = smoke_on("timed-out.json");
  const auto xml = make_renderer(Format::Junit, false)->render(r);
  EXPECT_EQ(xml, make_renderer(Format::Junit, false)->render(r));
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites ", 0), 0U);
  EXPECT_NE(xml.find(R"x(<testsuite name="ccbench accept: MPI host-memory smoke (CI VM)" tests="4" failures="3" )x"
                     R"x(errors="0" skipped="0">)x"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find(R"x(<testcase classname="ccbench.accept.mpi-host-smoke" name="no-timed-out">)x"),
            std::string::npos);
  EXPECT_NE(xml.find(R"x(<failure message="no-timed-out: all_reduce float32 256 MiB out-of-place in group world )x"
                     R"x((ranks 0,1 on vm)" type="no_timed_out">)x"),
            std::string::npos)
      << xml;
  EXPECT_EQ(std::count(xml.begin(), xml.end(), '\x1b'), 0);
  EXPECT_EQ(xml.find("timestamp"), std::string::npos);
}

}  // namespace
}  // namespace ccbench::report
