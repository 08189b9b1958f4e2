#pragma once
// What `baseline` writes: the learned floors as an acceptance profile (profile_version 1.2.0, with its `baseline`
// provenance), and the summary it prints. The floors are decided in judging/ (baseline.hpp); here they are said.
#include <nlohmann/json.hpp>
#include <string>

#include "ccbench/report/baseline.hpp"

namespace ccbench::report {

/// The profile version that first holds `baseline` (a profile's provenance when it was learned from a fleet).
inline constexpr std::string_view kBaselineProfileVersion = "1.2.0";

/// The profile: one busbw check per learned floor (select, size, min_GBps, source, note) and `baseline`: the method,
/// the results it came from (how many, the files, the hosts, when, the software) and per check the fit, the hosts
/// and those left out; the checks not learned, with why. `id` and `name` are the profile's.
nlohmann::ordered_json baseline_profile(const Baseline& baseline, const std::string& id, const std::string& name);

/// For the terminal: per check its floor against the centre, the hosts left out and why; the checks not learned.
std::string baseline_summary(const Baseline& baseline, const std::string& written_to);

}  // namespace ccbench::report
