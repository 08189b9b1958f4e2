#pragma once
// The evidence rule (README "The evidence rule: what each verdict needs"), in the one place every judge goes through:
// a verdict never passes on evidence it does not have. A judge says what its evidence lacks, as gaps; the rule says
// what that makes of the verdict (FAIL or NO VERDICT, never PASS or "nothing found"), with which word and exit code,
// and what an operator's flag may change, which the verdict then records.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ccbench/errors.hpp"

namespace ccbench::report {

/// How a judge's evidence falls short.
enum class Lack {
  Absent,        // not there: no result matched, a host without its reading, a pair or a bench not measured
  Unjudgeable,   // there, but nothing can be drawn from it: a counter that went back, one launch a side, two hosts
  Inconsistent,  // it contradicts itself or the run: a host read twice, a reading of a host the run lacks, a file
                 // in a result folder that is not a result, two names of one machine
  Stale,         // older than the operator trusts (accept --max-age), or of no known age: any verdict is refused
};
std::string_view name(Lack lack);  // "absent", "unjudgeable", "inconsistent", "stale"

/// One thing a verdict lacked, in the verdict's own words.
struct Gap {
  Lack lack = Lack::Absent;
  std::string what;
};

/// What a verdict is for. An acceptance must show that something passes (accept's checks): lacking evidence, it
/// FAILs. A comparison must show a change or the absence of one (compare, regression, fleet): lacking evidence, it
/// has NO VERDICT.
enum class Stakes { Acceptance, Comparison };

/// What the rule makes of a verdict's evidence.
enum class Ruling {
  Judged,      // nothing lacked: the judge's own verdict stands (PASS or FAIL, SAME or SLOWER, named or not)
  Fail,        // an acceptance that lacked evidence: FAIL, exit 1
  NoVerdict,   // a comparison that lacked evidence: NO VERDICT, exit 2
  Overridden,  // it lacked, and the operator's flag accepted that: an acceptance is WAIVED (exit 0 for it, never a
               // PASS), a comparison judges the evidence it has (fleet --partial); the verdict records the flag
};

struct EvidenceRuling {
  Stakes stakes = Stakes::Acceptance;
  Ruling ruling = Ruling::Judged;
  std::vector<Gap> gaps;      // what the evidence lacked, as the judge said it; empty when Judged
  std::string overridden_by;  // the operator's flag, when Overridden

  [[nodiscard]] bool lacked() const { return !gaps.empty(); }
  /// The verdict's word for it: "FAIL", "NO VERDICT", "WAIVED" (an acceptance overridden), "" (judged, or a
  /// comparison overridden: the judge's own words follow).
  [[nodiscard]] std::string_view word() const;
  /// The exit code: the judge's own (`judged`) when Judged or Overridden, 1 for Fail, 2 for NoVerdict.
  [[nodiscard]] int exit_code(int judged) const;
};

/// The rule. No gap: Judged. A gap: Fail (an acceptance) or NoVerdict (a comparison), unless `override_flag` names
/// the flag with which the operator accepted the lack ("--waive-unjudged", "--partial"; "" for none): Overridden.
/// A stale gap is NoVerdict whatever the stakes and the flag: a verdict on evidence too old is not drawn at all
/// (run again), so that a stale PASS is never re-used and a stale FAIL never drains a repaired node.
EvidenceRuling rule_on(Stakes stakes, std::vector<Gap> gaps, std::string_view override_flag = {});

/// A comparison's NO VERDICT where the judge stops at it (compare with no row in common, a fleet with pairs missing):
/// exit 2 and its first gap as the one line, before anything is printed. A UsageError, as bad input is.
class NoVerdictError : public UsageError {
 public:
  explicit NoVerdictError(const EvidenceRuling& ruling);
};

/// Throws NoVerdictError when the ruling is NoVerdict; returns it otherwise.
EvidenceRuling stop_at_no_verdict(EvidenceRuling ruling);

}  // namespace ccbench::report
