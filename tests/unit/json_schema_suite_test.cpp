// The JSON Schema validator (model/src/json_schema.cpp) against the official JSON-Schema-Test-Suite
// (Debian's json-schema-test-suite, /usr/share/json-schema-test-suite), for every keyword it implements.
// The package has no 2020-12 folder; draft 7 is the newest, and for these keywords 2020-12 changed only
// what the deviations below name. A group whose schema uses a keyword we do not implement (the validator
// refuses it when built) is counted as skipped, with the keyword; draft 7's "definitions" is read as
// "$defs". A test whose verdict differs must be one of kDeviations, and each must still occur.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "ccbench/json_schema.hpp"

namespace ccbench {
namespace {

const std::filesystem::path kSuite = "/usr/share/json-schema-test-suite/tests/draft7";

/// The suite's file for a keyword the validator implements (the suite has one file a keyword).
std::string suite_file(std::string_view keyword) {
  if (keyword == "$ref") {
    return "ref";
  }
  return keyword == "if" ? "if-then-else" : std::string(keyword);
}

// "file: group / test" -> why our verdict differs from the suite's, on purpose. The other one we know of
// (1.0 is no "integer" here, stricter than the standard) has no test in json-schema-test-suite 2.0.0;
// tests/tools/schema_agreement_test.py shows it against Python's jsonschema.
const std::map<std::string, std::string> kDeviations = {
    {"ref: ref overrides any sibling keywords / ref valid, maxItems ignored",
     "2020-12 applies the keywords beside a $ref (we do, as Python's Draft202012Validator does); draft 7 ignored them"},
};

/// Draft 7's "definitions" is 2020-12's "$defs": renamed, with the $refs into it, so $ref is tested too.
nlohmann::json as_2020_12(nlohmann::json schema) {
  if (schema.is_object()) {
    if (schema.contains("definitions")) {
      schema["$defs"] = schema["definitions"];
      schema.erase("definitions");
    }
    if (schema.contains("$ref") && schema["$ref"].is_string()) {
      auto ref = schema["$ref"].get<std::string>();
      if (ref.starts_with("#/definitions/")) {
        schema["$ref"] = "#/$defs/" + ref.substr(14);
      }
    }
  }
  if (schema.is_structured()) {
    for (auto& child : schema) {
      child = as_2020_12(child);
    }
  }
  return schema;
}

struct Tally {
  int groups = 0;
  int tests = 0;
  int agreed = 0;
  std::map<std::string, int> skipped;  // why -> groups
};

TEST(JsonSchemaSuite, AgreesOnEveryKeywordItImplements) {
  if (!std::filesystem::is_directory(kSuite)) {
    GTEST_SKIP() << kSuite << " is missing (apt-get install json-schema-test-suite)";
  }
  std::set<std::string> deviations_seen;
  std::map<std::string, Tally> tally;
  int total_tests = 0;
  for (const auto keyword : implemented_keywords()) {
    const std::string file = suite_file(keyword);
    std::ifstream in(kSuite / (file + ".json"));
    ASSERT_TRUE(in) << file;
    Tally& t = tally[file];
    for (const auto& group : nlohmann::json::parse(in)) {
      const auto group_name = group.at("description").get<std::string>();
      std::optional<JsonSchema> schema;
      try {
        schema.emplace(as_2020_12(group.at("schema")));
      } catch (const std::invalid_argument& e) {
        std::string why = e.what();
        why = why.substr(why.find(": ") + 2);  // "keyword 'definitions' is not implemented by this reader"
        t.skipped[why] += 1;
        continue;
      }
      t.groups += 1;
      for (const auto& test : group.at("tests")) {
        const std::string name =
            fmt::format("{}: {} / {}", file, group_name, test.at("description").get<std::string>());
        const bool expected = test.at("valid").get<bool>();
        const auto problem = schema->first_problem(test.at("data"));
        t.tests += 1;
        ++total_tests;
        if (problem.has_value() != expected) {
          t.agreed += 1;
        } else if (kDeviations.contains(name)) {
          deviations_seen.insert(name);
        } else {
          ADD_FAILURE() << name << ": the suite says " << (expected ? "valid" : "invalid") << ", we say "
                        << (problem ? "invalid (" + problem->pointer + ": " + problem->message + ")" : "valid");
        }
      }
    }
  }
  for (const auto& [name, why] : kDeviations) {
    EXPECT_TRUE(deviations_seen.contains(name)) << "listed deviation no longer occurs: " << name;
  }
  for (const auto& [file, t] : tally) {
    EXPECT_GT(t.groups, 0) << file << ": every group was skipped, so the keyword went untested";
    std::string skips;
    for (const auto& [why, n] : t.skipped) {
      skips += fmt::format("; {} group(s) skipped: {}", n, why);
    }
    fmt::print("{:<22} {:>2} group(s), {:>3} of {:>3} test(s) agree{}\n", file, t.groups, t.agreed, t.tests, skips);
  }
  fmt::print("{} deviation(s) on purpose, each still seen; {} test(s) run\n", deviations_seen.size(), total_tests);
  EXPECT_GT(total_tests, 150);  // the suite was read, not an empty folder
}

}  // namespace
}  // namespace ccbench
