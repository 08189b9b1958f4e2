#pragma once
// `ccbench-report accept FILE... --profile P`: checks from a profile (profiles/*.json, format in
// profiles/README.md) against results; PASS/FAIL per check naming the failing host/GPU/NIC/group;
// JUnit XML. Thresholds gate one size each, never an average over sizes (DESIGN §4).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ccbench/collective.hpp"
#include "ccbench/report/evidence.hpp"
#include "ccbench/report/input.hpp"
#include "ccbench/types.hpp"

namespace ccbench::report {

inline constexpr std::string_view kProfileName = "ccbench.accept";
inline constexpr int kProfileMajorVersion = 1;  // profile_version "1.x.y" is read; other majors are refused

enum class CheckKind { Busbw, NoWrongElements, NoTimedOut, NoFailed, Counters, Links };
/// "busbw", "no_wrong_elements", "no_timed_out", "no_failed", "counters", "links".
std::string_view name(CheckKind kind);

/// What a miss of a check is (the profile's "level"): Critical (the default) fails the verdict; Warning is said, with
/// its next step, and alone exits 0.
enum class CheckLevel { Critical, Warning };
/// "critical", "warning".
std::string_view name(CheckLevel level);

/// Which result rows a check looks at; an unset field matches every row.
struct RowFilter {
  std::optional<std::string> benchmark;  // allreduce_bench
  std::optional<std::string> backend;    // mpi | nccl
  std::optional<Collective> op;
  std::optional<DType> dtype;
  std::optional<ReduceOp> redop;
  std::optional<bool> in_place;
  std::vector<std::string> groups;  // group kinds (world, node, cross-node, rail, pair); empty = any
  std::optional<int> ranks;         // ranks in the group
  std::optional<int> nodes;         // hosts the group spans
};

/// A counters check's bound on one counter's rate: at most `max` per `per` ("second", "minute", "hour", or "GB"
/// moved by the same device; TCP's per GB the host's network devices moved, lo left out).
struct RateBound {
  std::string counter;  // "symbol_error", "RetransSegs": a counter of any source with this name
  double max = 0;
  std::string per;
};

/// One check of a profile.
struct AcceptCheck {
  std::string id;
  CheckKind kind = CheckKind::NoFailed;
  std::string description;  // from the profile, or "" (a description is then generated)
  std::string source;       // a key of Profile::sources, or ""
  std::string note;         // how the threshold was chosen or derived, in words
  CheckLevel level = CheckLevel::Critical;
  RowFilter select;
  // busbw
  std::uint64_t size_bytes = 0;
  std::optional<double> min_GBps;
  std::optional<double> min_pct_of_peak;
  int min_groups = 0;  // at least this many distinct groups at that size (0: any number, at least one)
  // no_wrong_elements
  bool require_checked = false;  // rows that were not verified (-c 0) fail the check
  // counters: the fabric evidence of every host of every run (result schema 1.8.0)
  std::vector<std::string> fatal;  // counters that fail the check when they move at all
  std::vector<RateBound> rates;
  // links
  bool one_firmware_per_model = true;  // every port of an HCA model runs one firmware version, across the hosts
};

/// Where a threshold comes from: a publication, or how it was derived.
struct ProfileSource {
  std::string title;
  std::string url;   // may be ""
  std::string says;  // what the source states, in words
  std::string note;  // how the profile uses it
};

struct Profile {
  std::string path;     // as given
  std::string id;       // "h100-sxm-8gpu": JUnit classname ccbench.accept.<id>
  std::string version;  // profile_version
  std::string name;
  std::string description;
  std::map<std::string, ProfileSource> sources;
  std::vector<AcceptCheck> checks;
  std::string validity;                    // "24h": how long a verdict is trusted; "" for no expiry
  std::optional<std::int64_t> validity_s;  // the same in seconds
};

/// Throws InputError (file + JSON pointer + what was expected) on a malformed profile.
Profile load_profile(const std::filesystem::path& path);
/// The same, from text; `name` is used in error messages.
Profile parse_profile(const std::string& text, const std::string& name);

/// "allreduce_bench group world|node of 8 ranks"; "every result" when the filter is empty.
std::string describe(const RowFilter& filter);
/// What a check asks, in words: its description, or one made from its fields.
std::string describe(const AcceptCheck& check);
/// A busbw check's thresholds: ">= 460 GB/s, in >= 4 groups".
std::string threshold_text(const AcceptCheck& check);

/// Waived: a FAIL for evidence the check did not have (nothing matched, a host unread, a counter unjudgeable),
/// which the operator accepted by name with --waive-unjudged; never a PASS, listed as such and exit 0 for it.
/// Warning: a check of level warning that missed (or lacked its evidence): said with its next step, never a PASS,
/// exit 0 for it.
enum class CheckVerdict { Pass, Fail, Waived, Warning };

struct CheckOutcome {
  std::string id;           // the check's id in the profile
  std::string kind;         // "busbw", ...
  std::string description;  // what it asks, in words: "allreduce_bench busbw at 16 GiB >= 460 GB/s"
  CheckVerdict verdict = CheckVerdict::Fail;
  std::string measured;     // the worst measured value, or "" when nothing matched
  std::string threshold;    // ">= 460 GB/s", "0 wrong elements"
  std::string culprit;      // who failed: "group pair:2-3, ranks 2,3 on vm", "" on pass
  std::string detail;       // one line: why it failed, or what it looked at
  std::string source;       // where the threshold comes from: the source's title and URL, or ""
  EvidenceRuling evidence;  // Fail (or Overridden, WAIVED) for evidence it lacked, not for evidence against
  CheckLevel level = CheckLevel::Critical;
  std::string next_step;  // what an operator does about a miss, from what the evidence shows; "" on a pass
};

std::vector<CheckOutcome> evaluate(const Profile& profile, const std::vector<LoadedRun>& runs);
/// True when no check FAILed (every one passed or was waived; the exit code is 0 then).
bool all_passed(const std::vector<CheckOutcome>& outcomes);
/// --waive-unjudged ID[,ID...] or all: each named check that FAILed only for evidence it lacked becomes WAIVED, its
/// detail saying so; a check that failed on its evidence stays FAIL. Throws UsageError for an id the profile lacks.
void waive_unjudged(std::vector<CheckOutcome>& outcomes, const std::vector<std::string>& ids);

/// What `accept` renders in every format: the profile and each check's outcome. The terminal and Markdown
/// tables end in "N checks: P passed, F failed"; JUnit XML has one testsuite for the profile and one testcase
/// per check, <failure> for FAIL.
struct AcceptVerdict {
  Profile profile;
  std::vector<CheckOutcome> outcomes;
  std::optional<std::string> valid_until;  // the profile's validity after the oldest run judged (RFC 3339, UTC)
};

/// How old the operator lets a result be (accept --max-age 24h): results that ended longer ago than `max_age_s`
/// before `now_s` (seconds since the epoch), or that hold no time, are stale: the evidence rule refuses the verdict
/// (NoVerdictError: one line naming the oldest, exit 2).
void refuse_stale(const std::vector<LoadedRun>& runs, std::int64_t max_age_s, std::int64_t now_s);
/// Until when a verdict of `profile` on `runs` is trusted: the oldest run's end plus the profile's validity, as
/// "2026-11-23T07:38:06Z"; unset when the profile sets none. A run with no time under a validity is stale (exit 2).
std::optional<std::string> valid_until(const Profile& profile, const std::vector<LoadedRun>& runs);
/// Seconds since the epoch of "2026-11-22T07:38:06.916Z" (a result's started_utc/ended_utc; the fraction is
/// dropped); unset for anything else.
std::optional<std::int64_t> epoch_of(std::string_view utc);
/// "24h", "90m", "7d", "3600s" as seconds; unset for anything else.
std::optional<std::int64_t> parse_age(std::string_view text);

}  // namespace ccbench::report
