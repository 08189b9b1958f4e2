#pragma once
// Internal to the accept command: what accept.cpp's row checks, accept_naming.cpp's naming and accept_fabric.cpp's
// fabric checks share.
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/report/accept.hpp"

namespace ccbench::report::detail {

/// Culprits named in one outcome at most; more are counted ("and N more").
inline constexpr std::size_t kMaxCulprits = 4;

/// What the input holds, for "no result matched": "allreduce_bench mpi world of 4 ranks, ...".
std::string input_summary(const std::vector<LoadedRun>& runs);
/// Up to kMaxCulprits items, then "and N more".
std::string capped(const std::vector<std::string>& items, std::string_view sep);

/// One result row and the run it came from.
struct Row {
  const LoadedRun* run = nullptr;
  const CaseResult* r = nullptr;
  bool show_run = false;  // several runs: name the run in labels
};

/// "group pair:2-3 (ranks 2,3 on node7: GPU2 0000:1b:00.0, GPU3 0000:29:00.0)", as tables name groups.
std::string describe_group(const Row& row);
/// "all_reduce float32 256 MiB out-of-place" (with the run's name when several runs are read).
std::string case_label(const Row& row);

/// The verdict of a check that found nothing against it: PASS on whole evidence, else as the evidence rule has it
/// (FAIL; WAIVED where the operator's flag accepted the lack).
CheckVerdict verdict_on(const EvidenceRuling& evidence);
/// A check without its evidence: its outcome as the evidence rule has it, the first gap its detail.
void lacked(CheckOutcome& out, std::vector<Gap> gaps);

/// Next steps (accept_next.cpp): what an operator does about a counter that rose, a link below its capability (or
/// not ACTIVE), HCAs on several firmware versions, a row with wrong elements, failed or timed out (or not verified).
std::string step_for_counter(const std::string& host, const std::string& device, const std::string& counter);
std::string step_for_link(const std::string& host, const LinkState& link, bool inactive);
std::string step_for_firmware(const std::string& model);
std::string step_for_rows(CheckKind kind, const std::string& first, bool unverified);
/// After every check of `profile` was evaluated (outcomes in its order): the steps that depend on the evidence
/// lacked or on another check (a low busbw with the links at capability), and each check's level (a warning-level
/// miss becomes WARNING).
void finish(const Profile& profile, std::vector<CheckOutcome>& outcomes);

/// kind counters and kind links: the fabric evidence of every host of every run (result schema 1.8.0).
void evaluate_counters(const AcceptCheck& check, const std::vector<LoadedRun>& runs, CheckOutcome& out);
void evaluate_links(const AcceptCheck& check, const std::vector<LoadedRun>& runs, CheckOutcome& out);

}  // namespace ccbench::report::detail
