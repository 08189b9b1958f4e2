// ccbench-report get: what the workflow scripts read out of verdicts, profiles and results.
#include "ccbench/report/json_get.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ccbench/errors.hpp"

namespace ccbench::report {
namespace {

using Lines = std::vector<std::string>;

const nlohmann::json kDoc = nlohmann::json::parse(R"({
  "id": "mpi-host-smoke", "failed": 1, "ok": true, "none": null,
  "counts": {"rows": 18, "slower": 2},
  "checks": [
    {"id": "no-failed", "kind": "no_failed", "verdict": "pass"},
    {"id": "ar-busbw", "kind": "busbw", "size": "512K", "select": {"benchmark": "allreduce_bench", "backend": "mpi"},
     "verdict": "fail"}
  ],
  "a/b": {"c~d": "escaped"}
})");

Lines get(const std::string& pointer, GetOptions options = {}) { return json_get(kDoc, pointer, options); }

TEST(JsonGet, ScalarsAsTextAndArraysAsLines) {
  EXPECT_EQ(get("/id"), Lines{"mpi-host-smoke"});
  EXPECT_EQ(get("/failed"), Lines{"1"});
  EXPECT_EQ(get("/ok"), Lines{"true"});
  EXPECT_EQ(get("/none"), Lines{"null"});
  EXPECT_EQ(get("/counts/slower"), Lines{"2"});
  EXPECT_EQ(get("/counts"), Lines{R"({"rows":18,"slower":2})"});
  EXPECT_EQ(get("/checks/1/id"), Lines{"ar-busbw"});
  EXPECT_EQ(get("/checks").size(), 2U);  // an array named whole: a line per element
  EXPECT_EQ(get("/a~1b/c~0d"), Lines{"escaped"});
}

TEST(JsonGet, WildcardsAndFields) {
  EXPECT_EQ(get("/checks/*/id"), (Lines{"no-failed", "ar-busbw"}));
  EXPECT_EQ(get("/checks/*/select/backend"), Lines{"mpi"});  // under * a missing member is left out
  GetOptions fields;
  fields.fields = {"/id", "/verdict", "/select/benchmark"};
  EXPECT_EQ(get("/checks/*", fields), (Lines{"no-failed\tpass\t", "ar-busbw\tfail\tallreduce_bench"}));
  fields.fields = {"/rows", "/slower", "/same"};
  EXPECT_EQ(get("/counts", fields), Lines{"18\t2\t"});
}

TEST(JsonGet, NothingThereIsAnErrorUnlessAllowed) {
  EXPECT_THROW(get("/nope"), UsageError);
  EXPECT_THROW(get("/checks/2/id"), UsageError);
  EXPECT_THROW(get("/checks/01"), UsageError);  // no leading zeros (RFC 6901)
  EXPECT_THROW(get("id"), UsageError);          // a pointer starts with '/'
  EXPECT_THROW(get("/a~2b"), UsageError);       // ~ escapes only 0 and 1
  GetOptions ok;
  ok.missing_ok = true;
  EXPECT_EQ(get("/nope", ok), Lines{});
  EXPECT_EQ(get("/nope/deeper", ok), Lines{});
}

// Issue 35: a 200 KB document nested 100,000 deep crashed `get` (SIGSEGV); it is refused as it is parsed.
TEST(JsonGet, DeepNestingIsRefusedNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  try {
    (void)parse_json_text(deep, "deep.json");
    FAIL() << "a document nested 100,000 deep was read";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "deep.json: nested deeper than 64 levels: not a JSON file ccbench reads");
  }
  const std::string ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_EQ(parse_json_text(ok, "ok.json").dump(), ok);
  EXPECT_THROW((void)parse_json_text("{", "cut.json"), UsageError);
}

}  // namespace
}  // namespace ccbench::report
