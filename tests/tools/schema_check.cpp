// ccbench_schema_check SCHEMA FILE...: the model's JSON Schema validator on each file, one line each:
// "FILE<TAB>valid", "FILE<TAB>invalid<TAB>/pointer: message" or "FILE<TAB>unreadable<TAB>why". For the
// test that it gives the verdicts Python's jsonschema gives (schema_agreement_test.py). Exit 2 when the
// schema itself cannot be read or uses a keyword the validator does not implement.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "ccbench/json_schema.hpp"
#include "ccbench/text.hpp"

namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("cannot open");
  }
  return nlohmann::json::parse(in);
}

}  // namespace

int main(int argc, char** argv) {
  const std::span<char*> args(argv, static_cast<std::size_t>(argc));
  if (args.size() < 2) {
    fmt::print(stderr, "usage: ccbench_schema_check SCHEMA FILE...\n");
    return 2;
  }
  std::optional<ccbench::JsonSchema> schema;
  try {
    schema.emplace(read_json(args[1]));
  } catch (const std::exception& e) {
    fmt::print(stderr, "ccbench_schema_check: {}: {}\n", args[1], e.what());
    return 2;
  }
  for (const char* path : args.subspan(2)) {
    try {
      const auto problem = schema->first_problem(read_json(path));
      if (problem) {
        fmt::print("{}\tinvalid\t{}: {}\n", path, problem->pointer, problem->message);
      } else {
        fmt::print("{}\tvalid\n", path);
      }
    } catch (const std::exception& e) {
      fmt::print("{}\tunreadable\t{}\n", path, ccbench::printable(e.what()));
    }
  }
  return 0;
}
