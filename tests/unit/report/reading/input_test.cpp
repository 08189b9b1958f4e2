#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ccbench/json_schema.hpp"
#include "ccbench/report/input.hpp"
#include "ccbench/result_json.hpp"

namespace ccbench::report {
namespace {

const std::filesystem::path kRuns = std::filesystem::path(CCBENCH_REPORT_DATA) / "runs";

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string error_of(const std::string& text) {
  try {
    (void)read_result_text(text, "doc.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ReportInput, EveryRealRunIsRead) {
  const auto runs = read_result_files({kRuns.string()});
  ASSERT_EQ(runs.size(), 14U);
  for (const auto& run : runs) {
    EXPECT_FALSE(run.doc.results.empty()) << run.path;
    const bool fleet = run.path.find("fleet-") != std::string::npos;  // the 1.7.0 sweeps of issue 17
    EXPECT_TRUE(fleet ? run.schema_version == "1.7.0" : run.schema_version == "1.1.0" || run.schema_version == "1.0.0")
        << run.path;
  }
  EXPECT_TRUE(std::is_sorted(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.path < b.path; }));
}

TEST(ReportInput, OlderMinorVersionIsRead) {
  const auto run = read_result_file(kRuns / "allreduce-np2-v1.0.0.json");
  EXPECT_EQ(run.schema_version, "1.0.0");
  EXPECT_EQ(run.doc.results.front().group_id, "world");  // 1.0 had no group_id: one world group
  EXPECT_EQ(run.name(), "v1.0");
}

// 1.2.0 adds environment.binding; a real 1.1 run with it added stands in for a 1.2 document.
TEST(ReportInput, Version1_2WithBindingIsRead) {
  auto doc = nlohmann::json::parse(slurp(kRuns / "allreduce-np4-a.json"));
  doc["schema_version"] = "1.2.0";
  doc["environment"]["binding"] = nlohmann::json::array();
  for (int rank = 0; rank < 4; ++rank) {
    doc["environment"]["binding"].push_back({{"rank", rank},
                                             {"host", "node0"},
                                             {"policy", "auto"},
                                             {"applied", true},
                                             {"numa_node", 0},
                                             {"cpus", "0-1"},
                                             {"memory", "preferred node 0"},
                                             {"gpu", nullptr},
                                             {"nic", "eth0"},
                                             {"nic_applied", nullptr},
                                             {"note", "MPI chose its NICs in MPI_Init: eth0 recorded, not applied"}});
  }
  const auto run = read_result_text(doc.dump(), "doc.json");
  EXPECT_EQ(run.schema_version, "1.2.0");
  ASSERT_EQ(run.doc.environment.binding.size(), 4U);
  EXPECT_EQ(run.doc.environment.binding[3].rank, 3);
  EXPECT_EQ(run.doc.environment.binding[3].numa_node, 0);
  doc["environment"]["binding"][2]["policy"] = "numa";
  EXPECT_EQ(error_of(doc.dump()),
            "doc.json: /environment/binding/2/policy: expected one of \"none\", \"auto\", got \"numa\"");
}

// 1.8.0: a host's fabric evidence reads back, and the schema holds its kinds.
TEST(ReportInput, FabricOfSchema180ReadsBack) {
  auto doc = nlohmann::json::parse(slurp(kRuns / "allreduce-np4-a.json"));
  HostFabric h;
  h.host = "node0";
  h.seconds = 3.0;
  h.counters_read = 2;
  h.moved = {{"tcp", "", 0, "RetransSegs", 12, CounterKind::Error, false}};
  h.links = {{"pcie", "0000:43:00.0", "gpu", "10de:2330", "16.0 GT/s PCIe x8", "32.0 GT/s PCIe x16", true, "", "", {}}};
  doc["schema_version"] = "1.8.0";
  doc["fabric"] = nlohmann::json::array({fabric_to_json(h)});
  const auto run = read_result_text(doc.dump(), "doc.json");
  ASSERT_EQ(run.doc.fabric.size(), 1U);
  EXPECT_EQ(run.doc.fabric[0].moved.at(0).delta, 12U);
  EXPECT_TRUE(run.doc.fabric[0].links.at(0).below);
  doc["fabric"][0]["moved"][0]["kind"] = "bad";
  EXPECT_EQ(error_of(doc.dump()),
            "doc.json: /fabric/0/moved/0/kind: expected one of \"error\", \"congestion\", \"traffic\", \"other\", got "
            "\"bad\"");
}

TEST(ReportInput, NameIsLabelElseFileStem) {
  EXPECT_EQ(read_result_file(kRuns / "allreduce-np4-a.json").name(), "base");
  EXPECT_EQ(read_result_file(kRuns / "allgather-np4.json").name(), "allgather-np4");
}

TEST(ReportInput, ErrorsNameFilePointerAndExpectation) {
  auto doc = nlohmann::json::parse(slurp(kRuns / "allreduce-np4-a.json"));
  doc["results"][4]["in_place"] = "yes";
  EXPECT_EQ(error_of(doc.dump()), "doc.json: /results/4/in_place: expected boolean, got string");
  doc["results"][4]["in_place"] = true;
  doc["environment"]["hosts"][0]["ranks"] = nlohmann::json::array();
  EXPECT_EQ(error_of(doc.dump()), "doc.json: /environment/hosts/0/ranks: expected at least 1 item(s), got 0");
  doc["schema_version"] = "3.1.0";
  EXPECT_NE(error_of(doc.dump()).find("/schema_version: schema version 3.1.0 is not supported"), std::string::npos);
  EXPECT_NE(error_of("{\"a\":").find("doc.json: not valid JSON (truncated?)"), std::string::npos);
}

TEST(ReportInput, NullableFieldsSayBothForms) {
  auto doc = nlohmann::json::parse(slurp(kRuns / "allreduce-np4-a.json"));
  doc["run"]["ended_utc"] = 5;
  EXPECT_EQ(error_of(doc.dump()),
            "doc.json: /run/ended_utc: expected string, got number 5; or expected null, got number 5");
  doc["run"]["ended_utc"] = "yesterday";
  EXPECT_NE(error_of(doc.dump()).find("/run/ended_utc: expected a string matching"), std::string::npos);
}

TEST(ReportSchema, RefusesKeywordsItDoesNotImplement) {
  EXPECT_THROW(JsonSchema(nlohmann::json{{"type", "object"}, {"patternProperties", nlohmann::json::object()}}),
               std::invalid_argument);
  EXPECT_THROW(JsonSchema(nlohmann::json{{"$ref", "#/$defs/missing"}}), std::invalid_argument);
}

TEST(ReportSchema, IntegerMeansWrittenAsInteger) {
  const JsonSchema schema(nlohmann::json{{"type", "integer"}, {"minimum", 0}});
  EXPECT_FALSE(schema.first_problem(nlohmann::json(3)));
  EXPECT_TRUE(schema.first_problem(nlohmann::json(3.0)));
  EXPECT_TRUE(schema.first_problem(nlohmann::json(-1)));
}

TEST(ReportSchema, PointersEscapeSlashAndTilde) {
  const JsonSchema schema(nlohmann::json{{"type", "object"}, {"additionalProperties", false}});
  const auto p = schema.first_problem(nlohmann::json{{"a/b~c", 1}});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pointer, "/a~1b~0c");
}

}  // namespace
}  // namespace ccbench::report
