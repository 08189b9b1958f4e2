// ccbench-report accept: profile loading (errors with pointers), each check kind passing and failing
// on the real result files under tests/data/report/runs, naming of the failing group, the printers
// and JUnit XML. Thresholds are computed here from the data, never hard-coded measurements.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ccbench/report/accept.hpp"
#include "ccbench/report/renderer.hpp"

namespace ccbench::report {
namespace {

using nlohmann::json;

const std::filesystem::path kRuns = std::filesystem::path(CCBENCH_REPORT_DATA) / "runs";
const std::filesystem::path kProfiles = CCBENCH_PROFILES_DIR;

LoadedRun run_of(const std::string& file) { return read_result_file(kRuns / file); }

/// A profile with one check, from JSON.
Profile one_check(const json& check) {
  const json doc = {{"profile", "ccbench.accept"},
                    {"profile_version", "1.0.0"},
                    {"id", "test"},
                    {"name", "test profile"},
                    {"checks", json::array({check})}};
  return parse_profile(doc.dump(), "test.json");
}

CheckOutcome check_one(const json& check, const std::vector<LoadedRun>& runs) {
  const auto outcomes = evaluate(one_check(check), runs);
  EXPECT_EQ(outcomes.size(), 1U);
  return outcomes.at(0);
}

const CheckOutcome& find(const std::vector<CheckOutcome>& outcomes, const std::string& id) {
  const auto it = std::find_if(outcomes.begin(), outcomes.end(), [&](const auto& o) { return o.id == id; });
  EXPECT_NE(it, outcomes.end()) << id;
  return *it;
}

std::string message_of(const std::string& text) {
  try {
    parse_profile(text, "x.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

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

// --- profiles ------------------------------------------------------------------------------------

TEST(AcceptProfile, ShippedProfilesLoadAndCiteEveryThreshold) {
  for (const auto* file : {"h100-sxm-8gpu.json", "h800-sxm-8gpu.json", "mpi-host-smoke.json"}) {
    const auto profile = load_profile(kProfiles / file);
    EXPECT_EQ(profile.id + ".json", file);
    EXPECT_EQ(profile.version, "1.0.0");
    EXPECT_FALSE(profile.checks.empty());
    for (const auto& check : profile.checks) {
      if (check.kind == CheckKind::Busbw) {
        ASSERT_EQ(profile.sources.count(check.source), 1U) << file << " " << check.id << ": a threshold needs a source";
        EXPECT_FALSE(profile.sources.at(check.source).says.empty()) << file << " " << check.id;
        EXPECT_FALSE(check.note.empty()) << file << " " << check.id << ": say why this size and number";
      }
    }
  }
}

TEST(AcceptProfile, H800ThresholdsAreDerivedNotPublished) {
  const auto profile = load_profile(kProfiles / "h800-sxm-8gpu.json");
  for (const auto& check : profile.checks) {
    if (check.kind == CheckKind::Busbw) {
      EXPECT_EQ(check.source, "derived-from-h100") << check.id;
      EXPECT_FALSE(check.min_GBps) << check.id << ": an H800 number in GB/s would look published";
      EXPECT_TRUE(check.min_pct_of_peak) << check.id;
    }
  }
}

// Public 8x H800 NCCL logs show no NVLS channels (NVIDIA/nccl#892): the all_reduce runs as a ring,
// which cannot pass 100% of the NVLink peak, so a threshold above it would fail a healthy node.
TEST(AcceptProfile, H800AllReduceThresholdIsFromTheRingBoundAndCitesNccl892) {
  const auto profile = load_profile(kProfiles / "h800-sxm-8gpu.json");
  const auto check = std::find_if(profile.checks.begin(), profile.checks.end(),
                                  [](const auto& c) { return c.id == "allreduce-busbw-16g"; });
  ASSERT_NE(check, profile.checks.end());
  ASSERT_TRUE(check->min_pct_of_peak);
  EXPECT_LE(*check->min_pct_of_peak, 100.0) << "above the ring bound";
  EXPECT_NE(check->note.find("nccl-892"), std::string::npos) << check->note;
  ASSERT_EQ(profile.sources.count("nccl-892"), 1U);
  EXPECT_EQ(profile.sources.at("nccl-892").url, "https://github.com/NVIDIA/nccl/issues/892");
  EXPECT_NE(profile.sources.at("nccl-892").says.find("0 nvls channels"), std::string::npos);
}

TEST(AcceptProfile, ErrorNamesFilePointerAndExpectation) {
  json doc = json::parse(R"({"profile": "ccbench.accept", "profile_version": "1.0.0", "id": "x", "name": "x",
    "checks": [{"id": "a", "kind": "no_failed"}, {"id": "b", "kind": "no_timed_out"}, {"id": "c", "kind": "foo"}]})");
  EXPECT_EQ(message_of(doc.dump()),
            "x.json: /checks/2/kind: expected one of \"busbw\", \"no_wrong_elements\", \"no_timed_out\", "
            "\"no_failed\", \"counters\", \"links\", got \"foo\"");
}

TEST(AcceptProfile, MalformedProfilesAreRefusedWithPointers) {
  const json base = json::parse(R"({"profile": "ccbench.accept", "profile_version": "1.0.0", "id": "x", "name": "x",
    "sources": {"s": {"title": "t"}},
    "checks": [{"id": "bw", "kind": "busbw", "select": {"benchmark": "allreduce_bench"}, "size": "16G",
                "min_GBps": 460, "source": "s"}]})");
  const std::vector<std::pair<std::string, std::string>> cases = {
      // the schema's
      {"/checks/0/min_GBPs", "/checks/0/min_GBPs: unknown key (not in the schema; expected "},
      {"/checks/0/size", "/checks/0/size: expected integer, got string; or expected a string matching "},
      {"/checks/0/min_GBps", "/checks/0/min_GBps: expected a number > 0, got -1"},
      {"/checks/0/select/group", "/checks/0/select/group: expected one of \"world\", \"node\", "},
      {"/checks/0/select/dtype", "/checks/0/select/dtype: expected one of \"int8\", "},
      {"/checks/0/select/colour", "/checks/0/select/colour: unknown key (not in the schema; expected "},
      {"/checks/0/id", "/checks/0/id: expected a string matching ^[A-Za-z0-9][A-Za-z0-9._-]*$, got \"a b\""},
      // the reader's: what the document is, and what no schema can say
      {"/profile_version", "/profile_version: version 2.0.0 is not readable here"},
      {"/profile", "/profile: expected \"ccbench.accept\", got string \"ccbench.result\""},
      {"/checks/0/source", "/checks/0/source: 'nope' is not a key of /sources (s)"},
      {"/checks/0/select/benchmark", "/checks/0/select/benchmark: unknown benchmark 'all_reduce_bench' (expected "},
      {"/checks/0/select/op", "/checks/0/select/op: unknown op 'allreduce' (expected all_reduce, "},
  };
  const std::map<std::string, json> values = {
      {"/checks/0/min_GBPs", 1},
      {"/checks/0/size", "16Q"},
      {"/checks/0/min_GBps", -1},
      {"/checks/0/source", "nope"},
      {"/checks/0/select/group", "pairs"},
      {"/checks/0/select/dtype", "float33"},
      {"/checks/0/select/benchmark", "all_reduce_bench"},
      {"/checks/0/select/op", "allreduce"},
      {"/checks/0/select/colour", "red"},
      {"/profile_version", "2.0.0"},
      {"/profile", "ccbench.result"},
      {"/checks/0/id", "a b"},
  };
  for (const auto& [pointer, expected] : cases) {
    json doc = base;
    doc[json::json_pointer(pointer)] = values.at(pointer);
    EXPECT_NE(message_of(doc.dump()).find("x.json: " + expected), std::string::npos)
        << pointer << " gave: " << message_of(doc.dump());
  }
}

TEST(AcceptProfile, StructuralErrors) {
  const std::string head = R"({"profile": "ccbench.accept", "profile_version": "1.0.0", "id": "x", "name": "x", )";
  EXPECT_NE(message_of(head + R"("checks": [{"id": "a", "kind": "busbw", "size": 8,
      "select": {"benchmark": "allreduce_bench"}}]})")
                .find("x.json: /checks/0: missing required key \"min_GBps\"; or missing required key "
                      "\"min_pct_of_peak\""),
            std::string::npos);
  // A size of the schema's form whose value does not fit 64 bits: the reader's to say.
  EXPECT_NE(message_of(head + R"("checks": [{"id": "a", "kind": "busbw", "size": "99999999999999999999G",
      "min_GBps": 1, "select": {"benchmark": "allreduce_bench"}}]})")
                .find("x.json: /checks/0/size: expected bytes (a positive integer) or a size like \"16G\""),
            std::string::npos);
  EXPECT_NE(message_of(head + R"("checks": [{"id": "a", "kind": "busbw", "size": 8, "min_GBps": 1}]})")
                .find("x.json: /checks/0: missing required key \"select\""),
            std::string::npos);
  EXPECT_NE(message_of(head + R"("checks": [{"id": "a", "kind": "no_failed"}, {"id": "a", "kind": "no_failed"}]})")
                .find("x.json: /checks/1/id: duplicate check id 'a' (also /checks/0/id)"),
            std::string::npos);
  EXPECT_NE(message_of(head + R"("checks": [{"id": "a", "kind": "no_failed", "size": "1G"}]})")
                .find("x.json: /checks/0/size: unknown key (not in the schema; expected "),
            std::string::npos);
  EXPECT_NE(message_of(head + R"("checks": []})").find("x.json: /checks: expected at least 1 item(s), got 0"),
            std::string::npos);
  EXPECT_NE(message_of(head + R"("checks": [}")").find("x.json: not valid JSON: "), std::string::npos);
  EXPECT_NE(message_of("[1, 2]").find("x.json: expected an accept profile (a JSON object), got array"),
            std::string::npos);
}

TEST(AcceptProfile, ResultFileGivenAsProfileIsRefused) {
  try {
    load_profile(kRuns / "timed-out.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("timed-out.json: /profile: missing"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_profile(kProfiles / "no-such-profile.json"), InputError);
}

TEST(AcceptProfile, SizesTakeBinarySuffixesOrBytes) {
  const json check = {
      {"id", "a"}, {"kind", "busbw"}, {"select", {{"benchmark", "allreduce_bench"}}}, {"size", "16G"}, {"min_GBps", 1}};
  EXPECT_EQ(one_check(check).checks.at(0).size_bytes, std::uint64_t{16} << 30);
  json bytes = check;
  bytes["size"] = 524288;
  EXPECT_EQ(one_check(bytes).checks.at(0).size_bytes, 524288U);
}

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
  AcceptVerdict r{load_profile(kProfiles / "mpi-host-smoke.json"), {}};
  r.outcomes = evaluate(r.profile, {run_of(file)});
  return r;
}

std::string last_line(const std::string& text) {
  const auto end = text.find_last_not_of('\n');
  return text.substr(text.rfind('\n', end) + 1, end - text.rfind('\n', end));
}

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
  const std::string as_json = make_renderer(Format::Json, false)->render(AcceptVerdict{h100, outcomes});
  EXPECT_NE(as_json.find("\"waived_by\": \"--waive-unjudged\""), std::string::npos) << as_json;
  const std::string xml = make_renderer(Format::Junit, false)->render(AcceptVerdict{h100, outcomes});
  EXPECT_NE(xml.find("<skipped message=\""), std::string::npos);
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
  const AcceptVerdict verdict{profile, outcomes};
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
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "check,kind,verdict,measured,threshold,culprit,detail,source");
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
