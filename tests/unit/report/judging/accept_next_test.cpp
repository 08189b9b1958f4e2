// ccbench-report accept (issue 39, sections 3 and 4): each check's level and the next step its evidence points to,
// and how long a verdict is trusted (a profile's validity, --max-age), on real runs given hosts' evidence.
#include <gtest/gtest.h>

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

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

HostFabric host(const std::string& name, const std::string& device, bool below, std::vector<CounterDelta> moved) {
  return HostFabric{name,
                    10.0,
                    40,
                    std::move(moved),
                    {{"rdma_port",
                      device + " port 1",
                      "hca",
                      "MT4129",
                      below ? "200 Gb/sec (2X NDR)" : "400 Gb/sec (4X NDR)",
                      "400 Gb/sec (4X NDR)",
                      below,
                      "4: ACTIVE",
                      "28.39.1002",
                      {}}},
                    {}};
}

LoadedRun two_hosts(std::vector<HostFabric> fabric) {
  LoadedRun run = run_of("allreduce-np4-a.json");
  run.doc.environment.hosts = {{"node0", {0, 1}}, {"node1", {2, 3}}};
  run.doc.fabric = std::move(fabric);
  return run;
}

TEST(AcceptNextStep, FromTheFabricEvidence) {
  const auto run =
      two_hosts({host("node0", "mlx5_0", true, {{"rdma", "mlx5_0", 1, "symbol_error", 5, CounterKind::Error, false}}),
                 host("node1", "mlx5_3", false, {{"rdma", "mlx5_3", 1, "link_downed", 1, CounterKind::Error, false}})});
  const auto outcomes = evaluate(load_profile(kProfiles / "h100-sxm-8gpu.json"), {run});
  const auto& counters = find(outcomes, "fabric-counters");
  EXPECT_EQ(counters.level, CheckLevel::Critical);
  EXPECT_TRUE(has(counters.next_step, "check the cable of node0 mlx5_0 port 1: reseat or replace"))
      << counters.next_step;
  const auto& links = find(outcomes, "links-at-capability");
  EXPECT_EQ(links.next_step,
            "node0 mlx5_0 port 1 trained at 200 Gb/sec (2X NDR) of 400 Gb/sec (4X NDR): reseat or replace the "
            "cable/transceiver of mlx5_0 port 1");
  // busbw low while a link is below its capability: fix the link first
  const auto& busbw = find(outcomes, "allreduce-busbw-16g");  // lacked: no NCCL row in an MPI run
  EXPECT_TRUE(has(busbw.next_step, "run what the check selects (allreduce_bench nccl")) << busbw.next_step;
  const auto down =
      two_hosts({host("node0", "mlx5_0", false, {{"rdma", "mlx5_0", 1, "link_downed", 1, CounterKind::Error, false}}),
                 host("node1", "mlx5_3", false, {})});
  EXPECT_TRUE(has(find(evaluate(load_profile(kProfiles / "h100-sxm-8gpu.json"), {down}), "fabric-counters").next_step,
                  "node0 mlx5_0 port 1 went down during the run: check its cable and the switch port"));
}

TEST(AcceptNextStep, LowBusbwPointsAtTheLinksOrAtAffinity) {
  json profile_doc = {{"profile", "ccbench.accept"},
                      {"profile_version", "1.1.0"},
                      {"id", "t"},
                      {"name", "t"},
                      {"checks",
                       {{{"id", "bw"},
                         {"kind", "busbw"},
                         {"select", {{"benchmark", "allreduce_bench"}}},
                         {"size", "512K"},
                         {"min_GBps", 1e6}},
                        {{"id", "links"}, {"kind", "links"}}}}};
  const Profile profile = parse_profile(profile_doc.dump(), "t.json");
  const auto healthy = two_hosts({host("node0", "mlx5_0", false, {}), host("node1", "mlx5_3", false, {})});
  const auto at_capability = evaluate(profile, {healthy});
  EXPECT_EQ(find(at_capability, "links").verdict, CheckVerdict::Pass);
  EXPECT_TRUE(find(at_capability, "links").next_step.empty());
  EXPECT_TRUE(has(find(at_capability, "bw").next_step, "every link trained at its capability: check GPU-NIC affinity"))
      << find(at_capability, "bw").next_step;
  const auto slow_link = two_hosts({host("node0", "mlx5_0", true, {}), host("node1", "mlx5_3", false, {})});
  EXPECT_TRUE(has(find(evaluate(profile, {slow_link}), "bw").next_step,
                  "fix what links names first, a link below its capability caps bus bandwidth: node0 mlx5_0 port 1"));
}

TEST(AcceptNextStep, WrongElementsAndTimeouts) {
  auto run = run_of("allreduce-np4-a.json");
  run.doc.results.at(2).wrong_elements = 3;
  const auto wrong = check_one({{"id", "w"}, {"kind", "no_wrong_elements"}}, {run});
  EXPECT_EQ(wrong.verdict, CheckVerdict::Fail);
  EXPECT_EQ(wrong.next_step.rfind("data corruption in ", 0), 0U) << wrong.next_step;
  EXPECT_TRUE(has(wrong.next_step, "drain the node and run the GPU diagnostics")) << wrong.next_step;
  const auto outcomes = evaluate(load_profile(kProfiles / "mpi-host-smoke.json"), {run_of("timed-out.json")});
  EXPECT_TRUE(has(find(outcomes, "no-timed-out").next_step, "made no progress: run it again with --timeout"));
  EXPECT_TRUE(find(outcomes, "no-failed").next_step.empty()) << "a passed check has no next step";
}

TEST(AcceptLevel, AWarningAloneExitsZeroAndSaysSo) {
  auto warning = one_check({{"id", "big"},
                            {"kind", "busbw"},
                            {"level", "warning"},
                            {"select", {{"benchmark", "allreduce_bench"}}},
                            {"size", "512K"},
                            {"min_GBps", 1e6}});
  const std::vector<LoadedRun> runs{run_of("allreduce-np4-a.json")};
  const auto outcomes = evaluate(warning, runs);
  EXPECT_EQ(outcomes.at(0).verdict, CheckVerdict::Warning);
  EXPECT_EQ(outcomes.at(0).level, CheckLevel::Warning);
  EXPECT_FALSE(outcomes.at(0).evidence.lacked()) << "a miss on its evidence";
  EXPECT_FALSE(outcomes.at(0).next_step.empty());
  EXPECT_TRUE(all_passed(outcomes)) << "a warning alone exits 0";
  const AcceptVerdict verdict{warning, outcomes, std::nullopt};
  const auto text = make_renderer(Format::Terminal, false)->render(verdict);
  EXPECT_TRUE(has(text, "1 check: 0 passed, 0 failed, 1 warning (warning-level checks that missed: alone they exit 0)"))
      << text;
  const auto doc = nlohmann::json::parse(make_renderer(Format::Json, false)->render(verdict));
  EXPECT_EQ(doc.at("verdict"), "warning");
  EXPECT_EQ(doc.at("checks").at(0).at("level"), "warning");
  // A warning-level check that lacked its evidence is a WARNING too, never a PASS.
  warning.checks.at(0).size_bytes = std::uint64_t{16} << 30;
  const auto lacked = evaluate(warning, runs).at(0);
  EXPECT_EQ(lacked.verdict, CheckVerdict::Warning);
  EXPECT_EQ(lacked.evidence.ruling, Ruling::Fail);
  EXPECT_NE(lacked.verdict, CheckVerdict::Pass);
}

TEST(AcceptValidity, AVerdictExpiresAfterItsOldestRun) {
  json doc = {{"profile", "ccbench.accept"},
              {"profile_version", "1.1.0"},
              {"id", "t"},
              {"name", "t"},
              {"validity", "24h"},
              {"checks", {{{"id", "f"}, {"kind", "no_failed"}}}}};
  const Profile profile = parse_profile(doc.dump(), "t.json");
  EXPECT_EQ(profile.validity_s, 86400);
  const std::vector<LoadedRun> runs{run_of("allreduce-np4-a.json"), run_of("allreduce-np4-b.json")};
  // allreduce-np4-a.json ended 2026-11-22T07:38:06.916Z, the older of the two
  EXPECT_EQ(valid_until(profile, runs), "2026-11-23T07:38:06Z");
  EXPECT_FALSE(valid_until(load_profile(kProfiles / "mpi-host-smoke.json"), runs)) << "no validity: no expiry";
  auto timeless = runs;
  timeless[1].doc.run.ended_utc.clear();
  timeless[1].doc.run.started_utc.clear();
  EXPECT_THROW(valid_until(profile, timeless), NoVerdictError);
  doc["validity"] = "1 day";
  EXPECT_THROW(parse_profile(doc.dump(), "t.json"), InputError);
}

TEST(AcceptValidity, MaxAgeRefusesStaleOrTimelessResults) {
  EXPECT_EQ(parse_age("24h"), 86400);
  EXPECT_EQ(parse_age("90m"), 5400);
  EXPECT_EQ(parse_age("7d"), 604800);
  EXPECT_EQ(parse_age("30s"), 30);
  for (const char* bad : {"", "h", "0h", "-1h", "24", "24x", "1.5h", "24 h"}) {
    EXPECT_FALSE(parse_age(bad)) << bad;
  }
  const std::vector<LoadedRun> runs{run_of("allreduce-np4-a.json")};
  const std::int64_t ended = 1795333086;  // 2026-11-22T07:38:06Z
  EXPECT_NO_THROW(refuse_stale(runs, 3600, ended + 3599));
  try {
    refuse_stale(runs, 3600, ended + 7200);
    ADD_FAILURE() << "a result 2 h old passed --max-age 1h";
  } catch (const NoVerdictError& e) {
    EXPECT_TRUE(has(e.what(), "ended 2026-11-22T07:38:06Z (2.0 h ago): too old to judge")) << e.what();
  }
  auto timeless = runs;
  timeless[0].doc.run.ended_utc.clear();
  timeless[0].doc.run.started_utc.clear();
  EXPECT_THROW(refuse_stale(timeless, 3600, ended), NoVerdictError);
  EXPECT_EQ(rule_on(Stakes::Acceptance, {{Lack::Stale, "old"}}, "--waive-unjudged").ruling, Ruling::NoVerdict)
      << "no flag makes stale evidence pass";
}

}  // namespace
}  // namespace ccbench::report
