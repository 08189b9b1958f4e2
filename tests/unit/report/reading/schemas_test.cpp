// The schemas and the tables. The acceptance-profile schema (report/schema/ccbench.accept.schema.json) copies
// the type table's names; these tests fail when the table gains or loses a name the schema does not. The
// workload table's names (benches, ops) are not copied: the schemas hold a pattern that every row must match,
// so that adding a bench is a row of workloads.def and nothing else (the profile reader checks the names).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "ccbench/collective.hpp"
#include "ccbench/types.hpp"

namespace ccbench {
namespace {

std::filesystem::path accept_schema() {
  return std::filesystem::path(CCBENCH_SOURCE_DIR) / "report/schema/ccbench.accept.schema.json";
}

std::filesystem::path result_schema() {
  return std::filesystem::path(CCBENCH_SOURCE_DIR) / "report/schema/ccbench.result.schema.json";
}

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

nlohmann::json select_property(const std::string& key) {
  return read_json(accept_schema()).at("$defs").at("select").at("properties").at(key);
}

std::set<std::string> select_enum(const std::string& key) {
  const auto names = select_property(key).at("enum");
  return {names.begin(), names.end()};
}

// Every row's names match the schemas' patterns (ECMAScript, as JSON Schema's), and no schema lists them.
TEST(ProfileSchema, BenchAndOpNamesMatchThePatternsAndAreNotCopied) {
  const auto result_op = read_json(result_schema()).at("$defs").at("result").at("properties").at("op");
  for (const auto& property : {select_property("benchmark"), select_property("op"), result_op}) {
    EXPECT_FALSE(property.contains("enum")) << property.dump();
  }
  const std::regex bench(select_property("benchmark").at("pattern").get<std::string>());
  const std::regex op(select_property("op").at("pattern").get<std::string>());
  const std::regex result(result_op.at("pattern").get<std::string>());
  for (const auto& w : all_collectives()) {
    const std::string b{w.bench};
    const std::string o{w.name};
    EXPECT_TRUE(std::regex_search(b, bench)) << b;
    EXPECT_TRUE(std::regex_search(o, op)) << o;
    EXPECT_TRUE(std::regex_search(o, result)) << o;
  }
}

TEST(ProfileSchema, DtypeNamesAreTheTypeTableAndItsAliases) {
  const auto names = select_enum("dtype");
  for (const DType t : all_dtypes()) {
    EXPECT_TRUE(names.contains(std::string(name(t)))) << name(t);
  }
  for (const auto& n : names) {
    EXPECT_TRUE(parse_dtype(n).has_value()) << n << " is in the schema but no dtype the reader knows";
  }
}

}  // namespace
}  // namespace ccbench
