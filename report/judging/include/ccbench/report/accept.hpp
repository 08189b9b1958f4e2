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
enum class CheckVerdict { Pass, Fail, Waived };

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
};

}  // namespace ccbench::report
