// ccbench-report accept: the fabric checks (counters and links) on a real run given hosts' evidence, and their
// FAIL on evidence they lack (absent, partial, stale or contradictory).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "accept_test_util.hpp"
#include "ccbench/report/accept.hpp"
#include "ccbench/report/renderer.hpp"

namespace ccbench::report {
namespace {

using accept_test::check_one;
using accept_test::find;
using accept_test::kProfiles;
using accept_test::run_of;

// The fabric checks of the shipped GPU profiles, on a real run given two hosts' evidence (values chosen here to
// sit either side of NVSentinel's bounds: 5 symbol errors in 10 s is 1800/hour > 120/hour).
TEST(AcceptEvaluate, FabricCountersAndLinks) {
  LoadedRun run = run_of("allreduce-np4-a.json");
  const auto port = [](std::string device, std::string name, std::uint64_t delta, CounterKind kind) {
    return CounterDelta{"rdma", std::move(device), 1, std::move(name), delta, kind, false};
  };
  HostFabric node0{"node0",
                   10.0,
                   40,
                   {port("mlx5_0", "symbol_error", 5, CounterKind::Error),
                    port("mlx5_0", "local_ack_timeout_err", 5, CounterKind::Error),
                    port("mlx5_0", "port_xmit_data", 250000000, CounterKind::Traffic)},
                   {{"rdma_port",
                     "mlx5_0 port 1",
                     "hca",
                     "MT4129",
                     "200 Gb/sec (2X NDR)",
                     "400 Gb/sec (4X NDR)",
                     true,
                     "4: ACTIVE",
                     "28.39.1002",
                     {}}},
                   {}};
  HostFabric node1{"node1",
                   10.0,
                   40,
                   {port("mlx5_3", "link_downed", 1, CounterKind::Error)},
                   {{"rdma_port",
                     "mlx5_3 port 1",
                     "hca",
                     "MT4129",
                     "400 Gb/sec (4X NDR)",
                     "400 Gb/sec (4X NDR)",
                     false,
                     "4: ACTIVE",
                     "28.40.1000",
                     {}}},
                   {}};
  run.doc.environment.hosts = {{"node0", {0, 1}}, {"node1", {2, 3}}};
  const Profile h100 = load_profile(kProfiles / "h100-sxm-8gpu.json");
  const auto without = evaluate(h100, {run});
  EXPECT_EQ(find(without, "fabric-counters").verdict, CheckVerdict::Fail);
  EXPECT_NE(find(without, "fabric-counters").detail.find("no fabric evidence in the input"), std::string::npos);
  EXPECT_EQ(find(without, "links-at-capability").verdict, CheckVerdict::Fail);
  run.doc.fabric = {node0, node1};
  const auto with = evaluate(h100, {run});
  const auto& counters = find(with, "fabric-counters");
  EXPECT_EQ(counters.verdict, CheckVerdict::Fail);
  EXPECT_NE(counters.culprit.find("node0 mlx5_0 port 1 symbol_error +5 in 10.0 s: 1.8e+03/hour > 120"),
            std::string::npos)
      << counters.culprit;
  EXPECT_NE(counters.culprit.find("node1 mlx5_3 port 1 link_downed +1 (any rise fails)"), std::string::npos)
      << counters.culprit;
  EXPECT_EQ(counters.culprit.find("local_ack_timeout_err"), std::string::npos) << "0.5/s is within 1/s";
  const auto& links = find(with, "links-at-capability");
  EXPECT_EQ(links.verdict, CheckVerdict::Fail);
  EXPECT_NE(links.culprit.find("node0 mlx5_0 port 1 (hca) trained at 200 Gb/sec (2X NDR), capable of 400"),
            std::string::npos)
      << links.culprit;
  EXPECT_NE(links.culprit.find("MT4129 runs 2 firmware versions: 28.39.1002 on node0; 28.40.1000 on node1"),
            std::string::npos)
      << links.culprit;
  // Per GB: 5 ACK timeouts over the 1 GB mlx5_0 sent.
  const auto per_gb = check_one({{"id", "acks"},
                                 {"kind", "counters"},
                                 {"rates", {{{"counter", "local_ack_timeout_err"}, {"max", 4}, {"per", "GB"}}}}},
                                {run});
  EXPECT_EQ(per_gb.verdict, CheckVerdict::Fail);
  EXPECT_NE(per_gb.culprit.find(": 5/GB > 4"), std::string::npos) << per_gb.culprit;
  run.doc.fabric = {node1, node1};
  run.doc.fabric[0].host = "node0";
  for (auto& h : run.doc.fabric) {
    h.moved.clear();
  }
  EXPECT_EQ(find(evaluate(h100, {run}), "fabric-counters").verdict, CheckVerdict::Pass);
  EXPECT_EQ(find(evaluate(h100, {run}), "links-at-capability").verdict, CheckVerdict::Pass);
}

// Issue 35: the fabric checks passed on evidence they did not have. Each case below is absent, partial, stale
// (a counter reset or stuck) or contradictory evidence, and each FAILs, naming what it lacked.
TEST(AcceptEvaluate, FabricChecksFailOnEvidenceTheyLack) {
  LoadedRun run = run_of("allreduce-np4-a.json");
  run.path = "run.json";
  run.doc.environment.hosts.clear();
  std::vector<HostFabric> quiet;
  for (int i = 0; i < 8; ++i) {
    const std::string host = "node" + std::to_string(i);
    run.doc.environment.hosts.push_back({host, {i}});
    HostFabric h{host, 10.0, 40, {}, {}, {}};
    h.links.push_back({"rdma_port",
                       "mlx5_0 port 1",
                       "hca",
                       "MT4129",
                       "400 Gb/sec (4X NDR)",
                       "400 Gb/sec (4X NDR)",
                       false,
                       "4: ACTIVE",
                       "28.39.1002",
                       {}});
    quiet.push_back(h);
  }
  const Profile h100 = load_profile(kProfiles / "h100-sxm-8gpu.json");
  const auto verdicts = [&](const std::vector<HostFabric>& fabric) {
    run.doc.fabric = fabric;
    const auto out = evaluate(h100, {run});
    return std::pair{find(out, "fabric-counters"), find(out, "links-at-capability")};
  };
  auto [counters, links] = verdicts(quiet);  // all eight quiet and at capability
  EXPECT_EQ(counters.verdict, CheckVerdict::Pass) << counters.detail << counters.culprit;
  EXPECT_EQ(links.verdict, CheckVerdict::Pass) << links.detail << links.culprit;

  // Partial: 7 of 8 hosts, then 1 of 8: the missing are named, both checks FAIL.
  for (const std::size_t present : {7U, 1U}) {
    std::tie(counters, links) = verdicts({quiet.begin(), quiet.begin() + static_cast<std::ptrdiff_t>(present)});
    EXPECT_EQ(counters.verdict, CheckVerdict::Fail) << present;
    EXPECT_EQ(links.verdict, CheckVerdict::Fail) << present;
    EXPECT_NE(counters.culprit.find(
                  fmt::format("run.json: no fabric evidence of {} of its 8 host(s): node{}", 8 - present, present)),
              std::string::npos)
        << counters.culprit;
  }
  // Contradictory: a host read twice; a host the run does not have.
  auto twice = quiet;
  twice.push_back(quiet[3]);
  std::tie(counters, links) = verdicts(twice);
  EXPECT_EQ(counters.verdict, CheckVerdict::Fail);
  EXPECT_NE(counters.culprit.find("run.json: host node3 has 2 fabric readings (one per host)"), std::string::npos)
      << counters.culprit;
  auto stranger = quiet;
  stranger.push_back(quiet[0]);
  stranger.back().host = "elsewhere";
  std::tie(counters, links) = verdicts(stranger);
  EXPECT_EQ(links.verdict, CheckVerdict::Fail);
  EXPECT_NE(links.culprit.find("fabric evidence of host elsewhere, which is not a host of the run"), std::string::npos)
      << links.culprit;

  // Stale: a counter that went back (a driver reload reset link_downed), one stuck at its maximum, one gone.
  for (const std::string warning :
       {"mlx5_0 port 1 link_downed: went back from 3 to 0 (reset, or a driver reload): no delta",
        "mlx5_0 port 1 symbol_error: at its 16-bit maximum 65535 (it saturates, it does not wrap): stuck there before "
        "the run: no delta",
        "mlx5_0: not read after the run (removed, renamed, or unreadable): no delta"}) {
    auto stale = quiet;
    stale[5].warnings = {warning};
    std::tie(counters, links) = verdicts(stale);
    EXPECT_EQ(counters.verdict, CheckVerdict::Fail) << warning;
    EXPECT_NE(counters.detail.find("not judged, which fails the check: node5: " + warning), std::string::npos)
        << counters.detail;
  }
  // A rate that cannot be worked out (0 s between the readings): not judged, FAIL.
  auto no_time = quiet;
  no_time[2].seconds = 0;
  no_time[2].moved = {CounterDelta{"rdma", "mlx5_0", 1, "symbol_error", 1, CounterKind::Error, false}};
  std::tie(counters, links) = verdicts(no_time);
  EXPECT_EQ(counters.verdict, CheckVerdict::Fail);
  EXPECT_NE(counters.detail.find("node2 mlx5_0 port 1 symbol_error +1 per hour: no time or no bytes"),
            std::string::npos)
      << counters.detail;
  // A saturated counter within its bound: its rate is only a lower bound, FAIL.
  auto saturated = quiet;
  saturated[4].seconds = 3600;
  saturated[4].moved = {CounterDelta{"rdma", "mlx5_0", 1, "symbol_error", 10, CounterKind::Error, true}};
  std::tie(counters, links) = verdicts(saturated);
  EXPECT_EQ(counters.verdict, CheckVerdict::Fail);
  EXPECT_NE(counters.detail.find("node4 mlx5_0 port 1 symbol_error +10 at least (saturated): saturated"),
            std::string::npos)
      << counters.detail;
  // A DOWN port, and a host with no link read.
  auto down = quiet;
  down[6].links[0].state = "1: DOWN";
  down[7].links.clear();
  std::tie(counters, links) = verdicts(down);
  EXPECT_EQ(links.verdict, CheckVerdict::Fail);
  EXPECT_NE(links.culprit.find("node6 mlx5_0 port 1 (hca) is 1: DOWN"), std::string::npos) << links.culprit;
  EXPECT_NE(links.culprit.find("node7: no link read"), std::string::npos) << links.culprit;

  // --waive-unjudged: a FAIL for evidence a check lacked becomes WAIVED, recorded; a FAIL on evidence stays.
  run.doc.fabric = {quiet.begin(), quiet.begin() + 7};  // node7 unread: both checks lack evidence
  auto outcomes = evaluate(h100, {run});
  waive_unjudged(outcomes, {"fabric-counters"});
  EXPECT_EQ(find(outcomes, "fabric-counters").verdict, CheckVerdict::Waived);
  EXPECT_NE(find(outcomes, "fabric-counters").detail.find("WAIVED by --waive-unjudged"), std::string::npos);
  EXPECT_EQ(find(outcomes, "links-at-capability").verdict, CheckVerdict::Fail);  // not named
  run.doc.fabric = down;  // a DOWN port is evidence against: not waivable
  outcomes = evaluate(h100, {run});
  waive_unjudged(outcomes, {"all"});
  EXPECT_EQ(find(outcomes, "links-at-capability").verdict, CheckVerdict::Fail);
  EXPECT_THROW(waive_unjudged(outcomes, {"no-such-check"}), UsageError);
  const std::string as_json = make_renderer(Format::Json, false)->render(AcceptVerdict{h100, outcomes, std::nullopt});
  EXPECT_NE(as_json.find("\"waived_by\": \"--waive-unjudged\""), std::string::npos) << as_json;
  const std::string xml = make_renderer(Format::Junit, false)->render(AcceptVerdict{h100, outcomes, std::nullopt});
  EXPECT_NE(xml.find("<skipped message=\""), std::string::npos);
}

}  // namespace
}  // namespace ccbench::report
