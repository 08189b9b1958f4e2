#include "ccbench/report/evidence.hpp"

#include <algorithm>
#include <utility>

namespace ccbench::report {

std::string_view name(Lack lack) {
  switch (lack) {
    case Lack::Absent:
      return "absent";
    case Lack::Unjudgeable:
      return "unjudgeable";
    case Lack::Inconsistent:
      return "inconsistent";
    case Lack::Stale:
      return "stale";
  }
  return "absent";
}

std::string_view EvidenceRuling::word() const {
  switch (ruling) {
    case Ruling::Judged:
      return "";
    case Ruling::Fail:
      return "FAIL";
    case Ruling::NoVerdict:
      return "NO VERDICT";
    case Ruling::Overridden:
      return stakes == Stakes::Acceptance ? "WAIVED" : "";
  }
  return "";
}

int EvidenceRuling::exit_code(int judged) const {
  switch (ruling) {
    case Ruling::Judged:
    case Ruling::Overridden:
      return judged;
    case Ruling::Fail:
      return kExitFailure;
    case Ruling::NoVerdict:
      return kExitUsage;
  }
  return kExitFailure;
}

EvidenceRuling rule_on(Stakes stakes, std::vector<Gap> gaps, std::string_view override_flag) {
  EvidenceRuling out;
  out.stakes = stakes;
  out.gaps = std::move(gaps);
  const bool stale = std::any_of(out.gaps.begin(), out.gaps.end(), [](const Gap& g) { return g.lack == Lack::Stale; });
  if (out.gaps.empty()) {
    out.ruling = Ruling::Judged;
  } else if (stale) {
    out.ruling = Ruling::NoVerdict;
  } else if (!override_flag.empty()) {
    out.ruling = Ruling::Overridden;
    out.overridden_by = override_flag;
  } else {
    out.ruling = stakes == Stakes::Acceptance ? Ruling::Fail : Ruling::NoVerdict;
  }
  return out;
}

NoVerdictError::NoVerdictError(const EvidenceRuling& ruling)
    : UsageError(ruling.gaps.empty() ? std::string{"no verdict"} : ruling.gaps.front().what) {}

EvidenceRuling stop_at_no_verdict(EvidenceRuling ruling) {
  if (ruling.ruling == Ruling::NoVerdict) {
    throw NoVerdictError(ruling);
  }
  return ruling;
}

}  // namespace ccbench::report
