// ccbench-report accept: profile loading (errors with pointers), the shipped profiles and their cited thresholds.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "accept_test_util.hpp"
#include "ccbench/report/accept.hpp"

namespace ccbench::report {
namespace {

using accept_test::json;
using accept_test::kProfiles;
using accept_test::kRuns;
using accept_test::one_check;

std::string message_of(const std::string& text) {
  try {
    parse_profile(text, "x.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

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

}  // namespace
}  // namespace ccbench::report
