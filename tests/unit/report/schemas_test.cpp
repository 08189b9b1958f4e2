// The acceptance-profile schema (report/schema/ccbench.accept.schema.json) copies the names of the
// workload and type tables; these tests fail when a table gains or loses a name the schema does not.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "ccbench/collective.hpp"
#include "ccbench/types.hpp"

namespace ccbench {
namespace {

const std::filesystem::path kSchema =
    std::filesystem::path(CCBENCH_SOURCE_DIR) / "report/schema/ccbench.accept.schema.json";

std::set<std::string> select_enum(const std::string& key) {
  std::ifstream in(kSchema);
  const auto schema = nlohmann::json::parse(in);
  const auto names = schema.at("$defs").at("select").at("properties").at(key).at("enum");
  return {names.begin(), names.end()};
}

TEST(ProfileSchema, BenchAndOpNamesAreTheWorkloadTables) {
  std::set<std::string> benches;
  std::set<std::string> ops;
  for (const auto& w : all_collectives()) {
    benches.emplace(w.bench);
    ops.emplace(w.name);
  }
  EXPECT_EQ(select_enum("benchmark"), benches);
  EXPECT_EQ(select_enum("op"), ops);
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
