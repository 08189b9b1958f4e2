#pragma once
// What the accept tests (accept_test.cpp, accept_profile_test.cpp, accept_fabric_test.cpp) share: where the real
// result files and the shipped profiles are, and a profile of one check evaluated on runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ccbench/report/accept.hpp"

namespace ccbench::report::accept_test {

using nlohmann::json;

inline const std::filesystem::path kRuns = std::filesystem::path(CCBENCH_REPORT_DATA) / "runs";
inline const std::filesystem::path kProfiles = CCBENCH_PROFILES_DIR;

inline LoadedRun run_of(const std::string& file) { return read_result_file(kRuns / file); }

/// A profile with one check, from JSON.
inline Profile one_check(const json& check) {
  const json doc = {{"profile", "ccbench.accept"},
                    {"profile_version", "1.0.0"},
                    {"id", "test"},
                    {"name", "test profile"},
                    {"checks", json::array({check})}};
  return parse_profile(doc.dump(), "test.json");
}

inline CheckOutcome check_one(const json& check, const std::vector<LoadedRun>& runs) {
  const auto outcomes = evaluate(one_check(check), runs);
  EXPECT_EQ(outcomes.size(), 1U);
  return outcomes.at(0);
}

inline const CheckOutcome& find(const std::vector<CheckOutcome>& outcomes, const std::string& id) {
  const auto it = std::find_if(outcomes.begin(), outcomes.end(), [&](const auto& o) { return o.id == id; });
  EXPECT_NE(it, outcomes.end()) << id;
  return *it;
}

}  // namespace ccbench::report::accept_test
